// One checkpoint array leaf: its dtype (names and sizes as numpy, zarr and
// TensorStore spell them) and the raw-buffer array types passed in and out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace t5xx::checkpoints {

enum class DType { kFloat32, kBFloat16, kInt32, kInt64 };

// numpy/TensorStore dtype name: "float32", "bfloat16", "int32", "int64".
const char* DTypeName(DType dtype);
// zarr v2 .zarray dtype: "<f4", "bfloat16", "<i4", "<i8".
const char* ZarrDTypeName(DType dtype);
size_t DTypeSize(DType dtype);
// Inverses of DTypeName / ZarrDTypeName (the latter also accepts
// "<V2bfloat16"); nullopt for any other name.
std::optional<DType> DTypeFromName(const std::string& name);
std::optional<DType> DTypeFromZarrName(const std::string& name);

// Product of the dimensions (1 for a scalar, shape []). For shapes already
// checked (CheckedNumBytes); it does not guard against overflow.
int64_t NumElements(const std::vector<int64_t>& shape);
// Bytes of an array of `shape` and `dtype`, or nullopt when a dimension is
// negative or the count does not fit 63 bits: the check of a shape read from
// a file, before anything is sized by it.
std::optional<uint64_t> CheckedNumBytes(const std::vector<int64_t>& shape, DType dtype);
// "[2, 3]" — shapes as they appear in error messages.
std::string ShapeString(const std::vector<int64_t>& shape);

// A hyper-rectangle of an array: `origin` and `shape` per dimension (rank 0:
// both empty). The part of an array one process owns.
struct Box {
  std::vector<int64_t> origin;
  std::vector<int64_t> shape;
};

struct ArrayRef {
  // Dotted path under 'optimizer', e.g.
  // "target.encoder.layers_0.attention.query.kernel" or
  // "state.param_states.encoder.layers_0.attention.query.kernel.v_row".
  // "state.step" is reserved (written from SaveCheckpoint's `step`).
  std::string path;
  DType dtype;
  std::vector<int64_t> shape;
  const void* data;  // C-order, little-endian, product(shape) elements.
  // Store inside the msgpack index (flax ndarray ext) instead of a zarr
  // directory — what t5x does for arrays without mesh axes. Default: zarr.
  bool store_inline = false;
  // Sharded saves (several processes write one checkpoint, checkpoints.h):
  // the part of the array `data` holds. Then `shape` is the global shape
  // and `data` has product(box->shape) elements; the zarr chunks divide
  // the box. Unset: `data` is the whole array.
  std::optional<Box> box;
  // false: another process (the primary replica of the same box) writes
  // the box's chunks; this one only describes the array.
  bool write = true;
};

struct LoadedArray {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // C-order, little-endian.
};

}  // namespace t5xx::checkpoints
