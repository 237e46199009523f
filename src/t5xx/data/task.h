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
#include <string>
#include <vector>

#include "t5xx/data/data_source.h"
#include "t5xx/data/dataset_provider.h"
#include "t5xx/data/dataset.h"
#include "t5xx/data/evaluation.h"
#include "t5xx/data/feature_converters.h"
#include "t5xx/data/postprocessors.h"
#include "t5xx/data/preprocessors.h"
#include "t5xx/data/provider_registry.h"
#include "t5xx/data/utils.h"

namespace t5xx::seqio {

class Task : public DatasetProvider, public std::enable_shared_from_this<Task> {
 public:
  // ProviderRegistry's words for a Task.
  static constexpr char kKind[] = "task";
  static constexpr char kRegistryName[] = "TaskRegistry";

  // Throws t5xx::Error if `name` does not match ^[\w.:#]+$ (seqio's rule),
  // `source` is null, or shuffle_buffer_size < 0. shuffle_buffer_size == 0
  // forbids shuffling (seqio's shuffle_buffer_size=None). postprocess_fn
  // (may be empty: the identity) and metric_fns are seqio's: they score
  // predictions in EvaluatePredictions (evaluation.h).
  // preprocessor_names: how errors name each step, e.g.
  // "t5.data.preprocessors.span_corruption, bound at tasks.gin:7:5" (empty:
  // "preprocessor <i>"); else as many as preprocessors (t5xx::Error).
  Task(std::string name, DataSourcePtr source,
       std::vector<Preprocessor> preprocessors, OutputFeatures output_features,
       int64_t shuffle_buffer_size = 1000, PostprocessFn postprocess_fn = nullptr,
       std::vector<MetricFn> metric_fns = {},
       std::vector<std::string> preprocessor_names = {});

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
  const std::vector<MetricFn>& metric_fns() const { return metric_fns_; }

  // seqio Task.get_dataset, in this order:
  //  1. source->GetDataset(split, shuffle, epoch seed, shard_info) per epoch
  //     when the source has at least shard_info.num_shards shards
  //     (ListShards) or supports_arbitrary_sharding(); else
  //     source->GetDataset(..., ShardInfo{}) keeping every num_shards-th
  //     example from shard_info.index (seqio's example-level fallback);
  //     repeated num_epochs times (-1 = forever; an epoch's source seed is
  //     HashSeed(seed, epoch)). Repeating before the preprocessors makes
  //     stochastic steps draw differently in each epoch (their per-example
  //     index keeps counting), as seqio's post-cache steps do.
  //  2. preprocessors in order; step i gets PreprocessContext{sequence_length,
  //     output_features, HashSeed(seed, i)}.
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
  // ...".
  DatasetPtr GetDataset(const FeatureLengths& sequence_length,
                        const std::string& split = "train", bool shuffle = true,
                        uint64_t seed = 0, const ShardInfo& shard_info = {},
                        int num_epochs = 1, bool trim_output_features = true) const;
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
  std::vector<MetricFn> metric_fns_;
  std::vector<std::string> preprocessor_names_;
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
// split, shuffle, seed, shard_info, num_epochs, trim_output_features) ->
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
                         bool trim_output_features = true);

}  // namespace t5xx::seqio
