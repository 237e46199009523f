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
// Beside t5x's files t5xx writes t5xx_checksums.json (checksums.h) and the
// data pipeline state of each process, t5xx_train_ds-<i>-of-<n>.json; t5x's
// readers ignore both.
//
// Commit: everything is written (each file fsync'ed) into
// checkpoint_<step>.tmp-<unix time>, the directories are fsync'ed, the
// directory is renamed to checkpoint_<step> and MODEL_DIR is fsync'ed. A
// reader never sees a partial checkpoint_<step>; a crash leaves a .tmp-
// directory that ListCheckpointSteps ignores and RemoveTemporaryCheckpoints
// deletes. No lock files.
//
// Arrays are passed as raw little-endian C-order buffers; no libtorch here.
// The parts live in their own files: array.h (dtypes, array types),
// msgpack_index.h (the index), zarr_array.h (the array store),
// checksums.h, compression.h (gzip/zlib), file_io.h, async_checkpointer.h
// (saves in the background). See docs/checkpoints.md for the format notes;
// behaviour of t5x/checkpoints.py (Checkpointer.save/restore).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/checkpoints/array.h"
#include "t5xx/checkpoints/checksums.h"
#include "t5xx/checkpoints/compression.h"
#include "t5xx/checkpoints/t5x/msgpack_index.h"
#include "t5xx/checkpoints/zarr_array.h"

namespace t5xx::checkpoints {

// The layout SaveCheckpoint writes: t5x's legacy one (msgpack index + one
// zarr directory per array; what t5x's Checkpointer writes, and what every
// t5x reads, its Orbax checkpoint manager included) or Orbax's (OCDBT +
// zarr, orbax_checkpoint.h; what t5x writes with `train.use_orbax = True`).
enum class CheckpointFormat { kLegacy, kOrbax };

struct SaveOptions {
  CheckpointFormat format = CheckpointFormat::kLegacy;
  // Compress chunks: legacy: zarr compressor {"id":"gzip","level":gzip_level};
  // Orbax: {"id":"zstd","level":1}, what Orbax writes.
  bool gzip = true;
  int gzip_level = 1;   // 1 = what TensorStore writes by default.
  // Arrays larger than this are split into several zarr chunks with t5x's
  // rule (see ChooseChunkShape); 64 MiB is t5x's _DESIRED_CHUNK_SIZE_BYTES.
  // <= 0: always one chunk per array.
  int64_t max_chunk_bytes = 64LL * 1024 * 1024;
  // Threads compressing and writing arrays (one array per job, as
  // TensorStore writes t5x's); 0 = all hardware threads. A background save
  // beside training may want fewer.
  int num_threads = 0;
};

// A small file stored beside the arrays (e.g. a dataset state), named by a
// plain file name.
struct ExtraFile {
  std::string name;
  std::string content;
};

// The file holding process `index` of `count`'s data pipeline state:
// "t5xx_train_ds-000-of-001.json" (t5x names its tf.data checkpoints
// train_ds-000-of-001).
std::string DatasetStateFileName(int index, int count);
// The process count of a DatasetStateFileName, or nullopt for another name.
std::optional<int> DatasetStateFileCount(const std::string& file_name);

// Several processes writing one checkpoint, each the boxes of the arrays it
// is the primary replica of (ArrayRef::box, ::write; t5x: "each host
// writes its own slices"): arrays are global, their .zarray holds the global
// shape and chunks divide each box, so no two processes write one file.
// Process 0 makes the temporary directory before anyone writes
// (BeginShardedSave, called on the caller's thread; the caller shares its
// name with the others, e.g. by a broadcast of `stamp`); each process then
// saves its part with SaveCheckpoint(..., sharded), which only writes files
// (sharded_commit.h): process 0 waits for the others' done-markers, merges
// their checksums, writes the index last and commits as above. Inline
// (msgpack) arrays must be whole on every process; process 0's are written.
struct ShardedSave {
  int process_index = 0;
  int process_count = 1;  // 1: an ordinary, one-process save
  std::string tmp_dir;    // BeginShardedSave's directory (process_count > 1)
  // How long process 0 waits for the others to finish their parts; it
  // stops waiting early once *cancel (when set) is true.
  double wait_seconds = 600;
  const std::atomic<bool>* cancel = nullptr;
};

// The temporary directory of a sharded save: checkpoint_<step>.tmp-<stamp>.
std::string ShardedTemporaryDir(const std::string& model_dir, int64_t step, int64_t stamp);

// Process 0, before any process writes: refuses an existing
// checkpoint_<step> (as SaveCheckpoint does) and makes (empties) the
// temporary directory; returns it. Throws t5xx::Error naming the directory.
std::string BeginShardedSave(const std::string& model_dir, int64_t step, int64_t stamp);

// Writes model_dir/checkpoint_<step>/ atomically (see the commit above).
// `step` also goes to optimizer.state.step (inline int32 ndarray; int64 if it
// does not fit). Returns the final directory. Throws t5xx::Error on bad input
// (duplicate or conflicting paths, empty path components, null data, an
// extra file name that is not a plain new name), if the final directory
// already exists, and on I/O failure -- naming the path and the system's
// reason, saying that the partial files were removed and that earlier
// checkpoints are intact. With `sharded` (process_count > 1) it writes this
// process's part (see ShardedSave); process 0 also waits for the others and
// commits, and throws naming a process that failed or never finished (the
// checkpoint is then not committed); another process returns once its part
// is durable (the directory it returns may not be committed yet).
std::string SaveCheckpoint(const std::string& model_dir, int64_t step,
                           const std::vector<ArrayRef>& arrays,
                           const SaveOptions& options = {},
                           const std::vector<ExtraFile>& extra_files = {},
                           const ShardedSave& sharded = {});

struct OrbaxListing;  // orbax_checkpoint.h

// Reads a checkpoint lazily: the index and checksums at construction, then
// any array, or any slice of one, on demand -- so a process reads only the
// part of each array it owns. Works on t5xx's and t5x's legacy checkpoints
// (see LoadCheckpoint) and on t5x's Orbax checkpoints (state/manifest.ocdbt,
// orbax_checkpoint.h); with t5xx's checksums sidecar every chunk and file
// read is verified.
class CheckpointReader {
 public:
  // Throws what LoadCheckpoint throws for the index.
  explicit CheckpointReader(const std::string& checkpoint_dir);

  const std::string& dir() const { return dir_; }
  int64_t step() const { return step_; }
  int version() const { return listing_.version; }
  bool has_checksums() const { return sums_.has_value(); }
  // Every array (dotted path under 'optimizer', except "state.step").
  const std::map<std::string, IndexEntry>& arrays() const { return listing_.entries; }
  // `box` of array `path` (nullopt: all of it). Safe to call from several
  // threads at once. Throws t5xx::Error for an
  // unknown path, a box outside the array, a missing, corrupted or
  // truncated chunk (naming the array and the chunk file).
  LoadedArray Read(const std::string& path, const std::optional<Box>& box = std::nullopt);
  // The content of a file stored with SaveCheckpoint's extra_files;
  // nullopt when absent. Verified against the checksums.
  std::optional<std::string> ReadExtraFile(const std::string& name);
  // Stored (compressed) bytes read so far.
  uint64_t bytes_read() const { return bytes_read_.load(); }

 private:
  std::string dir_;
  IndexListing listing_;
  std::optional<ChunkChecksums> sums_;
  std::shared_ptr<const OrbaxListing> orbax_;  // an Orbax checkpoint's arrays
  int64_t step_ = 0;
  std::atomic<uint64_t> bytes_read_{0};
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

// Whether `dir` is a checkpoint CheckpointReader reads: a legacy one (its
// msgpack `checkpoint` index) or an Orbax one (state/manifest.ocdbt).
bool IsCheckpointDir(const std::string& dir);

// Steps of the finished checkpoint_<N> directories in model_dir, ascending
// (".tmp-" directories are ignored). Empty if model_dir does not exist.
std::vector<int64_t> ListCheckpointSteps(const std::string& model_dir);

// Deletes the checkpoint_<N>.tmp-* directories a crashed or killed save left
// in model_dir; returns their paths. Only one run may write a MODEL_DIR, so
// call it at start-up, before saving. Throws t5xx::Error naming a directory
// that cannot be removed.
std::vector<std::string> RemoveTemporaryCheckpoints(const std::string& model_dir);

// Which checkpoints to keep (t5x's SaveCheckpointConfig.keep and
// keep_dataset_checkpoints, Checkpointer's force_keep_period).
struct RetentionPolicy {
  std::optional<int64_t> keep;                      // newest N; None = all
  std::optional<int64_t> keep_dataset_checkpoints;  // newest N dataset states
  std::optional<int64_t> force_keep_period;         // never delete step % k == 0
  // When set (t5x's SaveBestCheckpointer, save_best.h), the steps to
  // delete of the checkpoints' steps (ascending), instead of the oldest
  // beyond `keep`.
  std::function<std::vector<int64_t>(const std::vector<int64_t>& steps)> choose_removals;
};

// Applies `policy` to model_dir: deletes the oldest checkpoints beyond
// `keep` (not counting those force_keep_period protects; the newest is
// never deleted), each renamed to a .tmp- name first so readers never see
// half a checkpoint, and the dataset state files of all but the newest
// keep_dataset_checkpoints checkpoints. Returns what it deleted. Throws
// t5xx::Error naming what cannot be deleted.
std::vector<std::string> ApplyRetention(const std::string& model_dir,
                                        const RetentionPolicy& policy);

// Directory name t5x uses: model_dir/checkpoint_<step>.
std::string CheckpointDir(const std::string& model_dir, int64_t step);

}  // namespace t5xx::checkpoints
