// Which checkpoints t5x's checkpoints.SaveBestCheckpointer deletes after a
// save (t5x/checkpoints.py, SaveBestCheckpointer._remove_old_checkpoints):
// it keeps the `keep` best by a monitored metric plus always the newest.
// Framework-free; the metrics come from the caller (the trainer reads them
// from the run's TensorBoard summaries, as t5x's populate_metrics_for_steps
// does).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace t5xx::checkpoints {

// checkpoints.SaveBestCheckpointer's parameters beyond Checkpointer's.
struct SaveBestConfig {
  // '{run}/{tag}', e.g. 'inference_eval/glue_cola_v002/eval/accuracy'.
  std::string metric_name_to_monitor = "train/accuracy";
  std::string metric_mode = "max";  // 'max' or 'min'
  // True: checkpoints without a value of the metric are never deleted;
  // False: they go first (t5x sorts them as -inf for 'max', +inf for
  // 'min'), so with no metric at all the oldest go, as for Checkpointer.
  bool keep_checkpoints_without_metrics = true;
  // Steps divisible by it are never deleted (the newest aside, which is
  // kept anyway).
  std::optional<int64_t> force_keep_period;
  // Orbax's CheckpointManager rules instead of SaveBestCheckpointer's (t5x
  // with train.use_orbax = True and OrbaxCheckpointManagerInterface's
  // metric arguments): see OrbaxBestStepsToRemove.
  bool orbax = false;
};

// The steps to delete of the checkpoints `steps` (ascending, the newest
// last, as t5x's all_steps) under `keep` (>= 1): nothing while at most
// keep + 1 remain after force_keep_period's exemptions; otherwise
// `metrics()` (metric value by step; called only then) ranks all but the
// newest -- steps without a value are exempt under
// keep_checkpoints_without_metrics, else ranked worst -- and the worst
// beyond `keep` are returned, ties in step order (Python's stable sort,
// reversed for 'min'). Throws t5xx::Error for a metric_mode other than
// 'max' or 'min' (t5x raises ValueError).
// With config.orbax: OrbaxBestStepsToRemove.
std::vector<int64_t> SaveBestStepsToRemove(std::vector<int64_t> steps, int64_t keep,
                                           const SaveBestConfig& config,
                                           const std::function<std::map<int64_t, double>()>& metrics);

// Orbax's CheckpointManager._get_old_steps_to_remove (orbax-checkpoint
// 0.6.4) with best_fn = the monitored metric, as t5x's
// OrbaxCheckpointManagerInterface sets it (metrics from the summaries, as
// populate_metrics_for_steps reads them): nothing while at most `keep`
// checkpoints exist; else the checkpoints with a value are sorted worst
// first (stable; 'min' reverses the ascending order); under
// keep_checkpoints_without_metrics those without a value and the last
// `keep` of the sorted ones stay, else the last `keep` of (without value,
// then sorted); of the others, steps divisible by force_keep_period
// (keep_period) stay too. Unlike SaveBestCheckpointer the newest is not kept
// for being the newest. Returns the steps to delete, ascending.
std::vector<int64_t> OrbaxBestStepsToRemove(const std::vector<int64_t>& steps, int64_t keep,
                                            const SaveBestConfig& config,
                                            const std::map<int64_t, double>& metrics);

}  // namespace t5xx::checkpoints
