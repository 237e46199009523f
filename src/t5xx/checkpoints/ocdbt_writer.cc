// OCDBT writing: per-process databases and their merged root.
#include "t5xx/checkpoints/ocdbt_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

#include "t5xx/checkpoints/file_io.h"
#include "t5xx/checkpoints/ocdbt_format.h"
#include "t5xx/checkpoints/ocdbt_reader.h"
#include "t5xx/util/error.h"

namespace fs = std::filesystem;

namespace t5xx::checkpoints {

namespace {

std::string RandomHex(size_t bytes) {
  static std::mutex mu;
  static std::mt19937_64 gen(std::random_device{}() ^
                             static_cast<uint64_t>(
                                 std::chrono::steady_clock::now().time_since_epoch().count()));
  std::lock_guard<std::mutex> lock(mu);
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < bytes; ++i) {
    const uint64_t v = gen();
    s += digits[v & 15];
    s += digits[(v >> 4) & 15];
  }
  return s;
}

// One key of a leaf node: inline bytes, or (data file index, offset, length).
struct LeafValue {
  bool is_inline = false;
  std::string bytes;
  uint64_t file = 0, offset = 0, length = 0;
};

// A leaf node (height 0) holding `values` in key order.
std::vector<uint8_t> EncodeLeaf(const std::map<std::string, LeafValue>& values,
                                const std::vector<std::string>& files) {
  std::vector<uint8_t> b{0};
  ocdbt::AppendDataFileTable(b, files);
  ocdbt::AppendVarint(b, values.size());
  // Keys share their common prefix with the key before.
  std::vector<const std::string*> keys;
  for (const auto& kv : values) keys.push_back(&kv.first);
  std::vector<size_t> prefix(keys.size(), 0);
  for (size_t i = 1; i < keys.size(); ++i) {
    const std::string& a = *keys[i - 1];
    const std::string& k = *keys[i];
    while (prefix[i] < a.size() && prefix[i] < k.size() && a[prefix[i]] == k[prefix[i]]) {
      ++prefix[i];
    }
    ocdbt::AppendVarint(b, prefix[i]);
  }
  for (size_t i = 0; i < keys.size(); ++i) ocdbt::AppendVarint(b, keys[i]->size() - prefix[i]);
  for (size_t i = 0; i < keys.size(); ++i) {
    b.insert(b.end(), keys[i]->begin() + static_cast<std::ptrdiff_t>(prefix[i]), keys[i]->end());
  }
  for (const auto& [key, v] : values) ocdbt::AppendVarint(b, v.is_inline ? v.bytes.size() : v.length);
  for (const auto& [key, v] : values) ocdbt::AppendVarint(b, v.is_inline ? 0 : 1);
  for (const auto& [key, v] : values) {
    if (!v.is_inline) ocdbt::AppendVarint(b, v.file);
  }
  for (const auto& [key, v] : values) {
    if (!v.is_inline) ocdbt::AppendVarint(b, v.offset);
  }
  for (const auto& [key, v] : values) {
    if (v.is_inline) b.insert(b.end(), v.bytes.begin(), v.bytes.end());
  }
  if (b.size() > kOcdbtMaxNodeBytes) {
    throw Error("an OCDBT leaf node of " + std::to_string(b.size()) +
                " bytes exceeds max_decoded_node_bytes " + std::to_string(kOcdbtMaxNodeBytes) +
                " (too many chunk keys: raise the checkpoint's chunk size)");
  }
  return ocdbt::EncodeEnvelope(ocdbt::kBtreeNodeMagic, b);
}

// The manifest of a database whose newest (only) version's root is the
// leaf at `node_file`:`offset`, `length` bytes.
std::vector<uint8_t> EncodeManifest(const std::string& node_file, uint64_t offset,
                                    uint64_t length, uint64_t num_keys,
                                    uint64_t indirect_bytes) {
  std::vector<uint8_t> m;
  const std::string uuid = RandomHex(16);
  for (size_t i = 0; i < 16; ++i) {
    m.push_back(static_cast<uint8_t>(std::stoi(uuid.substr(2 * i, 2), nullptr, 16)));
  }
  ocdbt::AppendVarint(m, 0);  // manifest_kind: single
  ocdbt::AppendVarint(m, kOcdbtMaxInlineValueBytes);
  ocdbt::AppendVarint(m, kOcdbtMaxNodeBytes);
  m.push_back(4);             // version_tree_arity_log2 (TensorStore's default)
  ocdbt::AppendVarint(m, 0);  // compression_method: none
  ocdbt::AppendDataFileTable(m, {node_file});
  ocdbt::AppendVarint(m, 1);  // one version
  ocdbt::AppendVarint(m, 1);  // generation 1
  m.push_back(0);             // root height: a leaf
  for (uint64_t v : {uint64_t{0}, offset, length, num_keys, length, indirect_bytes}) {
    ocdbt::AppendVarint(m, v);
  }
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  ocdbt::AppendU64le(m, static_cast<uint64_t>(
                            std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()));
  ocdbt::AppendVarint(m, 0);  // no version tree nodes
  return ocdbt::EncodeEnvelope(ocdbt::kManifestMagic, m);
}

void WriteAllAt(int fd, const uint8_t* data, size_t size, uint64_t offset, const fs::path& file) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot write " + file.string() + ": " + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace

OcdbtWriter::OcdbtWriter(const fs::path& root) : root_(root) {
  MakeDir(root_);
  MakeDir(root_ / "d");
  std::error_code ec;
  if (fs::exists(root_ / "manifest.ocdbt", ec)) {
    throw Error("OCDBT database " + root_.string() + " already exists; refusing to overwrite it");
  }
  data_file_ = "d/" + RandomHex(16);
  const fs::path file = root_ / data_file_;
  fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("cannot create " + file.string() + ": " + std::strerror(errno));
}

OcdbtWriter::~OcdbtWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void OcdbtWriter::Put(const std::string& key, const void* data, size_t size) {
  Value v;
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  std::unique_lock<std::mutex> lock(mu_);
  if (values_.count(key)) throw Error("OCDBT key '" + key + "' written twice");
  if (size <= kOcdbtMaxInlineValueBytes) {
    v.is_inline = true;
    v.bytes.assign(reinterpret_cast<const char*>(bytes), size);
    values_.emplace(key, std::move(v));
    return;
  }
  v.offset = size_;
  v.length = size;
  size_ += size;
  values_.emplace(key, v);
  lock.unlock();  // the range is reserved: write it outside the lock
  WriteAllAt(fd_, bytes, size, v.offset, root_ / data_file_);
}

void OcdbtWriter::Finish() {
  std::map<std::string, LeafValue> leaf;
  uint64_t indirect = 0;
  for (auto& [key, v] : values_) {
    LeafValue& l = leaf[key];
    l.is_inline = v.is_inline;
    l.bytes = std::move(v.bytes);
    l.offset = v.offset;
    l.length = v.length;
    indirect += v.is_inline ? 0 : v.length;
  }
  const std::vector<uint8_t> node = EncodeLeaf(leaf, {data_file_});
  const fs::path file = root_ / data_file_;
  WriteAllAt(fd_, node.data(), node.size(), size_, file);
  if (::fsync(fd_) != 0) throw Error("cannot fsync " + file.string() + ": " + std::strerror(errno));
  ::close(fd_);
  fd_ = -1;
  const std::vector<uint8_t> manifest =
      EncodeManifest(data_file_, size_, node.size(), leaf.size(), indirect);
  WriteFile(root_ / "manifest.ocdbt", manifest.data(), manifest.size());
  SyncDir(root_ / "d");
  SyncDir(root_);
}

void MergeOcdbtDatabases(const fs::path& root, const std::vector<std::string>& children) {
  std::map<std::string, LeafValue> leaf;
  std::vector<std::string> files;
  std::map<std::string, uint64_t> file_index;
  uint64_t indirect = 0;
  for (const std::string& child : children) {
    const OcdbtReader reader(root / child);
    for (const auto& [key, v] : reader.entries()) {
      if (leaf.count(key)) {
        throw Error("OCDBT key '" + key + "' is in two of the databases merged into " +
                    root.string() + " (the second: " + child + ")");
      }
      LeafValue& l = leaf[key];
      l.is_inline = v.is_inline;
      l.bytes = v.inline_bytes;
      if (!v.is_inline) {
        const std::string path = child + "/" + v.file;
        auto [it, added] = file_index.emplace(path, files.size());
        if (added) files.push_back(path);
        l.file = it->second;
        l.offset = v.offset;
        l.length = v.length;
        indirect += v.length;
      }
    }
  }
  const std::vector<uint8_t> node = EncodeLeaf(leaf, files);
  MakeDir(root / "d");
  const std::string node_file = "d/" + RandomHex(16);
  WriteFile(root / node_file, node.data(), node.size());
  const std::vector<uint8_t> manifest =
      EncodeManifest(node_file, 0, node.size(), leaf.size(), indirect);
  WriteFile(root / "manifest.ocdbt", manifest.data(), manifest.size());
  SyncDir(root / "d");
  SyncDir(root);
}

}  // namespace t5xx::checkpoints
