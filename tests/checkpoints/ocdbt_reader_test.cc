// The OCDBT reader against TensorStore's own database
// (tests/testdata/ocdbt_tree, made by make_ocdbt_testdata.py: a B+tree of
// height 4, 40 generations, zstd nodes, inline and out-of-line values), and
// hostile databases: bytes of that one damaged, and small trees built here
// byte by byte (cyclic, shared subtrees, paths leaving the database).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "t5xx/checkpoints/orbax/ocdbt_format.h"
#include "t5xx/checkpoints/orbax/ocdbt_reader.h"
#include "test_util.h"

namespace t5xx::checkpoints {
namespace {

namespace fs = std::filesystem;
using t5xx::testing::TempDir;

const fs::path kTree = fs::path(T5XX_SOURCE_DIR) / "tests/testdata/ocdbt_tree";

std::string Hex(const std::vector<uint8_t>& bytes) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s += d[b >> 4];
    s += d[b & 15];
  }
  return s;
}

std::vector<uint8_t> Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void Spit(const fs::path& p, const std::vector<uint8_t>& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

TEST(OcdbtReaderTest, ReadsWhatTensorStoreWrote) {
  std::ifstream in(kTree / "expected.json");
  const nlohmann::json expected = nlohmann::json::parse(in).at("keys");
  OcdbtReader reader(kTree / "db");
  ASSERT_EQ(reader.entries().size(), expected.size());
  size_t inline_values = 0;
  for (const auto& [key, hex] : expected.items()) {
    ASSERT_TRUE(reader.Contains(key)) << key;
    EXPECT_EQ(Hex(reader.Read(key)), hex.get<std::string>()) << key;
    inline_values += reader.entries().at(key).is_inline;
  }
  // Both kinds of value occur (max_inline_value_bytes = 16).
  EXPECT_GT(inline_values, 0u);
  EXPECT_LT(inline_values, expected.size());
  EXPECT_ERROR_CONTAINS(reader.Read("target.layer_010.kernel/1.0"), "has no key");
}

// A copy of the TensorStore database to damage.
fs::path CopyTree(const TempDir& tmp) {
  const fs::path db = fs::path(tmp.path) / "db";
  fs::copy(kTree / "db", db, fs::copy_options::recursive);
  return db;
}

// The data file holding the root node (the manifest's only file).
fs::path RootFile(const fs::path& db) {
  OcdbtReader reader(db);  // valid before damage
  fs::path newest;
  fs::file_time_type newest_time;
  for (const auto& f : fs::directory_iterator(db / "d")) {
    if (newest.empty() || f.last_write_time() > newest_time) {
      newest = f.path();
      newest_time = f.last_write_time();
    }
  }
  return newest;
}

TEST(OcdbtReaderTest, RefusesDamagedFilesNamingThem) {
  TempDir tmp;
  const fs::path db = CopyTree(tmp);
  std::vector<uint8_t> manifest = Slurp(db / "manifest.ocdbt");
  Spit(db / "manifest.ocdbt", std::vector<uint8_t>(manifest.begin(), manifest.end() - 7));
  EXPECT_ERROR_CONTAINS(OcdbtReader{db}, "manifest.ocdbt (OCDBT manifest): OCDBT manifest says it has");
  std::vector<uint8_t> flipped = manifest;
  flipped[flipped.size() / 2] ^= 0x40;
  Spit(db / "manifest.ocdbt", flipped);
  EXPECT_ERROR_CONTAINS(OcdbtReader{db}, "fails its CRC-32C check");
  std::vector<uint8_t> magic = manifest;
  magic[0] = 0x7f;
  Spit(db / "manifest.ocdbt", magic);
  EXPECT_ERROR_CONTAINS(OcdbtReader{db}, "not an OCDBT manifest");
  Spit(db / "manifest.ocdbt", manifest);
  // Every data file, emptied in turn: each error names that file, and every
  // file holding a value of the newest version is refused.
  std::set<std::string> value_files;
  const OcdbtReader intact(db);
  for (const auto& [key, value] : intact.entries()) {
    if (!value.is_inline) value_files.insert(fs::path(value.file).filename().string());
  }
  size_t refused = 0;
  for (const auto& f : fs::directory_iterator(db / "d")) {
    const std::vector<uint8_t> bytes = Slurp(f.path());
    Spit(f.path(), {});
    const std::string error = t5xx::testing::ErrorOf([&] {
      OcdbtReader reader(db);
      for (const auto& [key, value] : reader.entries()) reader.Read(key);
    });
    if (error != "<no t5xx::Error>") {
      ++refused;
      EXPECT_NE(error.find(f.path().filename().string()), std::string::npos) << error;
    } else {
      EXPECT_EQ(value_files.count(f.path().filename().string()), 0u) << f.path();
    }
    Spit(f.path(), bytes);
  }
  // Files that only older generations use are never read.
  EXPECT_GE(refused, value_files.size());
  EXPECT_GT(value_files.size(), 5u);
  fs::remove(RootFile(db));
  EXPECT_ERROR_CONTAINS(OcdbtReader{db}, "cannot open");
}

// Small databases built byte by byte: one data file "d/f" holding a leaf
// (at 0) and an interior node, and a manifest whose root is the interior
// node (height 1) unless `root_is_leaf`.
struct Builder {
  std::vector<uint8_t> Leaf(const std::vector<std::string>& keys, const std::string& file) {
    std::vector<uint8_t> b{0};  // height
    ocdbt::AppendDataFileTable(b, {file});
    ocdbt::AppendVarint(b, keys.size());
    for (size_t i = 1; i < keys.size(); ++i) ocdbt::AppendVarint(b, 0);
    for (const auto& k : keys) ocdbt::AppendVarint(b, k.size());
    for (const auto& k : keys) b.insert(b.end(), k.begin(), k.end());
    for (size_t i = 0; i < keys.size(); ++i) ocdbt::AppendVarint(b, 3);  // value length
    for (size_t i = 0; i < keys.size(); ++i) ocdbt::AppendVarint(b, 1);  // out of line
    for (size_t i = 0; i < keys.size(); ++i) ocdbt::AppendVarint(b, 0);  // file 0
    for (size_t i = 0; i < keys.size(); ++i) ocdbt::AppendVarint(b, 0);  // offset 0
    return ocdbt::EncodeEnvelope(ocdbt::kBtreeNodeMagic, b);
  }
  // Children: (key, offset, length) in "d/f".
  std::vector<uint8_t> Interior(const std::vector<std::tuple<std::string, uint64_t, uint64_t>>& c) {
    std::vector<uint8_t> b{1};
    ocdbt::AppendDataFileTable(b, {"d/f"});
    ocdbt::AppendVarint(b, c.size());
    for (size_t i = 1; i < c.size(); ++i) ocdbt::AppendVarint(b, 0);
    for (const auto& x : c) ocdbt::AppendVarint(b, std::get<0>(x).size());
    for (size_t i = 0; i < c.size(); ++i) ocdbt::AppendVarint(b, 0);  // common prefix
    for (const auto& x : c) b.insert(b.end(), std::get<0>(x).begin(), std::get<0>(x).end());
    for (size_t i = 0; i < c.size(); ++i) ocdbt::AppendVarint(b, 0);  // file id
    for (const auto& x : c) ocdbt::AppendVarint(b, std::get<1>(x));
    for (const auto& x : c) ocdbt::AppendVarint(b, std::get<2>(x));
    for (int col = 0; col < 3; ++col) {
      for (size_t i = 0; i < c.size(); ++i) ocdbt::AppendVarint(b, 1);
    }
    return ocdbt::EncodeEnvelope(ocdbt::kBtreeNodeMagic, b);
  }
  void Write(const fs::path& db, const std::vector<uint8_t>& data, uint64_t root_offset,
             uint64_t root_length, int root_height, uint64_t manifest_kind = 0) {
    Spit(db / "d/f", data);
    std::vector<uint8_t> m(16, 0xab);
    ocdbt::AppendVarint(m, manifest_kind);
    ocdbt::AppendVarint(m, 100);
    ocdbt::AppendVarint(m, 1 << 20);
    m.push_back(4);
    ocdbt::AppendVarint(m, 0);
    ocdbt::AppendDataFileTable(m, {"d/f"});
    for (uint64_t v : {uint64_t{1}, uint64_t{1}}) ocdbt::AppendVarint(m, v);  // 1 version, gen 1
    m.push_back(static_cast<uint8_t>(root_height));
    for (uint64_t v : {uint64_t{0}, root_offset, root_length, uint64_t{1}, root_length, uint64_t{0}}) {
      ocdbt::AppendVarint(m, v);
    }
    ocdbt::AppendU64le(m, 0);
    ocdbt::AppendVarint(m, 0);  // no version nodes
    Spit(db / "manifest.ocdbt", ocdbt::EncodeEnvelope(ocdbt::kManifestMagic, m));
  }
};

TEST(OcdbtReaderTest, RefusesCyclicSharedAndEscapingTrees) {
  TempDir tmp;
  const fs::path db = fs::path(tmp.path) / "db";
  Builder b;
  const std::vector<uint8_t> leaf = b.Leaf({"a/0", "a/1"}, "d/f");
  // A valid two-level tree first: the builder is right.
  std::vector<uint8_t> data = leaf;
  std::vector<uint8_t> interior = b.Interior({{"a", 0, leaf.size()}});
  data.insert(data.end(), interior.begin(), interior.end());
  b.Write(db, data, leaf.size(), interior.size(), 1);
  {
    OcdbtReader reader(db);
    ASSERT_EQ(reader.entries().size(), 2u);
    EXPECT_EQ(reader.Read("a/1").size(), 3u);
  }
  // Two children that are the same leaf: keys repeat.
  data = leaf;
  interior = b.Interior({{"a", 0, leaf.size()}, {"b", 0, leaf.size()}});
  data.insert(data.end(), interior.begin(), interior.end());
  b.Write(db, data, leaf.size(), interior.size(), 1);
  EXPECT_ERROR_CONTAINS(OcdbtReader{db}, "keys out of order");
  // A node that is its own child.
  data = leaf;
  const uint64_t at = leaf.size();
  const size_t self_size = b.Interior({{"a", at, 0}}).size();
  interior = b.Interior({{"a", at, self_size}});
  ASSERT_EQ(interior.size(), self_size);
  data.insert(data.end(), interior.begin(), interior.end());
  b.Write(db, data, at, interior.size(), 1);
  EXPECT_ERROR_CONTAINS(OcdbtReader{db}, "the tree is cyclic or corrupt");
  // Values in a file outside the database.
  const std::vector<uint8_t> escaping = b.Leaf({"a/0"}, "../../etc/passwd");
  b.Write(db, escaping, 0, escaping.size(), 0);
  EXPECT_ERROR_CONTAINS(OcdbtReader{db}, "does not name a file inside the database");
  // A numbered manifest.
  b.Write(db, leaf, 0, leaf.size(), 0, 1);
  EXPECT_ERROR_CONTAINS(OcdbtReader{db}, "numbered manifests");
  // A root length past the end of the file.
  b.Write(db, leaf, 0, leaf.size() + 100, 0);
  EXPECT_ERROR_CONTAINS(OcdbtReader{db}, "is truncated or the reference is corrupt");
}

TEST(OcdbtReaderTest, RefusesHostileCountsAndVarintsQuickly) {
  // A leaf declaring 2^60 entries, and one whose varint never ends: refused
  // before anything is sized by them.
  TempDir tmp;
  const fs::path db = fs::path(tmp.path) / "db";
  Builder b;
  std::vector<uint8_t> body{0};
  ocdbt::AppendDataFileTable(body, {"d/f"});
  ocdbt::AppendVarint(body, uint64_t{1} << 60);
  std::vector<uint8_t> node = ocdbt::EncodeEnvelope(ocdbt::kBtreeNodeMagic, body);
  const auto start = std::chrono::steady_clock::now();
  b.Write(db, node, 0, node.size(), 0);
  EXPECT_ERROR_CONTAINS(OcdbtReader{db}, "more than the");
  body.resize(body.size() - 9);
  for (int i = 0; i < 12; ++i) body.push_back(0xff);
  node = ocdbt::EncodeEnvelope(ocdbt::kBtreeNodeMagic, body);
  b.Write(db, node, 0, node.size(), 0);
  EXPECT_ERROR_CONTAINS(OcdbtReader{db}, "malformed varint");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace t5xx::checkpoints
