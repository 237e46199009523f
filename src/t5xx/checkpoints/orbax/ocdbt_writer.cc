// OCDBT writing: per-process databases and their merged root.
#include "t5xx/checkpoints/orbax/ocdbt_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

#include "t5xx/checkpoints/file_io.h"
#include "t5xx/checkpoints/orbax/ocdbt_format.h"
#include "t5xx/checkpoints/orbax/ocdbt_reader.h"
#include "t5xx/util/error.h"

namespace fs = std::filesystem;

namespace t5xx::checkpoints {

namespace {

// `n` random bytes (database uuids, data file names).
std::vector<uint8_t> RandomBytes(size_t n) {
  static std::mutex mu;
  static std::mt19937_64 gen(std::random_device{}() ^
                             static_cast<uint64_t>(
                                 std::chrono::steady_clock::now().time_since_epoch().count()));
  std::lock_guard<std::mutex> lock(mu);
  std::vector<uint8_t> out(n);
  for (uint8_t& b : out) b = static_cast<uint8_t>(gen());
  return out;
}

// A new data file's name: "d/" + 32 lowercase hex digits, as TensorStore's.
std::string NewDataFileName() {
  static const char* digits = "0123456789abcdef";
  std::string s = "d/";
  for (uint8_t b : RandomBytes(16)) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

// What a leaf node of `values` holds, for the manifest: its keys and the
// bytes of its out-of-line values.
uint64_t IndirectBytes(const std::map<std::string, OcdbtValue>& values) {
  uint64_t n = 0;
  for (const auto& [key, v] : values) n += v.is_inline ? 0 : v.length;
  return n;
}

// A leaf node (height 0) holding `values` in key order; out-of-line values
// name their data file (relative to the database root), which goes into the
// node's data file table.
std::vector<uint8_t> EncodeLeaf(const std::map<std::string, OcdbtValue>& values) {
  std::vector<std::string> files;
  std::map<std::string, uint64_t> file_id;
  for (const auto& [key, v] : values) {
    if (!v.is_inline && file_id.emplace(v.file, files.size()).second) files.push_back(v.file);
  }
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
  for (const auto& [key, v] : values) ocdbt::AppendVarint(b, v.length);
  for (const auto& [key, v] : values) ocdbt::AppendVarint(b, v.is_inline ? 0 : 1);
  for (const auto& [key, v] : values) {
    if (!v.is_inline) ocdbt::AppendVarint(b, file_id.at(v.file));
  }
  for (const auto& [key, v] : values) {
    if (!v.is_inline) ocdbt::AppendVarint(b, v.offset);
  }
  for (const auto& [key, v] : values) {
    if (v.is_inline) b.insert(b.end(), v.inline_bytes.begin(), v.inline_bytes.end());
  }
  if (b.size() > kOcdbtMaxNodeBytes) {
    throw Error("an OCDBT leaf node of " + std::to_string(b.size()) +
                " bytes exceeds max_decoded_node_bytes " + std::to_string(kOcdbtMaxNodeBytes) +
                " (too many chunk keys: raise the checkpoint's chunk size)");
  }
  return ocdbt::EncodeEnvelope(ocdbt::kBtreeNodeMagic, b);
}

// The manifest of a database whose newest (only) version's root is the
// leaf of `values` at `node_file`:`offset`, `length` bytes.
std::vector<uint8_t> EncodeManifest(const std::string& node_file, uint64_t offset,
                                    uint64_t length,
                                    const std::map<std::string, OcdbtValue>& values) {
  std::vector<uint8_t> m = RandomBytes(16);  // the database's uuid
  ocdbt::AppendVarint(m, 0);  // manifest_kind: single
  ocdbt::AppendVarint(m, kOcdbtMaxInlineValueBytes);
  ocdbt::AppendVarint(m, kOcdbtMaxNodeBytes);
  m.push_back(4);             // version_tree_arity_log2 (TensorStore's default)
  ocdbt::AppendVarint(m, 0);  // compression_method: none
  ocdbt::AppendDataFileTable(m, {node_file});
  ocdbt::AppendVarint(m, 1);  // one version
  ocdbt::AppendVarint(m, 1);  // generation 1
  m.push_back(0);             // root height: a leaf
  for (uint64_t v : {uint64_t{0}, offset, length, uint64_t{values.size()}, length,
                     IndirectBytes(values)}) {
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
  data_file_ = NewDataFileName();
  const fs::path file = root_ / data_file_;
  fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("cannot create " + file.string() + ": " + std::strerror(errno));
}

OcdbtWriter::~OcdbtWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void OcdbtWriter::Put(const std::string& key, const void* data, size_t size) {
  OcdbtValue v;
  v.length = size;
  const char* bytes = static_cast<const char*>(data);
  std::unique_lock<std::mutex> lock(mu_);
  if (values_.count(key)) throw Error("OCDBT key '" + key + "' written twice");
  if (size <= kOcdbtMaxInlineValueBytes) {
    v.is_inline = true;
    v.inline_bytes.assign(bytes, size);
    values_.emplace(key, std::move(v));
    return;
  }
  v.file = data_file_;
  v.offset = size_;
  size_ += size;
  values_.emplace(key, v);
  lock.unlock();  // the range is reserved: write it outside the lock
  WriteAllAt(fd_, reinterpret_cast<const uint8_t*>(bytes), size, v.offset, root_ / data_file_);
}

void OcdbtWriter::Finish() {
  const std::vector<uint8_t> node = EncodeLeaf(values_);
  const fs::path file = root_ / data_file_;
  WriteAllAt(fd_, node.data(), node.size(), size_, file);
  if (::fsync(fd_) != 0) throw Error("cannot fsync " + file.string() + ": " + std::strerror(errno));
  ::close(fd_);
  fd_ = -1;
  const std::vector<uint8_t> manifest = EncodeManifest(data_file_, size_, node.size(), values_);
  WriteFile(root_ / "manifest.ocdbt", manifest.data(), manifest.size());
  SyncDir(root_ / "d");
  SyncDir(root_);
}

void MergeOcdbtDatabases(const fs::path& root, const std::vector<std::string>& children) {
  std::map<std::string, OcdbtValue> merged;
  for (const std::string& child : children) {
    const OcdbtReader reader(root / child);
    for (const auto& [key, v] : reader.entries()) {
      auto [it, added] = merged.emplace(key, v);
      if (!added) {
        throw Error("OCDBT key '" + key + "' is in two of the databases merged into " +
                    root.string() + " (the second: " + child + ")");
      }
      if (!v.is_inline) it->second.file = child + "/" + v.file;  // relative to `root` now
    }
  }
  const std::vector<uint8_t> node = EncodeLeaf(merged);
  MakeDir(root / "d");
  const std::string node_file = NewDataFileName();
  WriteFile(root / node_file, node.data(), node.size());
  const std::vector<uint8_t> manifest = EncodeManifest(node_file, 0, node.size(), merged);
  WriteFile(root / "manifest.ocdbt", manifest.data(), manifest.size());
  SyncDir(root / "d");
  SyncDir(root);
}

}  // namespace t5xx::checkpoints
