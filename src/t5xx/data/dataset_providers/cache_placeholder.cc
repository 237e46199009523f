// seqio.CacheDatasetPlaceholder's rules over a preprocessors list, and a
// source forbidding caching (see cache_placeholder.h).
#include "t5xx/data/dataset_providers/cache_placeholder.h"

#include <ostream>
#include <utility>

#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

std::string Entry(size_t position, const PreprocessorListEntry& e) {
  return "entry " + std::to_string(position) + (e.name.empty() ? "" : " (" + e.name + ")");
}

// Forwards everything to `inner` but caching_permitted().
class CachingPermittedSource : public DataSource {
 public:
  CachingPermittedSource(DataSourcePtr inner, bool permitted)
      : inner_(std::move(inner)), permitted_(permitted) {}
  std::vector<std::string> splits() const override { return inner_->splits(); }
  DatasetPtr GetDataset(const std::string& split, bool shuffle, uint64_t seed,
                        const ShardInfo& shard_info) const override {
    return inner_->GetDataset(split, shuffle, seed, shard_info);
  }
  std::vector<std::string> ListShards(const std::string& split) const override {
    return inner_->ListShards(split);
  }
  bool supports_arbitrary_sharding() const override {
    return inner_->supports_arbitrary_sharding();
  }
  int64_t skipped_records() const override { return inner_->skipped_records(); }
  bool caching_permitted() const override { return permitted_; }
  std::optional<int64_t> num_input_examples(const std::string& split) const override {
    return inner_->num_input_examples(split);
  }

 private:
  DataSourcePtr inner_;
  bool permitted_;
};

}  // namespace

std::optional<CacheStep> FindCacheStep(const std::string& task_name,
                                       const std::vector<PreprocessorListEntry>& entries,
                                       std::ostream& warnings) {
  const std::string task = "task '" + task_name + "'";
  std::optional<size_t> at;  // the placeholder's position in `entries`
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!entries[i].is_placeholder) continue;
    T5XX_CHECK(!at.has_value(),
               task + ": seqio.CacheDatasetPlaceholder may appear at most once in the "
                      "preprocessors, found " + Entry(*at, entries[*at]) + " and " +
                   Entry(i, entries[i]) + "; keep one");
    at = i;
  }
  if (!at) return std::nullopt;
  for (size_t i = 0; i < *at; ++i) {
    const PreprocessorListEntry& e = entries[i];
    T5XX_CHECK(!e.signature.takes_sequence_length,
               task + ": preprocessors " + Entry(i, e) +
                   " takes sequence_length but comes before seqio.CacheDatasetPlaceholder (" +
                   Entry(*at, entries[*at]) +
                   "); sequence lengths are known only when the task is read, after its "
                   "cache was written: move the step after the placeholder");
    if (e.signature.takes_seed) {
      warnings << "t5xx: warning: " << task << ": preprocessors " << Entry(i, e)
               << " takes a seed but comes before seqio.CacheDatasetPlaceholder; the cache "
                  "holds one draw of it, so every epoch read from the cache repeats the same "
                  "samples"
               << std::endl;
    }
  }
  return CacheStep{*at, entries[*at].required};
}

DataSourcePtr WithCachingPermitted(DataSourcePtr source, bool permitted) {
  T5XX_CHECK(source != nullptr, "WithCachingPermitted: the source is null");
  if (source->caching_permitted() == permitted) return source;
  return std::make_shared<CachingPermittedSource>(std::move(source), permitted);
}

}  // namespace t5xx::seqio
