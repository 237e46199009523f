// Reads a TensorStore OCDBT key-value store (the database under an Orbax
// checkpoint's state/ directory): the manifest's newest version, then the
// B+tree from its root, into a sorted listing of every key and where its
// value lies (inline in a leaf node, or a byte range of a data file).
// Values are read on demand. Framework-free.
//
// Supported: what TensorStore writes (format version 0): single manifests
// (manifest_kind 0, as Orbax configures), nodes uncompressed or zstd,
// leaf and interior B+tree nodes, inline and out-of-line values, data
// files shared between per-process databases through base paths. Refused
// with one error naming the file: numbered manifests, other versions or
// compression formats, a CRC-32C mismatch, truncated objects, data file
// paths leaving the database, a node whose height is not one less than its
// parent's, keys out of order (a node referenced twice: cyclic or shared
// subtrees), more than kMaxOcdbtKeys keys or kMaxOcdbtNodes nodes.
// Source: TensorStore's OCDBT specification (index.rst, v0.1.65) and
// docs/notes/orbax_ocdbt_format.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace t5xx::checkpoints {

inline constexpr uint64_t kMaxOcdbtKeys = uint64_t{1} << 24;
inline constexpr uint64_t kMaxOcdbtNodes = uint64_t{1} << 20;
// The most a decoded node or manifest may hold whatever the manifest's
// max_decoded_node_bytes says (Orbax writes 100,000,000).
inline constexpr uint64_t kMaxOcdbtNodeBytes = uint64_t{1} << 30;
inline constexpr uint64_t kMaxOcdbtManifestBytes = uint64_t{64} << 20;

// Where one key's value is.
struct OcdbtValue {
  bool is_inline = false;
  std::string inline_bytes;  // the value, when inline
  std::string file;          // else: a data file, relative to the root
  uint64_t offset = 0;
  uint64_t length = 0;       // the value's bytes either way
};

class OcdbtReader {
 public:
  // Opens the database in `root` (its manifest.ocdbt) and lists every key
  // of the newest version. Throws t5xx::Error naming the file for the faults
  // listed above and for missing files.
  explicit OcdbtReader(const std::filesystem::path& root);

  const std::filesystem::path& root() const { return root_; }
  const std::map<std::string, OcdbtValue>& entries() const { return entries_; }
  bool Contains(const std::string& key) const { return entries_.count(key) > 0; }
  // The value of `key`. Throws t5xx::Error naming the key for an absent key
  // and naming the data file when it is missing or shorter than the range.
  std::vector<uint8_t> Read(const std::string& key) const;
  // "ROOT (OCDBT key 'KEY')": how errors name a value.
  std::string Describe(const std::string& key) const;

 private:
  std::filesystem::path root_;
  std::map<std::string, OcdbtValue> entries_;
};

}  // namespace t5xx::checkpoints
