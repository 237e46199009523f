// seqio.FunctionDataSource: a DataSource backed by a dataset function (see
// function_source.h).
#include "t5xx/data/sources/function_source.h"

#include <algorithm>
#include <set>
#include <utility>

#include "t5xx/util/error.h"
#include "t5xx/util/names.h"

namespace t5xx::seqio {
FunctionDataSource::FunctionDataSource(DatasetFn dataset_fn,
                                       std::vector<std::string> splits)
    : dataset_fn_(std::move(dataset_fn)), splits_(std::move(splits)) {
  if (!dataset_fn_) {
    throw Error("FunctionDataSource: dataset_fn is empty; pass a function "
                "(split, shuffle, seed) -> DatasetPtr");
  }
  if (splits_.empty()) {
    throw Error("FunctionDataSource: splits is empty; give at least one "
                "split, e.g. {\"train\", \"validation\"}");
  }
  std::set<std::string> seen;
  for (const auto& s : splits_) {
    if (!seen.insert(s).second) {
      throw Error("FunctionDataSource: split '" + s +
                  "' is listed twice in splits " + QuotedList(splits_));
    }
  }
}

void FunctionDataSource::CheckSplit(const std::string& split) const {
  if (std::find(splits_.begin(), splits_.end(), split) == splits_.end()) {
    throw Error("FunctionDataSource: unknown split '" + split +
                "'; known splits: " + QuotedList(splits_));
  }
}

std::vector<std::string> FunctionDataSource::ListShards(
    const std::string& split) const {
  CheckSplit(split);
  return {split};
}

DatasetPtr FunctionDataSource::GetDataset(const std::string& split,
                                          bool shuffle, uint64_t seed,
                                          const ShardInfo& shard_info) const {
  CheckSplit(split);
  if (shard_info.num_shards > 1) {
    throw Error("FunctionDataSource has a single shard per split, so it "
                "cannot be read as shard " + std::to_string(shard_info.index) +
                " of " + std::to_string(shard_info.num_shards) +
                " (split '" + split + "'); read it unsharded "
                "(num_shards=1) and shard the resulting examples instead");
  }
  if (shard_info.num_shards < 1 || shard_info.index != 0) {
    throw Error("FunctionDataSource: invalid ShardInfo(index=" +
                std::to_string(shard_info.index) + ", num_shards=" +
                std::to_string(shard_info.num_shards) +
                "); need num_shards == 1 and index == 0");
  }
  DatasetPtr ds = dataset_fn_(split, shuffle, seed);
  if (!ds) {
    throw Error("FunctionDataSource: dataset_fn returned no dataset (null) "
                "for split '" + split + "'");
  }
  return ds;
}

}  // namespace t5xx::seqio
