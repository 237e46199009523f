// The checkpointer: t5x legacy (non-Orbax) checkpoint directories, saved
// atomically (temp dir + rename), listed and loaded. Framework-free.
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
// The parts live in their own files: array.h (dtypes, array types),
// msgpack_index.h (the index), zarr_array.h (the array store),
// compression.h (gzip/zlib), file_io.h. See docs/checkpoints.md for the
// format notes; behaviour of t5x/checkpoints.py (Checkpointer.save/restore).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "t5xx/checkpoints/array.h"
#include "t5xx/checkpoints/compression.h"
#include "t5xx/checkpoints/msgpack_index.h"
#include "t5xx/checkpoints/zarr_array.h"

namespace t5xx::checkpoints {

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

}  // namespace t5xx::checkpoints
