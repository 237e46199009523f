// seqio.mixing_rate_num_examples (see mixing_rates.h).
#include "t5xx/data/dataset_providers/mixing_rates.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"

namespace t5xx::seqio {
namespace {

void CheckOptions(const MixingRateNumExamplesOptions& o) {
  T5XX_CHECK(std::isfinite(o.scale) && o.scale >= 0,
             "seqio.mixing_rate_num_examples: scale must be a finite number >= 0, got " +
                 std::to_string(o.scale));
  T5XX_CHECK(std::isfinite(o.temperature) && o.temperature > 0,
             "seqio.mixing_rate_num_examples: temperature must be a finite number > 0, got " +
                 std::to_string(o.temperature));
  T5XX_CHECK(!o.maximum || (std::isfinite(*o.maximum) && *o.maximum >= 0),
             "seqio.mixing_rate_num_examples: maximum must be None or a finite number >= 0, "
             "got " + std::to_string(o.maximum.value_or(0)));
}

// seqio's scale, maximum and temperature applied to a count.
double Scaled(double examples, const MixingRateNumExamplesOptions& options) {
  double rate = examples * options.scale;
  if (options.maximum && *options.maximum != 0) rate = std::min(rate, *options.maximum);
  if (options.temperature != 1.0) rate = std::pow(rate, 1.0 / options.temperature);
  return rate;
}

}  // namespace

double MixingRateNumExamples(const Task& task, const MixingRateNumExamplesOptions& options) {
  CheckOptions(options);
  const std::string what = "seqio.mixing_rate_num_examples for task '" + task.name() + "'";
  if (!task.CacheDir() && options.fallback_to_num_input_examples) {
    // seqio falls back to the source's num_input_examples (TFDS's
    // dataset_info.json counts).
    std::optional<int64_t> n;
    if (task.source()) n = task.source()->num_input_examples(options.split);
    if (n) return Scaled(static_cast<double>(*n), options);
    try {
      task.AssertCached();
    } catch (const Error& e) {
      throw Error(what + ": the task has no cache, and its source does not know its number of "
                         "input examples without reading them (seqio's "
                         "fallback_to_num_input_examples; TfdsDataSource does); " +
                  e.what());
    }
  }
  nlohmann::json stats;
  try {
    stats = task.GetCachedStats(options.split);
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
  T5XX_CHECK(stats.contains("examples") && stats["examples"].is_number(),
             what + ": the cache's stats." + options.split +
                 ".json has no number \"examples\": " + DumpJson(stats));
  return Scaled(stats["examples"].get<double>(), options);
}

MixtureRate MixingRateNumExamplesRate(const MixingRateNumExamplesOptions& options) {
  CheckOptions(options);
  return MixtureRate(MixtureRate::Fn(
      [options](const Task& task) { return MixingRateNumExamples(task, options); }));
}

}  // namespace t5xx::seqio
