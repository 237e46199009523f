// The encodings shared by TensorStore's OCDBT objects (manifest, B+tree
// node, version tree node): unsigned LEB128 varints, the envelope
//
//   magic:uint32 big-endian | length:uint64 little-endian (of the whole
//   object) | version:varint (0) | compression:varint (0 none, 1 zstd) |
//   body (one zstd frame when compressed) | crc32c:uint32 little-endian of
//   every byte before it
//
// and the data file table that maps a node's data_file_id to a path.
// Source: TensorStore's OCDBT specification, "Storage format"
// (tensorstore/kvstore/ocdbt/index.rst, v0.1.65); facts checked against
// what orbax-checkpoint 0.6.4 writes, docs/notes/orbax_ocdbt_format.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace t5xx::checkpoints::ocdbt {

inline constexpr uint32_t kManifestMagic = 0x0cdb3a2a;
inline constexpr uint32_t kBtreeNodeMagic = 0x0cdb20de;
inline constexpr uint32_t kVersionNodeMagic = 0x0cdb1234;

// Reads a decoded body front to back. Every read checks the bytes left and
// throws t5xx::Error "<what>: truncated ..." / "... malformed varint" naming
// `what` (the file and object), so a hostile length never over-reads.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size, std::string what)
      : data_(data), size_(size), what_(std::move(what)) {}
  uint64_t Varint();
  uint8_t U8();
  uint32_t U32le();
  uint64_t U64le();
  std::string Bytes(uint64_t n);
  // A count of entries that each take at least `min_bytes_each` more bytes:
  // refused when the rest of the body cannot hold them (before anything is
  // sized by it).
  uint64_t Count(uint64_t min_bytes_each = 1);
  size_t left() const { return size_ - pos_; }
  const std::string& what() const { return what_; }
  [[noreturn]] void Fail(const std::string& why) const;

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  std::string what_;
};

void AppendVarint(std::vector<uint8_t>& out, uint64_t v);
void AppendU32le(std::vector<uint8_t>& out, uint32_t v);
void AppendU64le(std::vector<uint8_t>& out, uint64_t v);

// Checks an object's magic, length (== raw.size()), version and CRC-32C and
// returns its body, decompressed (at most max_decoded_bytes). Throws
// t5xx::Error naming `what` and the fault.
std::vector<uint8_t> DecodeEnvelope(const std::vector<uint8_t>& raw, uint32_t magic,
                                    const std::string& what, uint64_t max_decoded_bytes);
// The inverse: an uncompressed object (compression 0), or a zstd-compressed
// one when zstd_level > 0.
std::vector<uint8_t> EncodeEnvelope(uint32_t magic, const std::vector<uint8_t>& body,
                                    int zstd_level = 0);

// One data file of a table: base_path + relative_path, relative to the
// directory of the database (the transitive base paths of the nodes above
// already prepended).
struct DataFile {
  std::string path;             // the whole path, relative to the database root
  std::string child_transitive; // what nodes reached through this file prefix
};

// Reads a data file table; `transitive` is the path prefix inherited from
// the referring node. Paths must stay inside the database: absolute paths,
// "..", "." and empty components and NUL bytes are refused.
std::vector<DataFile> ReadDataFileTable(ByteReader& r, const std::string& transitive);
// Writes a table of plain paths (base_path empty, no shared prefixes).
void AppendDataFileTable(std::vector<uint8_t>& out, const std::vector<std::string>& paths);

}  // namespace t5xx::checkpoints::ocdbt
