// seqio.mixing_rate_num_examples: a Mixture rate from the number of
// examples a task's cache holds, or its source's input examples.
//
// Behaviour source: seqio/utils.py (mixing_rate_num_examples) and
// seqio/dataset_providers.py (Task.get_cached_stats). Framework-free: no
// libtorch.
#pragma once

#include <optional>
#include <string>

#include "t5xx/data/dataset_providers/mixture.h"
#include "t5xx/data/dataset_providers/task.h"

namespace t5xx::seqio {

// seqio.mixing_rate_num_examples's arguments besides the task, with its
// defaults.
struct MixingRateNumExamplesOptions {
  // Clip after scaling, before the temperature; nullopt or 0: no clip
  // (seqio tests `if maximum:`).
  std::optional<double> maximum;
  double scale = 1.0;
  // rate = rate ** (1 / temperature); must be > 0.
  double temperature = 1.0;
  // seqio: use the source's number of input examples when the task has no
  // cache (DataSource::num_input_examples: TfdsDataSource knows it from
  // dataset_info.json; file sources do not, and then an uncached task is an
  // error either way).
  bool fallback_to_num_input_examples = true;
  std::string split = "train";
};

// n = task.GetCachedStats(split)["examples"] (stats.<split>.json of the
// task's cache, found in GetGlobalCacheDirs()), or, for a task without a
// cache and fallback_to_num_input_examples, the source's
// num_input_examples(split) when it has one; n *= scale; if maximum (and
// non-zero): n = min(n, maximum); if temperature != 1: n = n ** (1 /
// temperature). Throws t5xx::Error for scale < 0, temperature <= 0, a task
// without a cache (naming the directories searched and the cache_tasks
// command, Task::AssertCached), or stats without a numeric "examples".
double MixingRateNumExamples(const Task& task, const MixingRateNumExamplesOptions& options = {});

// The rate above as a Mixture entry's function rate (evaluated when the
// mixture asks for the task's rate). Checks scale and temperature now.
MixtureRate MixingRateNumExamplesRate(const MixingRateNumExamplesOptions& options);

}  // namespace t5xx::seqio
