// Writing a task cache's records and metadata (see cache_encoding.h).
#include "t5xx/data/cache/cache_encoding.h"

#include <algorithm>

#include "t5xx/data/cache/task_cache.h"
#include "t5xx/data/sources/tf_example.h"
#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"

namespace t5xx::seqio {

std::string EncodeCacheExample(const Example& example) {
  for (const auto& [key, value] : example) {
    const bool ragged = key.rfind(kRaggedLengthKeyPrefix, 0) == 0;
    T5XX_CHECK(!ragged && key.rfind(kSparseIndicesKeyPrefix, 0) != 0,
               "cannot cache feature '" + key + "': names starting with '" +
                   (ragged ? kRaggedLengthKeyPrefix : kSparseIndicesKeyPrefix) +
                   "' hold seqio's " + (ragged ? "ragged row lengths" : "sparse indices") +
                   " in a tf.Example; rename the feature (e.g. with a rekey step before "
                   "the CacheDatasetPlaceholder)");
  }
  return SerializeTFExample(example);
}

nlohmann::json CacheFeaturesOf(const Example& example) {
  nlohmann::json features = nlohmann::json::object();
  for (const auto& [key, value] : example) {
    if (const auto* a = std::get_if<Array>(&value)) {
      // A scalar or rank-1 array (TFDS's idx, label, answers), as GetInfo
      // describes its tensor; seqio stores higher ranks ragged (_rl: keys).
      T5XX_CHECK(a->shape.size() <= 1 && a->row_lengths.empty(),
                 "feature '" + key + "' is " + DescribeValue(value) +
                     ": t5xx's task caches hold scalars and rank-1 features so far; flatten "
                     "or drop it before the CacheDatasetPlaceholder");
      features[key] = {{"dtype", DTypeName(a->dtype)},
                       {"shape", a->shape.empty() ? nlohmann::json::array()
                                                  : nlohmann::json::array({nullptr})}};
      continue;
    }
    if (std::holds_alternative<Tokens>(value)) {
      features[key] = {{"dtype", "int32"}, {"shape", nlohmann::json::array({nullptr})}};
    } else {
      features[key] = {{"dtype", "string"}, {"shape", nlohmann::json::array()}};
    }
  }
  return features;
}

nlohmann::json CacheInfoJson(const nlohmann::json& features, int64_t num_shards) {
  nlohmann::json info = nlohmann::json::object();
  info["features"] = features;
  info["num_shards"] = num_shards;
  info["seqio_version"] = kCacheSeqioVersion;
  info["t5xx_cache_format"] = kCacheFormatVersion;
  return info;
}

void CacheStats::Add(const Example& example, const OutputFeatures& output_features) {
  ++examples;
  for (const auto& [name, feature] : output_features) {
    auto it = example.find(name);
    if (it == example.end()) continue;
    const Tokens* ids = std::get_if<Tokens>(&it->second);
    if (!ids) continue;
    const int32_t pad = feature.vocabulary ? feature.vocabulary->pad_id() : 0;
    // No vocabulary, or eos_id -1 (PassThroughVocabulary without EOS): no
    // EOS to exclude, as _CountTokens with eos_id None.
    const int32_t eos = feature.vocabulary ? feature.vocabulary->eos_id() : -1;
    int64_t n = 0;
    for (int32_t id : *ids) n += (id != pad && id != eos) ? 1 : 0;
    tokens[name] += n;
    auto [m, inserted] = max_tokens.emplace(name, n);
    if (!inserted) m->second = std::max(m->second, n);
  }
}

void CacheStats::Merge(const CacheStats& other) {
  examples += other.examples;
  for (const auto& [k, n] : other.tokens) tokens[k] += n;
  for (const auto& [k, n] : other.max_tokens) {
    auto [m, inserted] = max_tokens.emplace(k, n);
    if (!inserted) m->second = std::max(m->second, n);
  }
}

nlohmann::json CacheStats::ToJson() const {
  nlohmann::json j = nlohmann::json::object();
  j["examples"] = examples;
  for (const auto& [k, n] : tokens) j[k + "_tokens"] = n;
  for (const auto& [k, n] : max_tokens) j[k + "_max_tokens"] = n;
  return j;
}

CacheStats CacheStats::FromJson(const nlohmann::json& j, const std::string& where) {
  T5XX_CHECK(j.is_object() && j.contains("examples"),
             where + ": expected a JSON object with \"examples\"");
  CacheStats s;
  for (const auto& [key, value] : j.items()) {
    const std::optional<int64_t> count = JsonInteger(value, 0);
    T5XX_CHECK(count.has_value(),
               where + ": \"" + key + "\" must be a non-negative integer, got " + DumpJson(value));
    const int64_t n = *count;
    const std::string& name = key;  // (a structured binding cannot be captured in C++17)
    const auto ends_with = [&name](const std::string& suffix) {
      return name.size() > suffix.size() &&
             name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (key == "examples") {
      s.examples = n;
    } else if (ends_with("_max_tokens")) {
      s.max_tokens[key.substr(0, key.size() - 11)] = n;
    } else if (ends_with("_tokens")) {
      s.tokens[key.substr(0, key.size() - 7)] = n;
    }
  }
  return s;
}

std::string CacheJsonText(const nlohmann::json& j) { return DumpJson(j, 2) + "\n"; }

}  // namespace t5xx::seqio
