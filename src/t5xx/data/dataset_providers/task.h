// seqio Task, TaskRegistry and get_dataset (seqio/dataset_providers.py).
//
// A Task chains a DataSource, preprocessors, output-feature checks and
// seqio's trimming; the free function GetDataset runs task -> feature
// converter -> batch(drop_remainder) as seqio.get_dataset does (mixtures:
// mixture.h, GetMixtureOrTaskDataset). Framework-free: no
// libtorch.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/dataset_providers/dataset_provider.h"
#include "t5xx/data/dataset_providers/postprocessors.h"
#include "t5xx/data/dataset_providers/provider_registry.h"
#include "t5xx/data/feature_converters/feature_converters.h"
#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/pipeline/utils.h"
#include "t5xx/data/preprocessors/preprocessors.h"
#include "t5xx/data/sources/data_source.h"
#include "t5xx/metrics/metric_fns.h"

namespace t5xx::seqio {

// Where a task's steps are split for offline caching: the position of
// seqio.CacheDatasetPlaceholder in the preprocessors list as written. The
// steps before it run once, when `t5xx cache_tasks` writes the cache; those
// after it run every time the task is read (seqio/dataset_providers.py:
// CacheDatasetPlaceholder, Task.__init__).
struct CacheStep {
  // seqio's cache_step_idx: how many preprocessors come before the
  // placeholder (0 = the source itself is cached).
  size_t index = 0;
  // CacheDatasetPlaceholder(required=True): reading the task on the fly
  // (use_cached=false) is an error.
  bool required = false;
};

class Task : public DatasetProvider, public std::enable_shared_from_this<Task> {
 public:
  // ProviderRegistry's words for a Task.
  static constexpr char kKind[] = "task";
  static constexpr char kRegistryName[] = "TaskRegistry";

  // Throws t5xx::Error if `name` does not match ^[\w.:#]+$ (seqio's rule),
  // `source` is null, or shuffle_buffer_size < 0. shuffle_buffer_size == 0
  // forbids shuffling (seqio's shuffle_buffer_size=None). postprocess_fn
  // (may be empty: the identity) and metric_fns are seqio's: predict
  // metric_fns score decoded predictions (EvaluatePredictions, evaluation.h),
  // score metric_fns the model's log-likelihoods of the targets
  // (EvaluateScores).
  // preprocessor_names: how errors name each step, e.g.
  // "t5.data.preprocessors.span_corruption, bound at tasks.gin:7:5" (empty:
  // "preprocessor <i>"); else as many as preprocessors (t5xx::Error).
  // cache_step: where seqio.CacheDatasetPlaceholder sat in the list as
  // written; `preprocessors` never holds the placeholder itself. Throws
  // t5xx::Error when cache_step->index > preprocessors.size() or the source
  // forbids caching (DataSource::caching_permitted(), seqio's check). The
  // other placeholder rules (one per task, no step taking sequence_length
  // before it) need the steps' signatures: ValidateCachePlaceholder
  // (cache_placeholder.h) checks them.
  Task(std::string name, DataSourcePtr source,
       std::vector<Preprocessor> preprocessors, OutputFeatures output_features,
       int64_t shuffle_buffer_size = 1000, PostprocessFn postprocess_fn = nullptr,
       TaskMetricFns metric_fns = {},
       std::vector<std::string> preprocessor_names = {},
       std::optional<CacheStep> cache_step = std::nullopt);

  const std::string& name() const override { return name_; }
  // {this task}; the task must be held by a shared_ptr (registries hold them
  // so), else std::bad_weak_ptr.
  std::vector<std::shared_ptr<const Task>> tasks() const override { return {shared_from_this()}; }
  const DataSourcePtr& source() const { return source_; }
  const std::vector<Preprocessor>& preprocessors() const { return preprocessors_; }
  const OutputFeatures& output_features() const override { return output_features_; }
  std::vector<std::string> splits() const { return source_->splits(); }
  int64_t shuffle_buffer_size() const { return shuffle_buffer_size_; }
  const PostprocessFn& postprocess_fn() const { return postprocess_fn_; }
  // seqio Task.predict_metric_fns: metrics of (targets, predictions).
  const std::vector<MetricFn>& predict_metric_fns() const { return metric_fns_.predict; }
  // seqio Task.score_metric_fns: metrics of (targets, scores).
  const std::vector<ScoreMetricFn>& score_metric_fns() const { return metric_fns_.score; }
  // Whether the task has any metric_fn (seqio's Evaluator skips it if not).
  bool has_metric_fns() const { return !metric_fns_.empty(); }

  // seqio Task.supports_caching: the task has a CacheDatasetPlaceholder.
  bool supports_caching() const { return cache_step_.has_value(); }
  // seqio Task.requires_caching: its placeholder has required=True.
  bool requires_caching() const { return cache_step_ && cache_step_->required; }
  const std::optional<CacheStep>& cache_step() const { return cache_step_; }

  // seqio Task.cache_dir: the first <d>/<TaskDirFromName(name)> over
  // GetGlobalCacheDirs() (task_cache.h) holding a COMPLETED file; nullopt
  // when none does. Reads the file system on every call.
  std::optional<std::string> CacheDir() const;
  // seqio Task.assert_cached: CacheDir(), or a t5xx::Error naming the task,
  // every directory searched (or that no cache directory was given) and the
  // commands that build the cache and point a run at it.
  std::string AssertCached() const;
  // seqio Task.get_cached_stats: stats.<split>.json of the cache, e.g.
  // {"examples": 1200, "targets_tokens": 51234, "targets_max_tokens": 112}.
  // Throws t5xx::Error as AssertCached, or naming a missing/bad stats file.
  nlohmann::json GetCachedStats(const std::string& split = "train") const;
  // GetDataset's caching checks that read no examples, for a run's checks
  // before it builds a model: a required cache read with !use_cached is
  // GetDataset's t5xx::Error; with use_cached (and a placeholder) the cache
  // must exist (AssertCached's error) and hold `split`: its info, stats and
  // shard files (task_cache.h MakeCachedDataSource's errors, prefixed with
  // the task and the cache directory). Returns whether GetDataset reads the
  // cache (use_cached && supports_caching()). Prints nothing.
  bool CheckCacheUse(const std::string& split, bool use_cached) const;

  // seqio Task.preprocess_precache: the steps before the placeholder, run
  // without sequence lengths (they cannot depend on them); step i gets
  // PreprocessContext{{}, output_features, HashSeed(seed, i)}. Errors while
  // iterating are DataStepErrors naming the task, the step and the example,
  // as GetDataset's. A task without a placeholder returns ds unchanged.
  DatasetPtr PreprocessPrecache(DatasetPtr ds, uint64_t seed) const;
  // seqio Task.preprocess_postcache: the steps after the placeholder (every
  // step without one). With a placeholder at index k the base seed is
  // seed + 42 * k (seqio skips seeds so that none repeats a pre-cache
  // step's) and the step at position p of the list as written (placeholder
  // counted: p = vector index + 1) gets HashSeed(seed + 42 * k, p); without
  // one, step i gets HashSeed(seed, i), as GetDataset always did.
  DatasetPtr PreprocessPostcache(DatasetPtr ds, const FeatureLengths& sequence_length,
                                 uint64_t seed) const;

  // seqio Task.get_dataset, in this order:
  //  0. use_cached on a task without a placeholder: a warning on stderr and
  //     the on-the-fly path (seqio's); a task whose placeholder is required
  //     read without use_cached: t5xx::Error. With use_cached the "source"
  //     below is the task's cache (MakeCachedDataSource(AssertCached(),
  //     split), task_cache.h) and the pre-cache steps are skipped; without
  //     it a task with a placeholder runs PreprocessPrecache on each epoch's
  //     source examples (the repeat comes after the pre-cache steps, so
  //     they draw the same in every epoch, as they would in the cache).
  //  1. source->GetDataset(split, shuffle, epoch seed, shard_info) per epoch
  //     when the source has at least shard_info.num_shards shards
  //     (ListShards) or supports_arbitrary_sharding(); else
  //     source->GetDataset(..., ShardInfo{}) keeping every num_shards-th
  //     example from shard_info.index (seqio's example-level fallback);
  //     repeated num_epochs times (-1 = forever; an epoch's source seed is
  //     HashSeed(seed, epoch)). Repeating before the preprocessors makes
  //     stochastic steps draw differently in each epoch (their per-example
  //     index keeps counting), as seqio's post-cache steps do.
  //  2. the post-cache preprocessors in order (PreprocessPostcache; without
  //     a placeholder, every step i with PreprocessContext{sequence_length,
  //     output_features, HashSeed(seed, i)}).
  //  3. checks every example: each required output feature present, and
  //     every present output feature holds int32 tokens within its
  //     vocabulary's ids [0, vocab_size) (t5xx only: seqio would hand an
  //     out-of-range id to the model).
  //  4. if trim_output_features (seqio's default): every output feature that
  //     sequence_length names is cut to its first sequence_length[k] tokens
  //     (seqio's Task._trim_output_features), so one over-long example
  //     cannot stop a run; with false, an over-long feature is an error of
  //     the FeatureConverter.
  //  5. if shuffle: Shuffle(shuffle_buffer_size, seed).
  // Throws t5xx::Error (naming the task) for an unknown split (listing the
  // known ones), a bad num_epochs, shuffling a task that forbids it, and,
  // while iterating, for a missing/string output feature (naming the feature
  // and the example index). Every error raised while iterating is a
  // DataStepError that names the task, the step (the source, a preprocessor
  // by its name and where it was bound, or the output check) and the index
  // of the example that step was producing, e.g. "task 'x', preprocessor 2
  // (t5.data.preprocessors.span_corruption, bound at t.gin:7:5), example 0:
  // ...". use_cached without a cache: AssertCached's error.
  DatasetPtr GetDataset(const FeatureLengths& sequence_length,
                        const std::string& split = "train", bool shuffle = true,
                        uint64_t seed = 0, const ShardInfo& shard_info = {},
                        int num_epochs = 1, bool trim_output_features = true,
                        bool use_cached = false) const;
  // DatasetProvider: the GetDataset above with request's arguments.
  DatasetPtr GetDataset(const FeatureLengths& sequence_length,
                        const DatasetRequest& request) const override;

 private:
  std::string name_;
  DataSourcePtr source_;
  std::vector<Preprocessor> preprocessors_;
  OutputFeatures output_features_;
  int64_t shuffle_buffer_size_;
  PostprocessFn postprocess_fn_;
  TaskMetricFns metric_fns_;
  std::vector<std::string> preprocessor_names_;
  std::optional<CacheStep> cache_step_;

  // The error of a required cache read on the fly.
  void CheckRequiredCache(bool use_cached) const;
  // CacheDir(), or AssertCached's error saying "task '<name>' <problem>: ...".
  std::string CacheDirOrThrow(const std::string& problem) const;
};

using TaskPtr = std::shared_ptr<const Task>;

// Name -> Task (seqio.TaskRegistry); see provider_registry.h.
using TaskRegistry = ProviderRegistry<Task>;

// The batches of a task or mixture: provider.GetDataset(task_feature_lengths,
// request) -> converter(ds, task_feature_lengths, provider.name()) ->
// BatchIterator(batch_size, the converter's model feature lengths) with
// drop_remainder (the tail of seqio.get_dataset). The lengths are checked by
// the converter before the dataset is made. Throws t5xx::Error for
// batch_size < 1, bad lengths, or what the provider's GetDataset throws.
BatchIterator GetProviderBatches(const DatasetProvider& provider,
                                 const FeatureLengths& task_feature_lengths,
                                 const FeatureConverter& feature_converter,
                                 const DatasetRequest& request, int64_t batch_size);

// seqio.get_dataset: registry.Get(name)->GetDataset(task_feature_lengths,
// split, shuffle, seed, shard_info, num_epochs, trim_output_features,
// use_cached) ->
// converter(ds,
// task_feature_lengths, name) -> BatchIterator(batch_size, converter's model
// feature lengths) with drop_remainder. Note seqio's default shuffle=false
// here. Throws t5xx::Error for an unknown task, bad lengths (checked up
// front by the converter) or batch_size < 1.
BatchIterator GetDataset(const std::string& mixture_or_task_name,
                         const FeatureLengths& task_feature_lengths,
                         const FeatureConverter& feature_converter,
                         const std::string& split = "train",
                         bool shuffle = false, int num_epochs = 1,
                         const ShardInfo& shard_info = {}, uint64_t seed = 0,
                         int64_t batch_size = 1,
                         const TaskRegistry& registry = TaskRegistry::Global(),
                         bool trim_output_features = true, bool use_cached = false);

}  // namespace t5xx::seqio
