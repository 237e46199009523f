// seqio's DatasetProvider: what Task and Mixture have in common, so that
// callers (get_mixture_or_task, get_dataset) never branch on which one a
// name is.
//
// Behaviour source: seqio/dataset_providers.py (DatasetProvider,
// get_mixture_or_task). Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/pipeline/utils.h"
#include "t5xx/data/preprocessors/preprocessors.h"
#include "t5xx/data/sources/data_source.h"

namespace t5xx::seqio {

// The arguments of DatasetProvider::GetDataset besides sequence_length, with
// seqio.get_dataset's defaults.
struct DatasetRequest {
  std::string split = "train";
  bool shuffle = false;
  uint64_t seed = 0;
  ShardInfo shard_info;
  int num_epochs = 1;  // -1: repeat forever
  bool trim_output_features = true;
  // seqio's use_cached (t5x DatasetConfig.use_cached): read each task's
  // offline cache (`t5xx cache_tasks`) instead of running its pre-cache
  // steps; see Task::GetDataset.
  bool use_cached = false;
};

class Task;

class DatasetProvider {
 public:
  virtual ~DatasetProvider() = default;
  virtual const std::string& name() const = 0;
  // Feature name -> OutputFeature (vocabulary, add_eos, ...).
  virtual const OutputFeatures& output_features() const = 0;
  // seqio DatasetProvider.get_dataset: a lazy dataset of Examples (int32
  // token features, [length] each, trimmed to sequence_length when
  // request.trim_output_features). Task::GetDataset and Mixture::GetDataset
  // document the steps and the t5xx::Error each throws.
  virtual DatasetPtr GetDataset(const FeatureLengths& sequence_length,
                                const DatasetRequest& request) const = 0;
  // The tasks whose examples it reads: a Task itself, a Mixture's leaf tasks
  // (seqio's Mixture.tasks). A mixture's get_dataset skips the tasks that
  // lack the split; a task needs it: either way, some task must have it.
  virtual std::vector<std::shared_ptr<const Task>> tasks() const = 0;
};

using DatasetProviderPtr = std::shared_ptr<const DatasetProvider>;

}  // namespace t5xx::seqio
