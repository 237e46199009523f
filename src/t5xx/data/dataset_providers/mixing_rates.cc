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

}  // namespace

double MixingRateNumExamples(const Task& task, const MixingRateNumExamplesOptions& options) {
  CheckOptions(options);
  const std::string what = "seqio.mixing_rate_num_examples for task '" + task.name() + "'";
  if (!task.CacheDir() && options.fallback_to_num_input_examples) {
    // seqio would fall back to the source's num_input_examples.
    try {
      task.AssertCached();
    } catch (const Error& e) {
      throw Error(what + ": the task has no cache, and t5xx data sources do not know their "
                         "number of input examples (seqio's fallback_to_num_input_examples); " +
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
  double rate = stats["examples"].get<double>() * options.scale;
  if (options.maximum && *options.maximum != 0) rate = std::min(rate, *options.maximum);
  if (options.temperature != 1.0) rate = std::pow(rate, 1.0 / options.temperature);
  return rate;
}

MixtureRate MixingRateNumExamplesRate(const MixingRateNumExamplesOptions& options) {
  CheckOptions(options);
  return MixtureRate(MixtureRate::Fn(
      [options](const Task& task) { return MixingRateNumExamples(task, options); }));
}

}  // namespace t5xx::seqio
