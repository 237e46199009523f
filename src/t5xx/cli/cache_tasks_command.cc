// `t5xx cache_tasks`: seqio_cache_tasks (seqio/scripts/cache_tasks_main.py)
// for t5xx: writes the offline caches of registered tasks
// (data/cache_tasks/cache_tasks.h) into --output_cache_dir, in seqio's layout, so that
// seqio and t5xx runs can read them (use_cached).
//
//   t5xx cache_tasks --output_cache_dir=DIR [--tasks=RE1,RE2]
//       [--excluded_tasks=RE,...] [--min_shards=64] [--max_shards=0]
//       [--base_seed=N] [--overwrite=true|false] [--output_format=tfrecord]
//       [--tasks_additional_cache_dirs=D1,D2] [--num_threads=1]
//       [--worker_index=W --num_workers=N] [--wait_timeout_s=3600]
//       [--gin_file=... --gin.NAME=... --gin_bindings=...] [--data_dir=DIR]
//       [--skip_bad_records=true] [--module_import=t5.data.mixtures]
//       [--tfds_data_dir=DIR]
//
// seqio's flags keep seqio's meaning (comma lists of regexes; --overwrite
// and --nooverwrite are accepted as absl writes booleans); the tasks are
// those `t5xx train`/`t5xx data` register: the demo tasks (under
// --data_dir), the gin-defined ones (t5xx.seqio.register) and, with
// --module_import=t5.data.mixtures (seqio's flag), t5's catalog over the
// TFDS data in --tfds_data_dir. Workers: by
// default the launcher's rank and world size (partitioning/
// process_environment.h: torchrun, srun, mpirun), else 0 of 1. Prints one
// line per task and split: examples, tokens, shards, seconds, examples/s,
// tokens/s (the split's totals on the worker that finalizes it, else this
// worker's part); progress goes to stderr.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "t5xx/cli/commands.h"
#include "t5xx/cli/task_flags.h"
#include "t5xx/config/flags.h"
#include "t5xx/config/reading.h"
#include "t5xx/data/cache_tasks/cache_tasks.h"
#include "t5xx/data/tfds/tfds_data_source.h"
#include "t5xx/demo/corpus_builder.h"
#include "t5xx/partitioning/launch/process_environment.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/storage/staged_output.h"
#include "t5xx/storage/url.h"
#include "t5xx/util/error.h"

namespace t5xx::cli {
namespace {

constexpr char kCommand[] = "t5xx cache_tasks";

// absl's flags.DEFINE_list: "a,b" -> {"a", "b"}; an empty item is refused.
std::vector<std::string> ParseList(const std::string& flag, const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  for (std::string item; std::getline(ss, item, ',');) {
    T5XX_CHECK(!item.empty(), std::string(kCommand) + ": --" + flag +
                                  " has an empty item in '" + v + "' (a comma list)");
    out.push_back(item);
  }
  return out;
}

std::string Rate(double n, double seconds) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << (seconds > 0 ? n / seconds : 0.0);
  return s.str();
}

}  // namespace

int CacheTasksCommand(const std::vector<std::string>& args_in) {
  // absl booleans: --overwrite / --nooverwrite.
  std::vector<std::string> rest;
  for (const std::string& a : args_in) {
    rest.push_back(a == "--overwrite" ? "--overwrite=true"
                   : a == "--nooverwrite" ? "--overwrite=false" : a);
  }
  run::LoadedTrainConfig gin = TakeGinTaskFlags(&rest);
  auto f = ParseFlags(rest,
                      {"tasks", "excluded_tasks", "output_cache_dir", "tasks_additional_cache_dirs",
                       "min_shards", "max_shards", "base_seed", "overwrite", "output_format",
                       "num_threads", "worker_index", "num_workers", "wait_timeout_s",
                       "data_dir", "skip_bad_records", "module_import", "tfds_data_dir"},
                      "cache_tasks");
  seqio::CacheTasksOptions o;
  // Where TFDS-prepared data lies (t5x's flag; also $TFDS_DATA_DIR).
  if (f.count("tfds_data_dir")) {
    T5XX_CHECK(!f["tfds_data_dir"].empty(),
               std::string(kCommand) + ": --tfds_data_dir has an empty value; give a directory");
    seqio::SetTfdsDataDirOverride(f["tfds_data_dir"]);
  }
  T5XX_CHECK(f.count("output_cache_dir"),
             std::string(kCommand) + ": --output_cache_dir=DIR is required (where the caches "
                                     "are written, one directory per task)");
  o.output_cache_dir = storage::StagedOutputPath(f["output_cache_dir"], "--output_cache_dir");
  if (f.count("tasks")) o.tasks = ParseList("tasks", f["tasks"]);
  if (f.count("excluded_tasks")) o.excluded_tasks = ParseList("excluded_tasks", f["excluded_tasks"]);
  if (f.count("tasks_additional_cache_dirs")) {
    o.additional_cache_dirs =
        ParseList("tasks_additional_cache_dirs", f["tasks_additional_cache_dirs"]);
  }
  if (f.count("min_shards")) o.min_shards = ParseIntFlag(kCommand, "min_shards", f["min_shards"], 0);
  if (f.count("max_shards")) o.max_shards = ParseIntFlag(kCommand, "max_shards", f["max_shards"], 0);
  if (f.count("base_seed")) o.base_seed = ParseIntFlag(kCommand, "base_seed", f["base_seed"], INT64_MIN);
  if (f.count("overwrite")) o.overwrite = ParseBoolFlag(kCommand, "overwrite", f["overwrite"]);
  if (f.count("output_format")) {
    const std::string& v = f["output_format"];
    T5XX_CHECK(v != "arrayrecord",
               std::string(kCommand) + ": --output_format=arrayrecord is not supported: t5xx "
                                       "writes and reads TFRecord caches only (seqio's "
                                       "ArrayRecord output needs Google's array_record "
                                       "library); use --output_format=tfrecord");
    T5XX_CHECK(v == "tfrecord", std::string(kCommand) + ": --output_format must be tfrecord "
                                                        "(or seqio's arrayrecord), got '" + v + "'");
  }
  if (f.count("num_threads")) {
    o.num_threads = static_cast<int>(ParseIntFlag(kCommand, "num_threads", f["num_threads"], 1));
  }
  // Workers: the flags, else the launcher's environment.
  const std::optional<partitioning::ProcessEnvironment> env =
      partitioning::DetectProcessEnvironment([](const char* name) -> const char* {
        // Only rank and size matter here: no rendezvous, so no master
        // address is needed (mpirun does not set one).
        const char* v = std::getenv(name);
        if (!v && std::strcmp(name, "MASTER_ADDR") == 0) return "unused";
        return v;
      });
  o.num_workers = env ? env->world_size : 1;
  o.worker_index = env ? env->rank : 0;
  if (f.count("num_workers")) {
    o.num_workers = static_cast<int>(ParseIntFlag(kCommand, "num_workers", f["num_workers"], 1));
  }
  if (f.count("worker_index")) {
    o.worker_index = static_cast<int>(ParseIntFlag(kCommand, "worker_index", f["worker_index"], 0));
  }
  T5XX_CHECK(o.worker_index < o.num_workers,
             std::string(kCommand) + ": --worker_index must be in [0, --num_workers = " +
                 std::to_string(o.num_workers) + "), got " + std::to_string(o.worker_index) +
                 (env && !f.count("worker_index") ? " (from the " + env->launcher + " environment)"
                                                  : std::string()));
  if (f.count("wait_timeout_s")) {
    o.wait_timeout_s = static_cast<double>(ParseIntFlag(kCommand, "wait_timeout_s", f["wait_timeout_s"], 1));
  }
  o.log = &std::cerr;

  const std::optional<std::string> demo_problem = RegisterFlagTasks(gin, f, "cache_tasks");

  seqio::CacheTasksReport report;
  try {
    report = seqio::CacheTasks(o);
  } catch (const Error& e) {
    const std::string msg = e.what();
    throw Error(msg.rfind("t5xx", 0) == 0 ? msg : std::string(kCommand) + ": " + msg);
  }
  if (report.splits.empty() && report.skipped.empty() && demo_problem) {
    std::cerr << "[cache_tasks] note: the demo tasks are not registered: " << *demo_problem
              << "\n";
  }
  for (const std::string& s : report.skipped) std::cout << "skipped " << s << "\n";
  for (const seqio::CacheSplitReport& r : report.splits) {
    std::cout << r.task << " " << r.split << ": ";
    if (r.already_done) {
      std::cout << "already cached (" << r.num_shards << " shards)\n";
      continue;
    }
    const int64_t examples = r.finalized ? r.total_examples : r.examples;
    const int64_t tokens = r.finalized ? r.total_tokens : r.tokens;
    std::cout << "examples " << examples << ", tokens " << tokens << ", shards " << r.num_shards
              << ", seconds " << Rate(r.seconds, 1) << ", examples/s " << Rate(examples, r.seconds)
              << ", tokens/s " << Rate(tokens, r.seconds)
              << (r.finalized ? "" : " (this worker's map items; worker 0 finalizes)") << "\n";
  }
  // A bucket's --output_cache_dir: worker 0, which finalizes once every
  // worker is done, uploads the staged caches.
  if (o.worker_index == 0) {
    for (const std::string& line : storage::UploadStagedOutputs()) std::cout << line << "\n";
  }
  return 0;
}

}  // namespace t5xx::cli
