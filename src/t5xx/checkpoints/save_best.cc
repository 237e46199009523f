// See save_best.h (t5x/checkpoints.py SaveBestCheckpointer, step for step).
#include "t5xx/checkpoints/save_best.h"

#include <algorithm>
#include <limits>

#include "t5xx/util/error.h"

namespace t5xx::checkpoints {

std::vector<int64_t> SaveBestStepsToRemove(std::vector<int64_t> steps, int64_t keep,
                                           const SaveBestConfig& config,
                                           const std::function<std::map<int64_t, double>()>& metrics) {
  const bool max = config.metric_mode == "max";
  T5XX_CHECK(max || config.metric_mode == "min",
             "checkpoints.SaveBestCheckpointer.metric_mode = '" + config.metric_mode +
                 "': must be 'max' or 'min' (t5x raises ValueError: Unsupported `metric_mode`)");
  if (keep <= 0 || steps.empty()) return {};
  if (config.force_keep_period) {
    // _filter_out_force_keep_period_steps: the newest always stays a candidate.
    const int64_t last = steps.back();
    steps.pop_back();
    steps.erase(std::remove_if(steps.begin(), steps.end(),
                               [&](int64_t s) { return s % *config.force_keep_period == 0; }),
                steps.end());
    steps.push_back(last);
  }
  // One more than `keep`: the newest is always kept.
  if (static_cast<int64_t>(steps.size()) <= keep + 1) return {};
  const std::map<int64_t, double> by_step = metrics();
  steps.pop_back();
  if (config.keep_checkpoints_without_metrics) {
    steps.erase(std::remove_if(steps.begin(), steps.end(),
                               [&](int64_t s) { return by_step.count(s) == 0; }),
                steps.end());
  }
  const int64_t to_remove = static_cast<int64_t>(steps.size()) - keep;
  if (to_remove <= 0) return {};
  const double not_found = max ? -std::numeric_limits<double>::infinity()
                               : std::numeric_limits<double>::infinity();
  auto value = [&](int64_t s) {
    auto it = by_step.find(s);
    return it == by_step.end() ? not_found : it->second;
  };
  // sorted(key=value, reverse=(mode != 'max')): stable either way.
  std::stable_sort(steps.begin(), steps.end(), [&](int64_t a, int64_t b) {
    return max ? value(a) < value(b) : value(a) > value(b);
  });
  steps.resize(static_cast<size_t>(to_remove));
  return steps;
}

}  // namespace t5xx::checkpoints
