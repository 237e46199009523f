// seqio's DataSource contract (seqio/dataset_providers.py): where a Task's raw
// examples come from.
//
// A source lists its splits and its shards (seqio list_shards: files) and
// yields a Dataset for one split, optionally file-shuffled with a seed and
// restricted to one shard. Who applies a ShardInfo (the index-th of
// num_shards) follows seqio's Task.get_dataset (task.h): the source, when it
// has at least num_shards shards or supports_arbitrary_sharding(); else the
// task reads the source unsharded and keeps every num_shards-th example.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/dataset.h"

namespace t5xx::seqio {

// seqio.ShardInfo: this reader is shard `index` of `num_shards`.
struct ShardInfo {
  int index = 0;
  int num_shards = 1;
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual std::vector<std::string> splits() const = 0;
  // Throws t5xx::Error naming the split and the known splits when `split`
  // is unknown, and naming the file pattern when it matches no file.
  virtual DatasetPtr GetDataset(const std::string& split, bool shuffle,
                                uint64_t seed,
                                const ShardInfo& shard_info) const = 0;
  // seqio list_shards: the units a ShardInfo splits at the source (a file
  // source's sorted files). Default: one shard, the split itself.
  virtual std::vector<std::string> ListShards(const std::string& split) const {
    return {split};
  }
  // seqio supports_arbitrary_sharding: GetDataset takes any ShardInfo, even
  // one of more shards than ListShards has (the task then never shards the
  // examples itself). Default false.
  virtual bool supports_arbitrary_sharding() const { return false; }
  // Bad records skipped so far by every dataset of this source when it was
  // built to skip them (BadRecordPolicy, file_data_source.h); 0 for sources
  // that never skip. `t5xx data stats` reports it as "skipped_records".
  virtual int64_t skipped_records() const { return 0; }
  // seqio DataSource.caching_permitted: whether a Task reading it may have a
  // CacheDatasetPlaceholder (some data may not be copied, as a matter of
  // policy or versioning). Default true.
  virtual bool caching_permitted() const { return true; }
  // seqio DataSource.num_input_examples: how many examples `split` holds
  // when the source knows without reading them (TFDS's dataset_info.json),
  // else std::nullopt (the default).
  virtual std::optional<int64_t> num_input_examples(const std::string& /*split*/) const {
    return std::nullopt;
  }
};

using DataSourcePtr = std::shared_ptr<const DataSource>;

}  // namespace t5xx::seqio
