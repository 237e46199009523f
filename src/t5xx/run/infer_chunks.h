// What a chunk of `t5xx infer`'s output covers, so that a rerun reuses
// exactly the chunks that still hold what it would write. t5x resumes by
// chunk number alone; a rerun with another batch_size or checkpoint_period
// then cuts the examples differently and duplicates or drops some (issue
// 32). t5xx writes a record into each chunk's .COMPLETED marker (t5x's
// marker is empty; only its existence counts there):
//   {"t5xx_infer_chunk": 1, "examples": [first, end), "cut": {"batch_size",
//    "checkpoint_period"}, "settings": {name: value}}
// `examples` are indices into the task's examples of this shard, in order;
// `settings` are what decides each example's line: the operative gin values
// (without the ones that only cut chunks or name the output), the restored
// checkpoint, the data directory, and the batch size when decoding samples
// (one generator per chunk draws batch after batch). The merged file's
// marker holds the same record for all the examples.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace t5xx::run {

struct InferChunkRecord {
  int64_t first = 0;  // the first example's index
  int64_t end = 0;    // one past the last
  int64_t batch_size = 0;
  int64_t checkpoint_period = 0;
  std::map<std::string, std::string> settings;
};

// The marker's text.
std::string InferChunkRecordJson(const InferChunkRecord& r);

// The record in marker `path`; nullopt for an empty marker (t5x's, or one
// written before t5xx kept records). Throws t5xx::Error naming `path` for a
// marker that is neither.
std::optional<InferChunkRecord> ReadInferChunkRecord(const std::string& path);

// Why chunk `name`, recorded as `old`, cannot stand for `wanted`: "" when it
// can. Names the first setting that differs ("it was written with
// t5x.utils.DatasetConfig.split = 'train'; this run has 'validation'") or
// how each cut the examples. `compare_range`: false for a merged file,
// whose examples are counted only once they are all read.
std::string InferChunkMismatch(const std::string& name, const InferChunkRecord& old,
                               const InferChunkRecord& wanted, bool compare_range = true);

}  // namespace t5xx::run
