// The safetensors file format (Hugging Face's `model.safetensors`), read and
// written without libtorch:
//
//   [8 bytes] N, little-endian uint64: the header's length
//   [N bytes] JSON: {"__metadata__": {"format": "pt", ...},   (optional)
//                    "<tensor name>": {"dtype": "F32", "shape": [2, 3],
//                                      "data_offsets": [begin, end]}, ...}
//             (padded with spaces; offsets count from the byte after it)
//   [rest]    the tensors' bytes, C-order, little-endian, back to back
//
// Source of the rules: the format's specification in huggingface/safetensors
// (README "Format"), whose reader refuses a header over 100,000,000 bytes,
// overlapping or unindexed bytes, and offsets that disagree with the shape;
// this reader refuses the same, plus duplicate names, so that no tensor is
// silently dropped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace t5xx::checkpoints {

// A tensor's dtype as safetensors spells it ("F32", "BF16", ...) and its
// size in bytes; 0 for a name the format does not define.
size_t SafetensorsDTypeSize(const std::string& dtype);

struct SafetensorsEntry {
  std::string dtype;           // "F32", "F16", "BF16", "F64", "I64", ...
  std::vector<int64_t> shape;  // [] for a scalar
  uint64_t begin = 0;          // byte offsets into the data part
  uint64_t end = 0;
};

// An opened file: the header is read and checked at construction; tensors
// are read on demand (one at a time, so a large file is never held whole).
class SafetensorsReader {
 public:
  // Throws t5xx::Error naming the file and what is wrong: too short, a
  // header length past the end or over 100,000,000 bytes, a header that is
  // not a JSON object, an entry without dtype/shape/data_offsets or with an
  // unknown dtype, offsets that disagree with dtype x shape, overlap, run
  // past the end or leave bytes unindexed, a name given twice.
  explicit SafetensorsReader(const std::string& path);

  const std::string& path() const { return path_; }
  const std::map<std::string, SafetensorsEntry>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The raw bytes of tensor `name` (end - begin of them). Throws t5xx::Error
  // for an unknown name or when the file cannot be read (changed since).
  std::vector<uint8_t> Read(const std::string& name) const;

 private:
  std::string path_;
  uint64_t data_start_ = 0;
  std::map<std::string, SafetensorsEntry> tensors_;
  std::map<std::string, std::string> metadata_;
};

// One tensor to write: `data` holds product(shape) elements of `dtype`.
struct SafetensorsTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  const void* data = nullptr;
};

// Writes the tensors (sorted by name; the header padded to 8 bytes with
// spaces, as the safetensors library does) to `path` through a temporary
// file and a rename. Throws t5xx::Error for an empty or repeated name, an
// unknown dtype, and on I/O failure, naming the path.
void WriteSafetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                      const std::map<std::string, std::string>& metadata);

}  // namespace t5xx::checkpoints
