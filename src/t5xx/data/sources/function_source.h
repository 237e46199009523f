// seqio.FunctionDataSource (seqio/dataset_providers.py): a DataSource backed
// by a user function that builds the dataset of a split.
//
// The function has a single shard per split, as in seqio: asking for
// shard_info.num_shards > 1 throws (seqio raises "Dataset function ... has a
// single shard" and expects callers to shard later). `shuffle` and `seed` are
// passed through to the function, which decides what shuffling means.
// (seqio also logs a warning when a function source is shuffled without a
// cache; t5xx does not log here.) Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "t5xx/data/sources/data_source.h"

namespace t5xx::seqio {

// dataset_fn(split, shuffle_files, seed) -> dataset of that split.
using DatasetFn = std::function<DatasetPtr(const std::string& split,
                                           bool shuffle, uint64_t seed)>;

class FunctionDataSource : public DataSource {
 public:
  // `splits` defaults to seqio's ("train", "validation"). Throws t5xx::Error
  // when dataset_fn is empty or splits is empty / has duplicates.
  explicit FunctionDataSource(
      DatasetFn dataset_fn,
      std::vector<std::string> splits = {"train", "validation"});

  std::vector<std::string> splits() const override { return splits_; }

  // Throws t5xx::Error: unknown split (listing the known splits);
  // shard_info.num_shards > 1 ("FunctionDataSource has a single shard ...");
  // invalid shard_info; dataset_fn returning null (naming the split).
  DatasetPtr GetDataset(const std::string& split, bool shuffle, uint64_t seed,
                        const ShardInfo& shard_info) const override;

  // seqio list_shards: the single shard is the split name itself (so a
  // Task reading shard i of n > 1 shards its examples instead).
  std::vector<std::string> ListShards(const std::string& split) const override;

 private:
  void CheckSplit(const std::string& split) const;

  DatasetFn dataset_fn_;
  std::vector<std::string> splits_;
};

}  // namespace t5xx::seqio
