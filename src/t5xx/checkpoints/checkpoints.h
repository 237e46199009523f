// t5x legacy (non-Orbax) checkpoint layout, framework-free.
//
//   MODEL_DIR/checkpoint_<step>/
//     checkpoint                       msgpack index (see below)
//     target.encoder.layers_0.attention.query.kernel/   zarr v2 array
//       .zarray                        JSON metadata
//       0.0                            chunk(s), gzip (default) or raw
//     state.param_states.encoder....v_row/
//     ...
//
// The `checkpoint` file is a msgpack map
//   {'version': 3,
//    'optimizer': {'target': {...nested params...},
//                  'state': {'step': <int32 ndarray, inline>,
//                            'param_states': {...nested slots...}}}}
// Every array written to zarr is replaced in that map by its TensorStore spec
//   {'driver': 'zarr', 'dtype': 'float32',
//    'kvstore': {'driver': 'file', 'path': '<dotted.path>/'},
//    'metadata': {'chunks': [...], 'compressor': {'id': 'gzip', 'level': 1}
//                 (or nil), 'shape': [...]}}
// with a path relative to the checkpoint directory. Arrays stored inline use
// flax's msgpack ndarray extension (ext type 1; payload = msgpack array
// [shape, dtype name, raw C-order bytes]).
//
// Arrays are passed as raw little-endian C-order buffers; no libtorch here.
// See docs/checkpoints.md for the format notes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace t5xx::checkpoints {

// Version written to the msgpack index; checkpoints with a larger version are
// refused on load (same meaning as t5x's checkpoints.VERSION).
inline constexpr int kCheckpointVersion = 3;

enum class DType { kFloat32, kBFloat16, kInt32, kInt64 };

// numpy/TensorStore dtype name: "float32", "bfloat16", "int32", "int64".
const char* DTypeName(DType dtype);
// zarr v2 .zarray dtype: "<f4", "bfloat16", "<i4", "<i8".
const char* ZarrDTypeName(DType dtype);
size_t DTypeSize(DType dtype);

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
};

struct SaveOptions {
  bool gzip = true;     // zarr compressor {"id":"gzip","level":gzip_level}.
  int gzip_level = 1;   // 1 = what TensorStore writes by default.
  // Arrays larger than this are split into several zarr chunks with t5x's
  // rule (see ChooseChunkShape); 64 MiB is t5x's _DESIRED_CHUNK_SIZE_BYTES.
  // <= 0: always one chunk per array.
  int64_t max_chunk_bytes = 64LL * 1024 * 1024;
};

// Writes model_dir/checkpoint_<step>/ atomically (via
// checkpoint_<step>.tmp-<unix_ts>, then rename). `step` also goes to
// optimizer.state.step (inline int32 ndarray; int64 if it does not fit).
// Returns the final directory. Throws t5xx::Error naming the path on I/O
// failure, if the final directory already exists, or on bad input (duplicate
// or conflicting paths, empty path components, null data).
std::string SaveCheckpoint(const std::string& model_dir, int64_t step,
                           const std::vector<ArrayRef>& arrays,
                           const SaveOptions& options = {});

struct LoadedArray {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // C-order, little-endian.
};

struct LoadedCheckpoint {
  int64_t step = 0;
  int version = 0;
  // Keyed by dotted path under 'optimizer' (as in ArrayRef::path); excludes
  // "state.step" (returned in `step`). Inline and zarr arrays alike.
  std::map<std::string, LoadedArray> arrays;
};

// Reads a checkpoint directory written by SaveCheckpoint, or by t5x's legacy
// checkpointer (zarr arrays uncompressed / gzip / zlib, any chunking).
// Throws t5xx::Error for: version > 3 ("written by a newer t5x/t5xx (version
// N > 3)"), missing files (named), unsupported dtypes/compressors/filters.
LoadedCheckpoint LoadCheckpoint(const std::string& checkpoint_dir);

// Steps of the finished checkpoint_<N> directories in model_dir, ascending
// (".tmp-" directories are ignored). Empty if model_dir does not exist.
std::vector<int64_t> ListCheckpointSteps(const std::string& model_dir);

// Directory name t5x uses: model_dir/checkpoint_<step>.
std::string CheckpointDir(const std::string& model_dir, int64_t step);

// ---- Lower-level helpers (exposed for tests and tools) ----

// gzip (RFC 1952) stream, as numcodecs' GZip / TensorStore's gzip compressor.
std::vector<uint8_t> GzipCompress(const void* data, size_t size, int level);
// Inflates a gzip or zlib stream (auto-detected). `what` names the source in
// errors; `expected_size` (if known) sizes the output buffer up front.
std::vector<uint8_t> Inflate(const void* data, size_t size,
                             const std::string& what,
                             size_t expected_size = 0);

// t5x's chunk choice: starting from `shape`, repeatedly lower the currently
// largest chunk dimension to its next smaller divisor of the full dimension
// until the chunk has <= target_elements elements.
std::vector<int64_t> ChooseChunkShape(const std::vector<int64_t>& shape,
                                      int64_t target_elements);

}  // namespace t5xx::checkpoints
