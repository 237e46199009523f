// The work items of `t5xx cache_tasks` for one split of one task: MAP (one
// source shard through the pre-cache steps into shuffled buckets), REDUCE
// (one output shard from bucket j of every map item) and FINALIZE (info and
// stats), each published atomically so that a killed worker leaves nothing
// that looks complete and a re-run does only what is missing. The driver
// that plans, assigns and waits is cache_tasks.h.
//
// Behaviour source: seqio/beam_utils.py (PreprocessTask, WriteExampleTfRecord,
// GetInfo, GetStats) and seqio/scripts/cache_tasks_main.py (the Beam
// pipeline: emit examples per source shard, beam.Reshuffle, write M shards,
// info, stats). Beam's Reshuffle is replaced by a deterministic shuffle: each
// example gets a 64-bit key from the split's shuffle seed, its source shard
// i and its index k in that shard; it goes to output shard key % M, and each
// output shard is sorted by (key, i, k). The output bytes therefore depend on
// the task, the seeds and the inputs only, never on threads or workers.
//
// Work directory of a split: <output_dir>/.t5xx_cache_tasks/<split>/
//   map-NNNNN/           map item i, published by renaming a finished
//                        map-NNNNN.tmp-<host>-<pid>-<n>/ directory:
//     bucket-JJJJJ       TFRecord of [key u64 LE][k u64 LE][tf.Example] for
//                        the examples going to output shard j (only
//                        non-empty buckets exist)
//     stats.json         {"stats": CacheStats JSON, "features": info features
//                        of its examples or null when it has none}
//   shard-JJJJJ.json     {"examples": n} of output shard j, written before
//                        the shard itself is renamed into place
// Files are written to a temporary name, fsync'ed, renamed, and their
// directory fsync'ed. Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/cache/cache_encoding.h"
#include "t5xx/data/dataset_providers/task.h"

namespace t5xx::seqio {

// Everything that decides a split's cache bytes (written as its plan file).
struct CacheSplitPlan {
  std::string task_name;
  std::string split;
  std::string output_dir;  // <output_cache_dir>/<TaskDirFromName(task)>
  std::string work_dir;    // <output_dir>/.t5xx_cache_tasks/<split>
  std::vector<std::string> source_shards;  // source->ListShards(split): N
  int64_t num_shards = 0;                  // M output shards
  std::vector<uint64_t> shard_seeds;       // CacheShardSeed(...).Reduced(), N of them
  std::vector<std::string> exact_shard_seeds;  // Python's values, for the plan file
  std::string exact_task_seed;                 // "" when there is none
  uint64_t shuffle_seed = 0;

  int64_t num_source_shards() const { return static_cast<int64_t>(source_shards.size()); }
  // The plan file's content: the format version, task, split, M, the source
  // shards (with size and modification time when they are files), the exact
  // seeds and the shuffle seed.
  nlohmann::json ToJson() const;
};

// The directory of a task's work dirs and plan files:
// <output_dir>/.t5xx_cache_tasks.
std::string CacheWorkRoot(const std::string& output_dir);
// <work root>/plan.<split>.json.
std::string CachePlanPath(const std::string& output_dir, const std::string& split);

// Published map item i (its directory exists).
bool MapItemDone(const CacheSplitPlan& plan, int64_t i);
// Published output shard j (its sidecar and its shard file exist).
bool OutputShardDone(const CacheSplitPlan& plan, int64_t j);

// What one map item read.
struct MapItemResult {
  CacheStats stats;
};

// MAP item i: task.source()->GetDataset(split, shuffle=false,
// shard_seeds[i], ShardInfo{i, N}) -> task.PreprocessPrecache(ds,
// shard_seeds[i]); every example is encoded (EncodeCacheExample) into the
// bucket of its output shard; the item is published as map-NNNNN/. An item
// already published is not redone (returns empty stats). Throws t5xx::Error
// naming the task, split and source shard when a step fails, when examples
// have different features (a cache needs one feature set), or on I/O errors
// (naming the file).
MapItemResult RunMapItem(const Task& task, const CacheSplitPlan& plan, int64_t i);

// REDUCE item j (all map items must be published): reads bucket j of every
// map item, sorts by (key, i, k), writes the sidecar shard-JJJJJ.json and
// then <split>.tfrecord-JJJJJ-of-MMMMM (its temporary file in the work dir,
// never beside the shards, where seqio's pattern could match it). Holds
// that one output shard (about 1/M of the split) in memory. Returns its
// number of examples.
// Throws t5xx::Error naming a missing map item or a damaged bucket file.
int64_t RunReduceItem(const CacheSplitPlan& plan, int64_t j);

// FINALIZE (all output shards must be published): sums the map items' stats
// (counted where the examples are at hand, in the map items; sums and maxima
// do not depend on how examples are grouped),
// checks them against the shards' sidecars and that every map item saw the
// same features, writes stats.<split>.json then info.<split>.json (features
// of the first map item with examples; {} when the split has none), then
// removes the split's work dir. Returns the split's stats. Throws
// t5xx::Error naming the task and split for inconsistent parts.
CacheStats FinalizeSplit(const CacheSplitPlan& plan);

// File helpers of the writer (also used by cache_tasks.cc).
// A suffix unique to this host, process and call: "<host>-<pid>-<n>".
std::string UniqueTempSuffix();
// Writes `data` to path via a temporary file "<name>.tmp-<unique>" beside
// it (or in temp_dir, which must be on the same file system), fsync, rename
// and an fsync of path's directory. Throws t5xx::Error naming the path.
void WriteFileDurably(const std::string& path, const std::string& data,
                      const std::string& temp_dir = "");
// Removes `dir` and everything under it, first renaming it aside so that no
// reader sees it half removed. No error when it does not exist.
void RemoveTreeAtomically(const std::string& dir);

}  // namespace t5xx::seqio
