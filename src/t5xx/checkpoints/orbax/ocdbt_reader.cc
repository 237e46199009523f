// OCDBT reader: manifest → newest version → B+tree walk → key listing.
#include "t5xx/checkpoints/orbax/ocdbt_reader.h"


#include <algorithm>

#include "t5xx/checkpoints/file_io.h"
#include "t5xx/checkpoints/orbax/ocdbt_format.h"
#include "t5xx/util/error.h"

namespace fs = std::filesystem;

namespace t5xx::checkpoints {

namespace {

// Bytes [offset, offset + length) of data file `file` of the database at
// `root`; errors name the file and its role (file_io.h ReadFileRange).
std::vector<uint8_t> ReadDataFile(const fs::path& root, const std::string& file, uint64_t offset,
                                  uint64_t length, const std::string& role) {
  return ReadFileRange(root / file, offset, length,
                       role + " of the OCDBT database " + root.string());
}

// A node reference: which file, where, and what it must be.
struct NodeRef {
  std::string file;
  std::string transitive;  // base path its own data file table inherits
  uint64_t offset = 0;
  uint64_t length = 0;
  int height = 0;
  std::string key_prefix;  // prepended to its relative keys
};

class TreeWalk {
 public:
  TreeWalk(const fs::path& root, uint64_t max_node_bytes,
           std::map<std::string, OcdbtValue>& entries)
      : root_(root), max_node_bytes_(max_node_bytes), entries_(entries) {}

  void Visit(const NodeRef& ref) {
    if (++nodes_ > kMaxOcdbtNodes) {
      throw Error("OCDBT database " + root_.string() + " has more than " +
                  std::to_string(kMaxOcdbtNodes) + " B+tree nodes (or refers to nodes repeatedly)");
    }
    const std::string what = (root_ / ref.file).string() + " (OCDBT B+tree node at byte " +
                             std::to_string(ref.offset) + ")";
    const std::vector<uint8_t> raw =
        ReadDataFile(root_, ref.file, ref.offset, ref.length, "B+tree node");
    const std::vector<uint8_t> body =
        ocdbt::DecodeEnvelope(raw, ocdbt::kBtreeNodeMagic, what, max_node_bytes_);
    ocdbt::ByteReader r(body.data(), body.size(), what);
    const int height = r.U8();
    if (height != ref.height) {
      r.Fail("height " + std::to_string(height) + " where " + std::to_string(ref.height) +
             " was expected (the tree is cyclic or corrupt)");
    }
    const std::vector<ocdbt::DataFile> files = ocdbt::ReadDataFileTable(r, ref.transitive);
    const uint64_t n = r.Count(2);
    std::vector<uint64_t> prefix(n, 0), suffix(n);
    for (uint64_t i = 1; i < n; ++i) prefix[i] = r.Varint();
    for (uint64_t i = 0; i < n; ++i) suffix[i] = r.Varint();
    std::vector<uint64_t> subtree(n, 0);
    if (height > 0) {
      for (uint64_t i = 0; i < n; ++i) subtree[i] = r.Varint();
    }
    std::vector<std::string> keys(n);
    const std::string none;
    for (uint64_t i = 0; i < n; ++i) {
      const std::string& prev = i ? keys[i - 1] : none;
      if (prefix[i] > prev.size()) r.Fail("key " + std::to_string(i) + " has a bad prefix length");
      keys[i] = prev.substr(0, prefix[i]) + r.Bytes(suffix[i]);
    }
    if (height == 0) {
      Leaf(r, files, keys, ref.key_prefix);
    } else {
      Interior(r, files, keys, subtree, ref);
    }
  }

 private:
  const ocdbt::DataFile& File(ocdbt::ByteReader& r, const std::vector<ocdbt::DataFile>& files) {
    const uint64_t id = r.Varint();
    if (id >= files.size()) {
      r.Fail("data file id " + std::to_string(id) + " is outside its table of " +
             std::to_string(files.size()));
    }
    return files[id];
  }

  void Add(ocdbt::ByteReader& r, std::string key, OcdbtValue value) {
    if (!entries_.empty() && !(key > last_key_)) {
      r.Fail("key '" + key + "' is not after '" + last_key_ +
             "' (keys out of order: the tree is cyclic, shares a subtree, or is corrupt)");
    }
    if (entries_.size() >= kMaxOcdbtKeys) {
      r.Fail("more than " + std::to_string(kMaxOcdbtKeys) + " keys in the database");
    }
    last_key_ = key;
    entries_.emplace_hint(entries_.end(), std::move(key), std::move(value));
  }

  void Leaf(ocdbt::ByteReader& r, const std::vector<ocdbt::DataFile>& files,
            const std::vector<std::string>& keys, const std::string& key_prefix) {
    const size_t n = keys.size();
    std::vector<uint64_t> length(n), kind(n);
    for (size_t i = 0; i < n; ++i) length[i] = r.Varint();
    for (size_t i = 0; i < n; ++i) {
      kind[i] = r.Varint();
      if (kind[i] > 1) r.Fail("value kind " + std::to_string(kind[i]) + " (only 0 and 1 exist)");
    }
    std::vector<OcdbtValue> values(n);
    for (size_t i = 0; i < n; ++i) {
      if (kind[i] == 1) values[i].file = File(r, files).path;
    }
    for (size_t i = 0; i < n; ++i) {
      if (kind[i] == 1) values[i].offset = r.Varint();
    }
    for (size_t i = 0; i < n; ++i) {
      values[i].length = length[i];
      if (kind[i] == 0) {
        values[i].is_inline = true;
        values[i].inline_bytes = r.Bytes(length[i]);
      }
    }
    if (r.left() != 0) r.Fail(std::to_string(r.left()) + " trailing bytes");
    for (size_t i = 0; i < n; ++i) Add(r, key_prefix + keys[i], std::move(values[i]));
  }

  void Interior(ocdbt::ByteReader& r, const std::vector<ocdbt::DataFile>& files,
                const std::vector<std::string>& keys, const std::vector<uint64_t>& subtree,
                const NodeRef& parent) {
    const size_t n = keys.size();
    std::vector<NodeRef> children(n);
    for (size_t i = 0; i < n; ++i) {
      if (subtree[i] > keys[i].size()) {
        r.Fail("child " + std::to_string(i) + " has a common prefix longer than its key");
      }
      const ocdbt::DataFile& f = File(r, files);
      children[i].file = f.path;
      children[i].transitive = f.child_transitive;
      children[i].height = parent.height - 1;
      children[i].key_prefix = parent.key_prefix + keys[i].substr(0, subtree[i]);
    }
    for (size_t i = 0; i < n; ++i) children[i].offset = r.Varint();
    for (size_t i = 0; i < n; ++i) children[i].length = r.Varint();
    for (int column = 0; column < 3; ++column) {  // num_keys, num_tree_bytes, num_indirect_value_bytes
      for (size_t i = 0; i < n; ++i) r.Varint();
    }
    if (r.left() != 0) r.Fail(std::to_string(r.left()) + " trailing bytes");  // before any child
    for (const NodeRef& child : children) Visit(child);
  }

  fs::path root_;
  uint64_t max_node_bytes_;
  std::map<std::string, OcdbtValue>& entries_;
  std::string last_key_;
  uint64_t nodes_ = 0;
};

struct Manifest {
  uint64_t max_decoded_node_bytes = 0;
  bool empty = true;
  NodeRef root;
};

Manifest ReadManifest(const fs::path& root) {
  const fs::path file = root / "manifest.ocdbt";
  std::error_code ec;
  const uint64_t size = fs::file_size(file, ec);
  if (ec) throw Error("cannot read the OCDBT manifest " + file.string() + ": " + ec.message());
  if (size > kMaxOcdbtManifestBytes) {
    throw Error("OCDBT manifest " + file.string() + " has " + std::to_string(size) +
                " bytes, more than the limit of " + std::to_string(kMaxOcdbtManifestBytes));
  }
  const std::vector<uint8_t> raw = ReadFile(file, "OCDBT manifest");
  const std::string what = file.string() + " (OCDBT manifest)";
  const std::vector<uint8_t> body =
      ocdbt::DecodeEnvelope(raw, ocdbt::kManifestMagic, what, kMaxOcdbtManifestBytes);
  ocdbt::ByteReader r(body.data(), body.size(), what);
  r.Bytes(16);  // uuid
  const uint64_t kind = r.Varint();
  if (kind != 0) {
    r.Fail("manifest_kind " + std::to_string(kind) +
           " (numbered manifests) is not supported; only 0, the single manifest Orbax writes");
  }
  r.Varint();  // max_inline_value_bytes: a writer's setting
  Manifest m;
  m.max_decoded_node_bytes = std::min(r.Varint(), kMaxOcdbtNodeBytes);
  r.U8();  // version_tree_arity_log2
  const uint64_t method = r.Varint();
  if (method > 1) r.Fail("compression_method " + std::to_string(method) + " (only 0 and 1 = zstd)");
  if (method == 1) r.U32le();  // zstd level
  const std::vector<ocdbt::DataFile> files = ocdbt::ReadDataFileTable(r, "");
  // The newest version is the last inline one (the spec keeps it inline);
  // the columns: generation, root_height, data_file_id, offset, length,
  // num_keys, num_tree_bytes, num_indirect_value_bytes, commit_time.
  const uint64_t n = r.Count(9);
  if (n == 0) r.Fail("no versions");
  std::vector<uint64_t> column(n);
  auto read_column = [&](auto read) {
    for (uint64_t i = 0; i < n; ++i) column[i] = read();
    return column[n - 1];
  };
  read_column([&] { return r.Varint(); });  // generation_number
  m.root.height = static_cast<int>(read_column([&] { return uint64_t{r.U8()}; }));
  const uint64_t file_id = read_column([&] { return r.Varint(); });
  m.root.offset = read_column([&] { return r.Varint(); });
  m.root.length = read_column([&] { return r.Varint(); });
  const uint64_t num_keys = read_column([&] { return r.Varint(); });
  m.empty = m.root.length == 0 && num_keys == 0;
  if (!m.empty) {
    if (file_id >= files.size()) {
      r.Fail("the newest version's data file id " + std::to_string(file_id) +
             " is outside its table of " + std::to_string(files.size()));
    }
    m.root.file = files[file_id].path;
    m.root.transitive = files[file_id].child_transitive;
  }
  // The remaining columns and the version nodes (older generations) are not
  // needed to read the newest version.
  return m;
}

}  // namespace

OcdbtReader::OcdbtReader(const fs::path& root) : root_(root) {
  const Manifest m = ReadManifest(root_);
  if (m.empty) return;
  TreeWalk walk(root_, m.max_decoded_node_bytes, entries_);
  walk.Visit(m.root);
}

std::string OcdbtReader::Describe(const std::string& key) const {
  return root_.string() + " (OCDBT key '" + key + "')";
}

std::vector<uint8_t> OcdbtReader::Read(const std::string& key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) {
    throw Error("the OCDBT database " + root_.string() + " has no key '" + key + "'");
  }
  const OcdbtValue& v = it->second;
  if (v.is_inline) return std::vector<uint8_t>(v.inline_bytes.begin(), v.inline_bytes.end());
  return ReadDataFile(root_, v.file, v.offset, v.length, "value of key '" + key + "'");
}

}  // namespace t5xx::checkpoints
