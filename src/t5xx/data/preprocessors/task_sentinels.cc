// seqio.experimental.add_task_with_sentinels' steps (see task_sentinels.h).
#include "t5xx/data/preprocessors/task_sentinels.h"

#include <algorithm>
#include <utility>

#include "t5xx/util/error.h"

namespace t5xx::seqio {

std::string SentinelTaskName(const std::string& task_name, int64_t num_sentinels) {
  const std::string sentinel = "_" + std::to_string(num_sentinels) + "_sentinel";
  for (const char* suffix : {"_train", "_dev", "_test", "_eval", "."}) {
    const size_t idx = task_name.find(suffix);
    if (idx != std::string::npos)
      return task_name.substr(0, idx) + sentinel + task_name.substr(idx);
  }
  return task_name + sentinel;
}

namespace {

int32_t VocabSize(const OutputFeatures& output_features, const char* key) {
  auto it = output_features.find(key);
  T5XX_CHECK(it != output_features.end() && it->second.vocabulary != nullptr,
             std::string("add_task_with_sentinels: output feature '") + key +
                 "' with a vocabulary is required (its vocab_size() places the sentinels)");
  return it->second.vocabulary->vocab_size();
}

}  // namespace

DatasetPtr AddSentinels(DatasetPtr input, const OutputFeatures& output_features,
                        int64_t num_sentinels) {
  const int32_t vi = VocabSize(output_features, "inputs");
  const int32_t vt = VocabSize(output_features, "targets");
  return MapIndexed(std::move(input), [=](Example ex, uint64_t index) {
    auto tokens = [&](const char* key) -> Tokens& {
      auto it = ex.find(key);
      T5XX_CHECK(it != ex.end() && std::holds_alternative<Tokens>(it->second),
                 std::string("add_task_with_sentinels (_add_sentinels): example ") +
                     std::to_string(index) + (it == ex.end() ? " has no feature '"
                                                             : " has a non-token feature '") +
                     key + "'");
      return std::get<Tokens>(it->second);
    };
    Tokens& inputs = tokens("inputs");
    Tokens& targets = tokens("targets");
    Tokens prefix;
    for (int64_t i = 0; i < num_sentinels; ++i) {
      inputs.push_back(static_cast<int32_t>(vi - 1 - i));
      prefix.push_back(static_cast<int32_t>(vt - 1 - i));
    }
    targets.insert(targets.begin(), prefix.begin(), prefix.end());
    return ex;
  });
}

Preprocessor AddSentinelsPreprocessor(int64_t num_sentinels) {
  return [num_sentinels](DatasetPtr ds, const PreprocessContext& ctx) {
    return AddSentinels(std::move(ds), ctx.output_features, num_sentinels);
  };
}

namespace {

// Python's value[start:stop] (a negative bound counts from the end; both
// clamp to [0, n]).
Tokens PySlice(const Tokens& v, std::optional<int64_t> start, std::optional<int64_t> stop) {
  const int64_t n = static_cast<int64_t>(v.size());
  auto resolve = [n](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
  const int64_t b = start ? resolve(*start) : 0;
  const int64_t e = stop ? resolve(*stop) : n;
  if (b >= e) return {};
  return Tokens(v.begin() + b, v.begin() + e);
}

}  // namespace

Tokens AppendEosAfterTrimAndPreserve(const Tokens& value, int32_t eos_id,
                                     std::optional<int64_t> length, int64_t preserve) {
  Tokens out;
  if (!length) {
    out = value;
  } else if (preserve <= 0) {
    out = PySlice(value, std::nullopt, *length - 1);
  } else {
    const int64_t trimmed = std::min<int64_t>(*length, static_cast<int64_t>(value.size()) + 1);
    const int64_t keep = std::min(preserve, trimmed - 1);
    out = PySlice(value, std::nullopt, trimmed - (keep + 1));
    const Tokens tail = PySlice(value, -keep, std::nullopt);  // -0: all of value
    out.insert(out.end(), tail.begin(), tail.end());
  }
  out.push_back(eos_id);
  return out;
}

DatasetPtr AppendEosAfterTrimAndPreserve(DatasetPtr input, const OutputFeatures& output_features,
                                         const FeatureLengths& sequence_length,
                                         int64_t preserve) {
  return Map(std::move(input), [=](Example ex) {
    for (auto& [key, value] : ex) {
      auto f = output_features.find(key);
      if (f == output_features.end() || !f->second.add_eos) continue;
      Tokens* t = std::get_if<Tokens>(&value);
      T5XX_CHECK(t != nullptr && f->second.vocabulary != nullptr,
                 "add_task_with_sentinels (_append_eos_after_trim_and_preserve): feature '" +
                     key + "' must be tokens with a vocabulary, but holds " +
                     DescribeValue(value));
      auto l = sequence_length.find(key);
      std::optional<int64_t> length;
      if (l != sequence_length.end()) length = l->second;
      *t = AppendEosAfterTrimAndPreserve(*t, f->second.vocabulary->eos_id(), length, preserve);
    }
    return ex;
  });
}

Preprocessor AppendEosAfterTrimAndPreservePreprocessor(int64_t preserve) {
  return [preserve](DatasetPtr ds, const PreprocessContext& ctx) {
    return AppendEosAfterTrimAndPreserve(std::move(ds), ctx.output_features,
                                         ctx.sequence_length, preserve);
  };
}

std::vector<NamedPreprocessor> AddSentinelSteps(std::vector<NamedPreprocessor> steps,
                                                int64_t num_sentinels) {
  T5XX_CHECK(!steps.empty(), "add_task_with_sentinels: the task has no preprocessors "
                             "(seqio reads the last one)");
  T5XX_CHECK(num_sentinels >= 1, "add_task_with_sentinels: num_sentinels must be >= 1, got " +
                                     std::to_string(num_sentinels));
  const PreprocessorSignature takes_length{true, false};
  NamedPreprocessor add{kAddSentinelsName, AddSentinelsPreprocessor(num_sentinels),
                        takes_length};
  if (steps.back().name == "seqio.preprocessors.append_eos_after_trim") {
    steps.back() = NamedPreprocessor{kAppendEosAfterTrimAndPreserveName,
                                     AppendEosAfterTrimAndPreservePreprocessor(num_sentinels),
                                     takes_length};
    steps.insert(steps.end() - 1, std::move(add));
  } else {
    steps.push_back(std::move(add));
  }
  return steps;
}

}  // namespace t5xx::seqio
