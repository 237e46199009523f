// seqio_cache_tasks without Beam: writes the offline caches of registered
// tasks (the examples after their pre-cache steps) in seqio's layout
// (task_cache.h), deterministically and independently of thread and worker
// counts, resumable after a kill, on one machine or many sharing a file
// system. `t5xx cache_tasks` (cli/cache_tasks_command.cc) is its command.
//
// Behaviour source: seqio/scripts/cache_tasks_main.py (flags, task
// selection, skipping, overwrite, num_shards rule, per-task seed, COMPLETED)
// and seqio/beam_utils.py (PreprocessTask's per-shard work and seeds, GetInfo,
// GetStats). Framework-free: no libtorch.
//
// For each selected task with a CacheDatasetPlaceholder and each split:
//  * plan: N = source->ListShards(split).size() source shards, M output
//    shards (M = max(N, min_shards) if min_shards > 0 else N, then
//    min(M, max_shards) if max_shards > 0), the seeds (cache_seeds.h) and
//    the shuffle seed (HashSeed(task seed mod 2^64, or 0 without
//    --base_seed, 0, kCacheShuffleSeed)); written to
//    <output_dir>/.t5xx_cache_tasks/plan.<split>.json before any work;
//  * MAP items i in [0, N), REDUCE items j in [0, M) and FINALIZE
//    (cache_work_items.h); then, once every split is finalized, the work
//    dir is removed and COMPLETED written last.
// Worker w of W runs the map items i % W == w, waits until every map item is
// published, runs the reduce items j % W == w; worker 0 then waits for every
// output shard and finalizes. Within a worker, items run on num_threads
// threads. A re-run does only what is not published yet.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "t5xx/data/dataset_providers/task.h"

namespace t5xx::seqio {

struct CacheTasksOptions {
  // --tasks / --excluded_tasks: regexes matched as seqio does (each one
  // anchored at both ends; SelectCacheTasks). Empty tasks = every task.
  std::vector<std::string> tasks;
  std::vector<std::string> excluded_tasks;
  std::string output_cache_dir;  // required
  // --tasks_additional_cache_dirs: where else an existing cache of a task
  // makes it skipped (with the global cache dirs and output_cache_dir).
  std::vector<std::string> additional_cache_dirs;
  int64_t min_shards = 64;  // seqio's default; 0 = no minimum
  int64_t max_shards = 0;   // 0 = no maximum
  std::optional<int64_t> base_seed;  // seqio: none, 0 and -1 all mean none
  // Replace a COMPLETED cache in output_cache_dir, or an unfinished one
  // begun with another plan. An unfinished one with the same plan is
  // resumed either way (its published parts are the bytes a fresh run
  // writes).
  bool overwrite = false;
  int num_threads = 1;
  int worker_index = 0;
  int num_workers = 1;
  double wait_timeout_s = 3600;  // waiting for other workers' items
  double poll_interval_s = 1;
  double log_interval_s = 30;    // how often a waiting worker says so
  std::ostream* log = nullptr;   // progress lines; null = none
};

// What one call did for one split.
struct CacheSplitReport {
  std::string task;
  std::string split;
  int64_t num_shards = 0;
  int64_t map_items_run = 0;     // by this call (published ones are skipped)
  int64_t reduce_items_run = 0;
  int64_t examples = 0;          // read by this call's map items
  int64_t tokens = 0;            // their tokens (every "<f>_tokens" summed)
  bool already_done = false;     // finalized before this call
  bool finalized = false;        // this call wrote info/stats; totals below
  int64_t total_examples = 0;
  int64_t total_tokens = 0;
  double seconds = 0;
};

struct CacheTasksReport {
  std::vector<CacheSplitReport> splits;
  std::vector<std::string> skipped;  // "<task>: why", in task order
};

// The names of `names` that match one of `tasks` (every name when empty)
// and none of `excluded`, as cache_tasks_main.run_pipeline: the patterns
// are joined as "(p1$|p2$|...)" and matched from the start of the name
// (re.match). Throws t5xx::Error naming the flag for a bad regex.
std::vector<std::string> SelectCacheTasks(const std::vector<std::string>& names,
                                          const std::vector<std::string>& tasks,
                                          const std::vector<std::string>& excluded);

// Caches the selected tasks of `registry` (see the file comment). Tasks
// without a placeholder, without splits, or already cached (COMPLETED in
// output_cache_dir without overwrite, or in another cache dir) are skipped
// and named in the report. Throws t5xx::Error for bad options (naming the
// option), a task whose source has no shards, an unfinished cache begun
// with another plan (without overwrite: "... use --overwrite"), a failing
// step (naming task, split, source shard), I/O errors, and waiting longer
// than wait_timeout_s for other workers (naming the missing items).
CacheTasksReport CacheTasks(const CacheTasksOptions& options,
                            const TaskRegistry& registry = TaskRegistry::Global());

}  // namespace t5xx::seqio
