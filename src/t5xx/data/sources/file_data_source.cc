// seqio's FileDataSource: split file patterns, sharding and the read plan (see
// file_data_source.h).
#include "t5xx/data/sources/file_data_source.h"

#include <memory>
#include <utility>

#include "t5xx/storage/remote_copy.h"
#include "t5xx/storage/storage.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_kind.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/hash.h"
#include "t5xx/util/names.h"

namespace t5xx::seqio {

FileReadPlan PlanFileRead(const std::string& source_name,
                          const std::string& split, const std::string& pattern,
                          bool shuffle, uint64_t seed,
                          const ShardInfo& shard_info) {
  if (shard_info.num_shards < 1 || shard_info.index < 0 ||
      shard_info.index >= shard_info.num_shards) {
    throw Error(source_name + ": invalid ShardInfo(index=" +
                std::to_string(shard_info.index) +
                ", num_shards=" + std::to_string(shard_info.num_shards) +
                "): need num_shards >= 1 and 0 <= index < num_shards");
  }
  // gs:// and s3:// patterns: matched in the bucket, each file read from
  // its --data_dir mirror or the object cache (storage/remote_copy.h).
  std::vector<std::string> files;
  if (storage::IsObjectStoreUrl(pattern)) {
    for (const std::string& url : storage::Glob(pattern)) files.push_back(LocalCopyIfAny(url));
  } else {
    files = Glob(pattern);
  }
  if (files.empty()) {
    throw Error(source_name + ": file pattern '" + pattern + "' of split '" +
                split + "' matches no file; check the path (and that the " +
                "data was built/downloaded)");
  }
  // A directory, FIFO or broken link would fail (or block) only when its
  // turn to be read comes, maybe hours in: refuse it when the list is made.
  for (const std::string& path : files) {
    const std::string why = NotARegularFile(path);
    T5XX_CHECK(why.empty(), source_name + ": file pattern '" + pattern + "' of split '" + split +
                                "' matches '" + path + "', which " + why +
                                "; narrow the pattern to the data files");
  }
  FileReadPlan plan;
  const size_t n = static_cast<size_t>(shard_info.num_shards);
  if (files.size() >= n) {
    for (size_t i = 0; i < files.size(); ++i) {
      if (i % n == static_cast<size_t>(shard_info.index)) {
        plan.files.push_back(files[i]);
      }
    }
  } else {
    plan.files = files;
    plan.example_stride = shard_info.num_shards;
    plan.example_offset = shard_info.index;
  }
  if (shuffle && plan.files.size() > 1) {
    uint64_t state = seed;
    for (size_t i = plan.files.size() - 1; i > 0; --i) {
      const size_t j = static_cast<size_t>(SplitMix64Next(&state) % (i + 1));
      std::swap(plan.files[i], plan.files[j]);
    }
  }
  return plan;
}

FileDataSource::FileDataSource(
    std::string source_name,
    std::map<std::string, std::string> split_to_filepattern,
    BadRecordPolicy bad_records)
    : source_name_(std::move(source_name)),
      split_to_filepattern_(std::move(split_to_filepattern)),
      bad_records_(std::move(bad_records)) {
  if (!bad_records_.skipped)
    bad_records_.skipped = std::make_shared<std::atomic<int64_t>>(0);
  if (split_to_filepattern_.empty()) {
    throw Error(source_name_ + ": split_to_filepattern is empty; give at least "
                "one split, e.g. {\"train\": \"/data/train-*\"}");
  }
}

std::vector<std::string> FileDataSource::splits() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : split_to_filepattern_) out.push_back(k);
  return out;
}

const std::string& FileDataSource::PatternFor(const std::string& split) const {
  auto it = split_to_filepattern_.find(split);
  if (it == split_to_filepattern_.end()) {
    throw Error(source_name_ + ": unknown split '" + split +
                "'; known splits: " + QuotedList(splits()));
  }
  return it->second;
}

std::vector<std::string> FileDataSource::ListShards(const std::string& split) const {
  return PlanFileRead(source_name_, split, PatternFor(split), /*shuffle=*/false, 0,
                      ShardInfo{})
      .files;
}

DatasetPtr FileDataSource::GetDataset(const std::string& split, bool shuffle,
                                      uint64_t seed,
                                      const ShardInfo& shard_info) const {
  return ReadPlan(
      PlanFileRead(source_name_, split, PatternFor(split), shuffle, seed, shard_info));
}

}  // namespace t5xx::seqio
