// seqio Task (source -> preprocessors -> output checks) and get_dataset (see
// task.h).
#include "t5xx/data/dataset_providers/task.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <regex>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/cache/task_cache.h"
#include "t5xx/data/pipeline/seed_purposes.h"
#include "t5xx/util/error.h"
#include "t5xx/util/names.h"

namespace t5xx::seqio {
namespace {

// The flags `t5xx cache_tasks` needs for a task of an importable module
// (t5's catalog reads TFDS data and t5's vocabulary copies).
std::string CacheTasksModuleFlags(const std::string& task) {
  const std::string module = ModuleOfProvider(task);
  if (module.empty()) return "";
  return " --module_import=" + module + " --tfds_data_dir=<dir> --data_dir=<dir>";
}


// Names the step an error comes from (see DataStepError in dataset.h).
class StepContext : public Dataset {
 public:
  StepContext(DatasetPtr input, std::string context)
      : input_(std::move(input)), context_(std::move(context)) {}
  std::optional<Example> Next() override {
    try {
      std::optional<Example> ex = input_->Next();
      if (ex) ++index_;
      return ex;
    } catch (const DataStepError&) {
      throw;  // an earlier step's error, already named
    } catch (const Error& e) {
      throw DataStepError(context_ + ", example " + std::to_string(index_) + ": " + e.what());
    }
  }
  nlohmann::json SaveState() const override {
    return {{"index", index_}, {"input", input_->SaveState()}};
  }
  void RestoreState(const nlohmann::json& state) override {
    index_ = StateField(state, "index", "task step").get<int64_t>();
    input_->RestoreState(StateField(state, "input", "task step"));
  }

 private:
  DatasetPtr input_;
  std::string context_;
  int64_t index_ = 0;  // examples produced so far: the failing one's index
};

// Checks the output features of each example (lazily).
class CheckOutputFeatures : public Dataset {
 public:
  CheckOutputFeatures(DatasetPtr input, std::string task, OutputFeatures of)
      : input_(std::move(input)), task_(std::move(task)), of_(std::move(of)) {}
  std::optional<Example> Next() override {
    auto ex = input_->Next();
    if (!ex) return std::nullopt;
    ++index_;
    for (const auto& [k, f] : of_) {
      auto it = ex->find(k);
      if (it == ex->end()) {
        if (!f.required) continue;
        std::string have;
        for (const auto& kv : *ex) have += (have.empty() ? "" : ", ") + kv.first;
        throw Error("lacks required output feature '" + k +
                    "' after preprocessing (features: [" + have + "])");
      }
      if (!std::holds_alternative<Tokens>(it->second))
        throw Error("output feature '" + k + "' is " + DescribeValue(it->second) +
                    ", expected int32 tokens; add a tokenize preprocessor");
      // Ids outside the vocabulary would index past the model's embedding.
      if (f.vocabulary) {
        const int32_t size = f.vocabulary->vocab_size();
        for (int32_t id : std::get<Tokens>(it->second)) {
          if (id < 0 || id >= size) {
            throw Error("output feature '" + k + "' holds token id " + std::to_string(id) +
                        ", outside its vocabulary's ids [0, " + std::to_string(size) +
                        "); fix the data or use a larger vocabulary");
          }
        }
      }
    }
    return ex;
  }
  nlohmann::json SaveState() const override {
    return {{"index", index_}, {"input", input_->SaveState()}};
  }
  void RestoreState(const nlohmann::json& state) override {
    index_ = StateField(state, "index", "task output check").get<int64_t>();
    input_->RestoreState(StateField(state, "input", "task output check"));
  }

 private:
  DatasetPtr input_;
  std::string task_;
  OutputFeatures of_;
  int64_t index_ = 0;
};

// One run of preprocessors: the task's steps [begin, end) of its vector;
// step i is named and seeded by its position in the list as written,
// i + position_offset (the placeholder counted), with
// HashSeed(base_seed, position). Each step's errors are named by a
// StepContext (see GetDataset).
struct StepRun {
  std::string task;  // "task 'x'"
  std::vector<Preprocessor> steps;
  std::vector<std::string> names;  // empty or as many as steps
  size_t begin = 0, end = 0, position_offset = 0;
  uint64_t base_seed = 0;
  FeatureLengths sequence_length;
  OutputFeatures output_features;
};

DatasetPtr ApplySteps(DatasetPtr ds, const StepRun& run) {
  for (size_t i = run.begin; i < run.end; ++i) {
    const size_t position = i + run.position_offset;
    const std::string step =
        run.task + ", preprocessor " + std::to_string(position) +
        (run.names.empty() ? std::string() : " (" + run.names[i] + ")");
    PreprocessContext ctx{run.sequence_length, run.output_features,
                          HashSeed(run.base_seed, position)};
    try {
      ds = run.steps[i](std::move(ds), ctx);
    } catch (const Error& e) {  // e.g. a missing sequence length
      throw Error(step + ": " + e.what());
    }
    T5XX_CHECK(ds != nullptr, step + " returned a null dataset");
    ds = std::make_unique<StepContext>(std::move(ds), step);
  }
  return ds;
}

// What a use_cached read of a task without a cache is (CacheDirOrThrow).
constexpr char kReadWithoutCache[] = "is read from its cache (use_cached=True) but has none";

// The cache of one split (task_cache.h's reader), its errors naming the task.
DataSourcePtr CachedSource(const std::string& task, const std::string& dir,
                           const std::string& split) {
  try {
    return MakeCachedDataSource(dir, split);
  } catch (const Error& e) {
    throw Error(task + ", cache " + dir + ": " + e.what());
  }
}

}  // namespace

Task::Task(std::string name, DataSourcePtr source,
           std::vector<Preprocessor> preprocessors,
           OutputFeatures output_features, int64_t shuffle_buffer_size,
           PostprocessFn postprocess_fn, TaskMetricFns metric_fns,
           std::vector<std::string> preprocessor_names,
           std::optional<CacheStep> cache_step)
    : name_(std::move(name)), source_(std::move(source)),
      preprocessors_(std::move(preprocessors)),
      output_features_(std::move(output_features)),
      shuffle_buffer_size_(shuffle_buffer_size),
      postprocess_fn_(std::move(postprocess_fn)),
      metric_fns_(std::move(metric_fns)),
      preprocessor_names_(std::move(preprocessor_names)),
      cache_step_(cache_step) {
  static const std::regex kName(R"(^[\w.:#]+$)");
  T5XX_CHECK(std::regex_match(name_, kName),
        "Task name '" + name_ + "' is invalid: use only letters, digits, "
        "'_', '.', ':' and '#'");
  T5XX_CHECK(source_ != nullptr, "Task '" + name_ + "': source is null");
  T5XX_CHECK(shuffle_buffer_size_ >= 0,
        "Task '" + name_ + "': shuffle_buffer_size must be >= 0 (0 forbids "
        "shuffling), got " + std::to_string(shuffle_buffer_size_));
  T5XX_CHECK(preprocessor_names_.empty() || preprocessor_names_.size() == preprocessors_.size(),
             "Task '" + name_ + "': " + std::to_string(preprocessor_names_.size()) +
                 " preprocessor names for " + std::to_string(preprocessors_.size()) +
                 " preprocessors");
  for (size_t i = 0; i < preprocessors_.size(); ++i)
    T5XX_CHECK(static_cast<bool>(preprocessors_[i]),
          "Task '" + name_ + "': preprocessor " + std::to_string(i) +
              " is empty");
  if (cache_step_) {
    T5XX_CHECK(cache_step_->index <= preprocessors_.size(),
               "Task '" + name_ + "': the cache placeholder's index " +
                   std::to_string(cache_step_->index) + " is past its " +
                   std::to_string(preprocessors_.size()) + " preprocessors");
    T5XX_CHECK(source_->caching_permitted(),
               "Task '" + name_ + "' has a seqio.CacheDatasetPlaceholder but its data source "
               "forbids caching (caching_permitted=False); remove the placeholder or permit "
               "caching");
  }
}

std::optional<std::string> Task::CacheDir() const {
  return FindTaskCacheDir(name_, GetGlobalCacheDirs());
}

std::string Task::AssertCached() const { return CacheDirOrThrow("has no cache"); }

std::string Task::CacheDirOrThrow(const std::string& problem) const {
  const std::vector<std::string> dirs = GetGlobalCacheDirs();
  if (auto dir = FindTaskCacheDir(name_, dirs)) return *dir;
  std::string searched;
  for (const std::string& d : dirs)
    searched += (searched.empty() ? "" : ", ") +
                (std::filesystem::path(d) / TaskDirFromName(name_)).string();
  throw Error(
      "task '" + name_ + "' " + problem + ": " +
      (dirs.empty() ? std::string("no cache directories were given")
                    : "no COMPLETED cache in " + searched) +
      "; build it with `t5xx cache_tasks --tasks=" + name_ + CacheTasksModuleFlags(name_) +
      " --output_cache_dir=<dir>` (with this run's --gin_file flags when the task is "
      "defined in gin) and pass that directory with "
      "--seqio_additional_cache_dirs=<dir> (or --cache_dir=<dir>)");
}

nlohmann::json Task::GetCachedStats(const std::string& split) const {
  const std::string dir = AssertCached();
  try {
    return ReadCachedStats(dir, split);
  } catch (const Error& e) {
    throw Error("task '" + name_ + "': " + e.what());
  }
}

void Task::CheckRequiredCache(bool use_cached) const {
  T5XX_CHECK(use_cached || !requires_caching(),
             "task '" + name_ +
                 "' requires caching (its seqio.CacheDatasetPlaceholder has required=True) "
                 "but was read with use_cached=False; build its cache with `t5xx "
                 "cache_tasks --tasks=" + name_ + CacheTasksModuleFlags(name_) +
                 " --output_cache_dir=<dir>`, then set "
                 "use_cached=True (gin: USE_CACHED_TASKS = True) and pass the directory "
                 "with --seqio_additional_cache_dirs=<dir>");
}

bool Task::CheckCacheUse(const std::string& split, bool use_cached) const {
  CheckRequiredCache(use_cached);
  if (!use_cached || !supports_caching()) return false;
  (void)CachedSource("task '" + name_ + "'", CacheDirOrThrow(kReadWithoutCache), split);
  return true;
}

DatasetPtr Task::PreprocessPrecache(DatasetPtr ds, uint64_t seed) const {
  if (!cache_step_) return ds;
  StepRun run{"task '" + name_ + "'", preprocessors_, preprocessor_names_,
              0, cache_step_->index, 0, seed, FeatureLengths{}, output_features_};
  return ApplySteps(std::move(ds), run);
}

DatasetPtr Task::PreprocessPostcache(DatasetPtr ds, const FeatureLengths& sequence_length,
                                     uint64_t seed) const {
  StepRun run{"task '" + name_ + "'", preprocessors_, preprocessor_names_, 0,
              preprocessors_.size(), 0, seed, sequence_length, output_features_};
  if (cache_step_) {
    // seqio: seed + 42 * cache_step_idx, steps after the placeholder.
    run.base_seed = seed + 42 * static_cast<uint64_t>(cache_step_->index);
    run.begin = cache_step_->index;
    run.position_offset = 1;
  }
  return ApplySteps(std::move(ds), run);
}

DatasetPtr Task::GetDataset(const FeatureLengths& sequence_length,
                            const std::string& split, bool shuffle,
                            uint64_t seed, const ShardInfo& shard_info,
                            int num_epochs, bool trim_output_features,
                            bool use_cached) const {
  const auto known = source_->splits();
  T5XX_CHECK(std::find(known.begin(), known.end(), split) != known.end(),
        "task '" + name_ + "' has no split '" + split + "'; known splits: " +
            BracketedList(known, kMaxListedNames));
  T5XX_CHECK(num_epochs >= -1, "task '" + name_ + "': num_epochs must be -1 "
                          "(forever) or >= 0, got " + std::to_string(num_epochs));
  T5XX_CHECK(!shuffle || shuffle_buffer_size_ > 0,
        "task '" + name_ + "' forbids shuffling (shuffle_buffer_size 0); "
        "call GetDataset with shuffle=false");
  T5XX_CHECK(shard_info.num_shards >= 1 && shard_info.index >= 0 &&
            shard_info.index < shard_info.num_shards,
        "task '" + name_ + "': bad ShardInfo (index " +
            std::to_string(shard_info.index) + " of " +
            std::to_string(shard_info.num_shards) + ")");
  const std::string task = "task '" + name_ + "'";
  if (use_cached && !supports_caching()) {
    // seqio logs this and reads the task on the fly.
    std::cerr << "t5xx: warning: " << task
              << " has no seqio.CacheDatasetPlaceholder, so it has no cache; "
                 "use_cached=True ignored, preprocessing it on the fly"
              << std::endl;
    use_cached = false;
  }
  CheckRequiredCache(use_cached);

  // seqio's Task.get_dataset: shard at the source when it has at least
  // num_shards shards (files) or takes any ShardInfo; else read it whole and
  // keep every num_shards-th example (ds.shard), before any preprocessor.
  std::string source_step = task + ", source (split '" + split + "')";
  DataSourcePtr source = source_;
  if (use_cached) {
    const std::string dir = CacheDirOrThrow(kReadWithoutCache);
    source = CachedSource(task, dir, split);
    source_step = task + ", cache " + dir + " (split '" + split + "')";
  }
  const bool shard_at_source =
      shard_info.num_shards == 1 || source->supports_arbitrary_sharding() ||
      static_cast<int64_t>(source->ListShards(split).size()) >= shard_info.num_shards;
  auto read_epoch = [source, split, shuffle, seed, shard_info, shard_at_source](int64_t e) {
    const uint64_t epoch_seed =
        HashSeed(seed, static_cast<uint64_t>(e), seed_purpose::kTaskEpoch);
    if (shard_at_source) return source->GetDataset(split, shuffle, epoch_seed, shard_info);
    return Shard(source->GetDataset(split, shuffle, epoch_seed, ShardInfo{}),
                 shard_info.num_shards, shard_info.index);
  };
  DatasetPtr ds;
  if (supports_caching() && !use_cached) {
    // seqio repeats after the pre-cache steps: each epoch runs them afresh
    // on that epoch's source examples, drawing as they did when cached.
    StepRun pre{task, preprocessors_, preprocessor_names_, 0, cache_step_->index, 0,
                seed, FeatureLengths{}, output_features_};
    ds = RepeatIndexed(
        [read_epoch, pre, source_step](int64_t e) {
          // Opening the epoch's source can fail (a pattern that matches no
          // file): name the source, not the last step that pulled from it.
          DatasetPtr epoch;
          try {
            epoch = read_epoch(e);
          } catch (const DataStepError&) {
            throw;
          } catch (const Error& err) {
            throw DataStepError(source_step + ", epoch " + std::to_string(e) + ": " + err.what());
          }
          return ApplySteps(std::make_unique<StepContext>(std::move(epoch), source_step), pre);
        },
        num_epochs);
  } else {
    ds = RepeatIndexed(read_epoch, num_epochs);
    ds = std::make_unique<StepContext>(std::move(ds), source_step);
  }
  ds = PreprocessPostcache(std::move(ds), sequence_length, seed);
  ds = std::make_unique<CheckOutputFeatures>(std::move(ds), name_,
                                             output_features_);
  ds = std::make_unique<StepContext>(std::move(ds), task + ", output features check");
  if (trim_output_features) {
    FeatureLengths trim;
    for (const auto& [k, L] : sequence_length) {
      if (output_features_.count(k)) trim[k] = L;
    }
    ds = Map(std::move(ds), [trim](Example ex) {
      for (const auto& [k, L] : trim) {
        auto it = ex.find(k);
        if (it == ex.end()) continue;
        Tokens& t = std::get<Tokens>(it->second);  // CheckOutputFeatures: tokens
        if (static_cast<int64_t>(t.size()) > L) t.resize(static_cast<size_t>(L));
      }
      return ex;
    });
  }
  if (shuffle)
    ds = Shuffle(std::move(ds), shuffle_buffer_size_,
                 HashSeed(seed, 0, seed_purpose::kTaskShuffle));
  return ds;
}

DatasetPtr Task::GetDataset(const FeatureLengths& sequence_length,
                            const DatasetRequest& request) const {
  return GetDataset(sequence_length, request.split, request.shuffle, request.seed,
                    request.shard_info, request.num_epochs,
                    request.trim_output_features, request.use_cached);
}

// ---------------------------------------------------------------------------

BatchIterator GetDataset(const std::string& mixture_or_task_name,
                         const FeatureLengths& task_feature_lengths,
                         const FeatureConverter& feature_converter,
                         const std::string& split, bool shuffle,
                         int num_epochs, const ShardInfo& shard_info,
                         uint64_t seed, int64_t batch_size,
                         const TaskRegistry& registry, bool trim_output_features,
                         bool use_cached) {
  T5XX_CHECK(batch_size >= 1, "get_dataset: batch_size must be >= 1, got " +
                             std::to_string(batch_size));
  TaskPtr task = registry.Get(mixture_or_task_name);
  const DatasetRequest request{split,      shuffle,    seed,
                               shard_info, num_epochs, trim_output_features,
                               use_cached};
  return GetProviderBatches(*task, task_feature_lengths, feature_converter, request,
                            batch_size);
}

BatchIterator GetProviderBatches(const DatasetProvider& provider,
                                 const FeatureLengths& task_feature_lengths,
                                 const FeatureConverter& feature_converter,
                                 const DatasetRequest& request, int64_t batch_size) {
  T5XX_CHECK(batch_size >= 1, "get_dataset: batch_size must be >= 1, got " +
                                  std::to_string(batch_size));
  // Validate the lengths before touching the source.
  const FeatureLengths model_lengths =
      feature_converter.GetModelFeatureLengths(task_feature_lengths);
  DatasetPtr ds = provider.GetDataset(task_feature_lengths, request);
  ds = feature_converter(std::move(ds), task_feature_lengths, provider.name());
  return BatchIterator(std::move(ds), batch_size, model_lengths);
}

}  // namespace t5xx::seqio
