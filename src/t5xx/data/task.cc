// seqio Task (source -> preprocessors -> output checks) and get_dataset (see
// task.h).
#include "t5xx/data/task.h"

#include <algorithm>
#include <regex>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/seed_purposes.h"
#include "t5xx/util/error.h"
#include "t5xx/util/names.h"

namespace t5xx::seqio {
namespace {

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
        throw Error("output feature '" + k +
                    "' is a string, expected int32 tokens; add a tokenize "
                    "preprocessor");
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

}  // namespace

Task::Task(std::string name, DataSourcePtr source,
           std::vector<Preprocessor> preprocessors,
           OutputFeatures output_features, int64_t shuffle_buffer_size,
           PostprocessFn postprocess_fn, std::vector<MetricFn> metric_fns,
           std::vector<std::string> preprocessor_names)
    : name_(std::move(name)), source_(std::move(source)),
      preprocessors_(std::move(preprocessors)),
      output_features_(std::move(output_features)),
      shuffle_buffer_size_(shuffle_buffer_size),
      postprocess_fn_(std::move(postprocess_fn)),
      metric_fns_(std::move(metric_fns)),
      preprocessor_names_(std::move(preprocessor_names)) {
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
}

DatasetPtr Task::GetDataset(const FeatureLengths& sequence_length,
                            const std::string& split, bool shuffle,
                            uint64_t seed, const ShardInfo& shard_info,
                            int num_epochs, bool trim_output_features) const {
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

  // seqio's Task.get_dataset: shard at the source when it has at least
  // num_shards shards (files) or takes any ShardInfo; else read it whole and
  // keep every num_shards-th example (ds.shard), before any preprocessor.
  DataSourcePtr source = source_;
  const bool shard_at_source =
      shard_info.num_shards == 1 || source->supports_arbitrary_sharding() ||
      static_cast<int64_t>(source->ListShards(split).size()) >= shard_info.num_shards;
  DatasetPtr ds = RepeatIndexed(
      [source, split, shuffle, seed, shard_info, shard_at_source](int64_t e) {
        const uint64_t epoch_seed =
            HashSeed(seed, static_cast<uint64_t>(e), seed_purpose::kTaskEpoch);
        if (shard_at_source) return source->GetDataset(split, shuffle, epoch_seed, shard_info);
        return Shard(source->GetDataset(split, shuffle, epoch_seed, ShardInfo{}),
                     shard_info.num_shards, shard_info.index);
      },
      num_epochs);

  const std::string task = "task '" + name_ + "'";
  ds = std::make_unique<StepContext>(std::move(ds), task + ", source (split '" + split + "')");
  for (size_t i = 0; i < preprocessors_.size(); ++i) {
    const std::string step =
        task + ", preprocessor " + std::to_string(i) +
        (preprocessor_names_.empty() ? std::string() : " (" + preprocessor_names_[i] + ")");
    PreprocessContext ctx{sequence_length, output_features_, HashSeed(seed, i)};
    try {
      ds = preprocessors_[i](std::move(ds), ctx);
    } catch (const Error& e) {  // e.g. a missing sequence length
      throw Error(step + ": " + e.what());
    }
    T5XX_CHECK(ds != nullptr, step + " returned a null dataset");
    ds = std::make_unique<StepContext>(std::move(ds), step);
  }
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
                    request.trim_output_features);
}

// ---------------------------------------------------------------------------

BatchIterator GetDataset(const std::string& mixture_or_task_name,
                         const FeatureLengths& task_feature_lengths,
                         const FeatureConverter& feature_converter,
                         const std::string& split, bool shuffle,
                         int num_epochs, const ShardInfo& shard_info,
                         uint64_t seed, int64_t batch_size,
                         const TaskRegistry& registry, bool trim_output_features) {
  T5XX_CHECK(batch_size >= 1, "get_dataset: batch_size must be >= 1, got " +
                             std::to_string(batch_size));
  TaskPtr task = registry.Get(mixture_or_task_name);
  const DatasetRequest request{split,      shuffle,    seed,
                               shard_info, num_epochs, trim_output_features};
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
