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
  if (config.orbax) {
    if (static_cast<int64_t>(steps.size()) <= keep) return {};
    return OrbaxBestStepsToRemove(steps, keep, config, metrics());
  }
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

std::vector<int64_t> OrbaxBestStepsToRemove(const std::vector<int64_t>& steps, int64_t keep,
                                            const SaveBestConfig& config,
                                            const std::map<int64_t, double>& metrics) {
  if (static_cast<int64_t>(steps.size()) <= keep) return {};
  std::vector<int64_t> without, sorted;
  for (int64_t s : steps) (metrics.count(s) ? sorted : without).push_back(s);
  // sorted(key=best_fn, reverse=(best_mode == 'min')): Python's reverse
  // keeps equal keys in their order, so a stable sort by the flipped order.
  const bool max = config.metric_mode == "max";
  std::stable_sort(sorted.begin(), sorted.end(), [&](int64_t a, int64_t b) {
    return max ? metrics.at(a) < metrics.at(b) : metrics.at(a) > metrics.at(b);
  });
  const size_t k = static_cast<size_t>(std::max<int64_t>(keep, 0));
  std::vector<int64_t> maybe_delete, active;
  auto split = [&](const std::vector<int64_t>& v) {
    const size_t cut = v.size() > k ? v.size() - k : 0;
    maybe_delete.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(cut));
    active.insert(active.end(), v.begin() + static_cast<std::ptrdiff_t>(cut), v.end());
  };
  if (config.keep_checkpoints_without_metrics) {
    active = without;
    split(sorted);
  } else {
    std::vector<int64_t> all = without;
    all.insert(all.end(), sorted.begin(), sorted.end());
    split(all);
    if (k == 0) maybe_delete = sorted;  // Orbax's keep == 0 branch
  }
  std::vector<int64_t> kept = active;
  for (int64_t s : maybe_delete) {
    if (config.force_keep_period && s % *config.force_keep_period == 0) kept.push_back(s);
  }
  std::vector<int64_t> out;
  for (int64_t s : steps) {
    if (std::find(kept.begin(), kept.end(), s) == kept.end()) out.push_back(s);
  }
  return out;
}

}  // namespace t5xx::checkpoints
