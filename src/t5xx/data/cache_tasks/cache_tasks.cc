// seqio_cache_tasks without Beam: selection, plans, workers and threads (see
// cache_tasks.h; the work items are cache_work_items.h).
#include "t5xx/data/cache_tasks/cache_tasks.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <mutex>
#include <regex>
#include <thread>

#include "t5xx/data/cache/task_cache.h"
#include "t5xx/data/cache_tasks/cache_seeds.h"
#include "t5xx/data/cache_tasks/cache_work_items.h"
#include "t5xx/data/pipeline/seed_purposes.h"
#include "t5xx/data/sources/function_source.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/hash.h"
#include "t5xx/util/json_text.h"

namespace t5xx::seqio {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Progress lines, whole lines at a time from any thread.
class Log {
 public:
  explicit Log(std::ostream* out) : out_(out) {}
  void operator()(const std::string& line) const {
    if (!out_) return;
    std::lock_guard<std::mutex> lock(mu_);
    *out_ << "[cache_tasks] " << line << std::endl;
  }

 private:
  std::ostream* out_;
  mutable std::mutex mu_;
};

std::regex SeqioTaskRegex(const std::vector<std::string>& patterns, const std::string& flag) {
  // re.compile(r"(%s\Z)" % r"\Z|".join(patterns)); ECMAScript's $ is \Z.
  std::string joined;
  for (size_t i = 0; i < patterns.size(); ++i) joined += (i ? "$|" : "") + patterns[i];
  try {
    return std::regex("(" + joined + "$)");
  } catch (const std::regex_error& e) {
    throw Error("--" + flag + ": '" + joined + "' is not a valid regular expression (" +
                e.what() + ")");
  }
}

void CheckOptions(const CacheTasksOptions& o) {
  T5XX_CHECK(!o.output_cache_dir.empty(),
             "--output_cache_dir is required (the directory the caches are written to)");
  T5XX_CHECK(o.min_shards >= 0, "--min_shards must be >= 0, got " + std::to_string(o.min_shards));
  T5XX_CHECK(o.max_shards >= 0, "--max_shards must be >= 0, got " + std::to_string(o.max_shards));
  T5XX_CHECK(o.num_threads >= 1, "--num_threads must be >= 1, got " + std::to_string(o.num_threads));
  T5XX_CHECK(o.num_workers >= 1, "--num_workers must be >= 1, got " + std::to_string(o.num_workers));
  T5XX_CHECK(o.worker_index >= 0 && o.worker_index < o.num_workers,
             "--worker_index must be in [0, --num_workers = " + std::to_string(o.num_workers) +
                 "), got " + std::to_string(o.worker_index));
  T5XX_CHECK(o.wait_timeout_s > 0, "--wait_timeout_s must be > 0");
  T5XX_CHECK(o.poll_interval_s > 0 && o.log_interval_s > 0,
             "cache_tasks: poll_interval_s and log_interval_s must be > 0");
}

// Runs fn(item) for every item on up to num_threads threads; the first
// error stops the others from starting new items and is rethrown.
void RunOnThreads(int num_threads, const std::vector<int64_t>& items,
                  const std::function<void(int64_t)>& fn) {
  const int n = std::min<int>(num_threads, static_cast<int>(items.size()));
  if (n <= 1) {
    for (int64_t item : items) fn(item);
    return;
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&] {
      while (!failed.load()) {
        const size_t at = next.fetch_add(1);
        if (at >= items.size()) return;
        try {
          fn(items[at]);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mu);
          if (!error) error = std::current_exception();
          failed = true;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  if (error) std::rethrow_exception(error);
}

// Polls `missing` (the items still missing, empty when done) until it is
// empty or `stop` is true; logs what it waits for every log_interval_s and
// throws after wait_timeout_s naming the missing items.
void WaitFor(const CacheTasksOptions& o, const Log& log, const std::string& what,
             const std::function<std::vector<std::string>()>& missing,
             const std::function<bool()>& stop) {
  const Clock::time_point start = Clock::now();
  Clock::time_point last_log = start;
  while (true) {
    if (stop()) return;
    const std::vector<std::string> left = missing();
    if (left.empty()) return;
    std::string names;
    for (size_t i = 0; i < left.size() && i < 5; ++i) names += (i ? ", " : "") + left[i];
    if (left.size() > 5) names += ", ... (" + std::to_string(left.size()) + " in all)";
    T5XX_CHECK(SecondsSince(start) < o.wait_timeout_s,
               "cache_tasks: worker " + std::to_string(o.worker_index) + " of " +
                   std::to_string(o.num_workers) + " waited " +
                   std::to_string(static_cast<int64_t>(o.wait_timeout_s)) + " s for " + what +
                   "; still missing: " + names +
                   " (are all workers running with the same flags? re-run the missing "
                   "workers, or raise --wait_timeout_s)");
    if (std::chrono::duration<double>(Clock::now() - last_log).count() >= o.log_interval_s) {
      log("worker " + std::to_string(o.worker_index) + " waiting for " + what + ": " + names);
      last_log = Clock::now();
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(o.poll_interval_s));
  }
}

CacheSplitPlan MakePlan(const Task& task, const std::string& split, const std::string& output_dir,
                        const CacheTasksOptions& o) {
  CacheSplitPlan plan;
  plan.task_name = task.name();
  plan.split = split;
  plan.output_dir = output_dir;
  plan.work_dir = CacheWorkRoot(output_dir) + "/" + split;
  plan.source_shards = task.source()->ListShards(split);
  const int64_t n = plan.num_source_shards();
  T5XX_CHECK(n > 0, "cache_tasks: no shards found for task '" + task.name() + "' split '" +
                        split + "' (its source lists none)");
  int64_t m = o.min_shards > 0 ? std::max(n, o.min_shards) : n;
  if (o.max_shards > 0) m = std::min(m, o.max_shards);
  plan.num_shards = m;
  const std::optional<CacheSeed> task_seed = CacheTaskSeed(task.name(), o.base_seed);
  if (task_seed) plan.exact_task_seed = task_seed->ToString();
  for (int64_t i = 0; i < n; ++i) {
    const CacheSeed s = CacheShardSeed(task.name(), i, task_seed);
    plan.shard_seeds.push_back(s.Reduced());
    plan.exact_shard_seeds.push_back(s.ToString());
  }
  plan.shuffle_seed = HashSeed(task_seed ? task_seed->Reduced() : 0, 0,
                               seed_purpose::kCacheShuffleSeed);
  return plan;
}

// "" when the plan file at path is absent or equal to want, else why not.
std::string PlanDifference(const std::string& path, const nlohmann::json& want) {
  if (!FileExists(path)) return "";
  nlohmann::json have;
  std::string error;
  if (!ParseJsonKeepingBytes(ReadFileToString(path), &have, &error)) return "it is not JSON";
  if (have == want) return "";
  std::string keys;
  for (const auto& [k, v] : want.items()) {
    if (!have.contains(k) || have[k] != v) keys += (keys.empty() ? "" : ", ") + k;
  }
  return "it differs in " + (keys.empty() ? std::string("its fields") : keys);
}

// Makes output_dir hold either nothing or an unfinished cache with exactly
// `plans`, then writes the missing plan files. Worker 0 replaces a stale
// directory (COMPLETED, or another plan) when overwrite; other workers wait
// for that.
void PrepareTaskDir(const std::string& output_dir, const std::vector<CacheSplitPlan>& plans,
                    const CacheTasksOptions& o, const Log& log) {
  const std::string completed = output_dir + "/COMPLETED";
  auto stale = [&]() -> std::string {
    if (FileExists(completed)) return "it is COMPLETED";
    for (const CacheSplitPlan& p : plans) {
      const std::string path = CachePlanPath(output_dir, p.split);
      const std::string diff = PlanDifference(path, p.ToJson());
      if (!diff.empty()) return "its plan '" + path + "' is another run's: " + diff;
    }
    return "";
  };
  const std::string why = stale();
  if (!why.empty()) {
    T5XX_CHECK(o.overwrite,
               "cache_tasks: '" + output_dir + "' holds an unfinished cache of task '" +
                   plans[0].task_name + "' begun with other flags or inputs (" + why +
                   "); re-run with --overwrite=true to replace it, or with the flags of that "
                   "run to finish it");
    if (o.worker_index == 0) {
      log("replacing '" + output_dir + "' (--overwrite): " + why);
      RemoveTreeAtomically(output_dir);
    } else {
      WaitFor(o, log, "worker 0 to replace '" + output_dir + "' (--overwrite)",
              [&] { return stale().empty() ? std::vector<std::string>{}
                                           : std::vector<std::string>{output_dir}; },
              [] { return false; });
    }
  }
  MakeDirs(CacheWorkRoot(output_dir));
  for (const CacheSplitPlan& p : plans) {
    const std::string path = CachePlanPath(output_dir, p.split);
    if (!FileExists(path)) WriteFileDurably(path, DumpJson(p.ToJson(), 2) + "\n");
    // Two workers with different flags may both have written one: refuse.
    const std::string diff = PlanDifference(path, p.ToJson());
    T5XX_CHECK(diff.empty(), "cache_tasks: '" + path + "' was written by another run (" + diff +
                                 "); give every worker the same flags, or re-run with "
                                 "--overwrite=true");
  }
}

int64_t TokenSum(const CacheStats& s) {
  int64_t n = 0;
  for (const auto& [k, v] : s.tokens) n += v;
  return n;
}

CacheSplitReport CacheSplit(const Task& task, const CacheSplitPlan& plan,
                            const CacheTasksOptions& o, const Log& log) {
  const Clock::time_point start = Clock::now();
  CacheSplitReport r;
  r.task = plan.task_name;
  r.split = plan.split;
  r.num_shards = plan.num_shards;
  const std::string info = CachedInfoPath(plan.output_dir, plan.split);
  if (FileExists(info)) {
    r.already_done = true;
    return r;
  }
  const int64_t n = plan.num_source_shards(), m = plan.num_shards;
  const int64_t w = o.worker_index, nw = o.num_workers;
  std::vector<int64_t> maps, reduces;
  for (int64_t i = w; i < n; i += nw) {
    if (!MapItemDone(plan, i)) maps.push_back(i);
  }
  std::mutex mu;
  RunOnThreads(o.num_threads, maps, [&](int64_t i) {
    const MapItemResult item = RunMapItem(task, plan, i);
    std::lock_guard<std::mutex> lock(mu);
    ++r.map_items_run;
    r.examples += item.stats.examples;
    r.tokens += TokenSum(item.stats);
  });
  auto finalized = [&] { return FileExists(info); };
  WaitFor(o, log, "the map items of " + plan.task_name + "/" + plan.split,
          [&] {
            std::vector<std::string> left;
            for (int64_t i = 0; i < n; ++i) {
              if (!MapItemDone(plan, i)) {
                left.push_back("map item " + std::to_string(i) + " (worker " +
                               std::to_string(i % nw) + ")");
              }
            }
            return left;
          },
          finalized);
  if (finalized()) {
    r.seconds = SecondsSince(start);
    return r;
  }
  for (int64_t j = w; j < m; j += nw) {
    if (!OutputShardDone(plan, j)) reduces.push_back(j);
  }
  RunOnThreads(o.num_threads, reduces, [&](int64_t j) {
    RunReduceItem(plan, j);
    std::lock_guard<std::mutex> lock(mu);
    ++r.reduce_items_run;
  });
  if (w == 0) {
    WaitFor(o, log, "the output shards of " + plan.task_name + "/" + plan.split,
            [&] {
              std::vector<std::string> left;
              for (int64_t j = 0; j < m; ++j) {
                if (!OutputShardDone(plan, j)) {
                  left.push_back("output shard " + std::to_string(j) + " (worker " +
                                 std::to_string(j % nw) + ")");
                }
              }
              return left;
            },
            [] { return false; });
    const CacheStats total = FinalizeSplit(plan);
    r.finalized = true;
    r.total_examples = total.examples;
    r.total_tokens = TokenSum(total);
  }
  r.seconds = SecondsSince(start);
  return r;
}

}  // namespace

std::vector<std::string> SelectCacheTasks(const std::vector<std::string>& names,
                                          const std::vector<std::string>& tasks,
                                          const std::vector<std::string>& excluded) {
  const std::regex included = SeqioTaskRegex(tasks.empty() ? std::vector<std::string>{".*"} : tasks,
                                             "tasks");
  const std::regex excluded_re = SeqioTaskRegex(excluded, "excluded_tasks");
  std::vector<std::string> out;
  const auto from_start = std::regex_constants::match_continuous;
  for (const std::string& name : names) {
    if (std::regex_search(name, included, from_start) &&
        !std::regex_search(name, excluded_re, from_start)) {
      out.push_back(name);
    }
  }
  return out;
}

CacheTasksReport CacheTasks(const CacheTasksOptions& o, const TaskRegistry& registry) {
  CheckOptions(o);
  const Log log(o.log);
  CacheTasksReport report;
  const std::vector<std::string> names =
      SelectCacheTasks(registry.Names(), o.tasks, o.excluded_tasks);
  if (names.empty()) {
    // seqio_cache_tasks logs this and exits 0; t5xx refuses it (nothing to do
    // is a mistake in the command, e.g. a gin-defined task without its
    // --gin_file).
    const std::vector<std::string> all = registry.Names();
    std::string known;
    for (size_t i = 0; i < all.size() && i < 20; ++i) known += (i ? ", " : "") + all[i];
    if (all.size() > 20) known += ", ... (" + std::to_string(all.size()) + " in all)";
    std::string tasks;
    for (const std::string& t : o.tasks) tasks += (tasks.empty() ? "" : ",") + t;
    throw Error("--tasks=" + (tasks.empty() ? std::string(".*") : tasks) +
                " selects no registered task" +
                (o.excluded_tasks.empty() ? std::string() : " not excluded by --excluded_tasks") +
                "; registered: " + (known.empty() ? std::string("none") : known) +
                ". A task defined in gin is registered by the --gin_file that defines it");
  }
  std::vector<std::string> search = GetGlobalCacheDirs();
  search.push_back(o.output_cache_dir);
  search.insert(search.end(), o.additional_cache_dirs.begin(), o.additional_cache_dirs.end());
  for (const std::string& name : names) {
    const TaskRegistry::Ptr task = registry.Get(name);
    auto skip = [&](const std::string& why) {
      report.skipped.push_back(name + ": " + why);
      log("skipping task '" + name + "': " + why);
    };
    if (!task->supports_caching()) {
      skip("it does not support caching (no CacheDatasetPlaceholder)");
      continue;
    }
    const std::string output_dir = o.output_cache_dir + "/" + TaskDirFromName(name);
    const std::optional<std::string> existing = FindTaskCacheDir(name, search);
    if (existing && *existing != output_dir) {
      skip("it is cached in '" + *existing + "'" +
           (o.overwrite ? " (--overwrite replaces only a cache in --output_cache_dir)" : ""));
      continue;
    }
    if (existing && !o.overwrite) {
      skip("it is cached in '" + *existing + "' (--overwrite=true rebuilds it)");
      continue;
    }
    const std::vector<std::string> splits = task->splits();
    if (splits.empty()) {
      skip("it has no splits");
      continue;
    }
    if (dynamic_cast<const FunctionDataSource*>(task->source().get())) {
      log("task '" + name + "' reads a FunctionDataSource: one source shard, so one map item "
          "(a sharded file source spreads over threads and workers)");
    }
    std::vector<CacheSplitPlan> plans;
    for (const std::string& split : splits) plans.push_back(MakePlan(*task, split, output_dir, o));
    // A worker with no item of this task is not needed by the others (and
    // could not tell an old COMPLETED from the one worker 0 writes).
    bool has_items = o.worker_index == 0;
    for (const CacheSplitPlan& p : plans) {
      has_items = has_items || o.worker_index < std::max(p.num_source_shards(), p.num_shards);
    }
    if (!has_items) {
      log("worker " + std::to_string(o.worker_index) + " has no work item of task '" + name + "'");
      continue;
    }
    PrepareTaskDir(output_dir, plans, o, log);
    log("caching task '" + name + "' into '" + output_dir + "'");
    for (const CacheSplitPlan& plan : plans) {
      report.splits.push_back(CacheSplit(*task, plan, o, log));
    }
    if (o.worker_index == 0) {
      RemoveTreeAtomically(CacheWorkRoot(output_dir));
      WriteFileDurably(output_dir + "/COMPLETED", "");
      log("task '" + name + "' COMPLETED");
    }
  }
  return report;
}

}  // namespace t5xx::seqio
