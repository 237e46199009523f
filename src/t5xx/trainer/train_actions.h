// t5x's trainer actions (t5x/trainer.py EarlyStoppingAction,
// TerminateOnNanAction): their gin settings, checks, and running them on the
// summaries of a train step or a train-eval.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace t5xx::trainer {

// One of t5x's trainer actions (t5x/trainer.py), run after a train summary
// (mode TRAIN; metrics keyed by task "train"), after a train-eval
// (TRAIN_EVAL; keyed by eval task name) or after an inference evaluation
// (INFER_EVAL; keyed by task, the metric_fns' names: ('task', 'bleu')). Returns true to stop training.
struct ActionConfig {
  enum class Kind { kEarlyStopping, kTerminateOnNan };
  Kind kind = Kind::kEarlyStopping;
  std::string gin_name;  // for messages, e.g. "trainer.EarlyStoppingAction"
  std::string task;      // metric = (task, metric) in t5x
  std::string metric = "loss";
  // EarlyStoppingAction only.
  std::string mode = "min";  // "min" or "max"
  int64_t patience = 3;
  double atol = 0, rtol = 0;
};

// Checks an action's settings against what the run will summarize: its task
// among `tasks` (the summaries of `mode`, "TRAIN", "TRAIN_EVAL" or
// "INFER_EVAL"), its metric a t5x metric name (not for INFER_EVAL, whose
// metrics are the task's metric_fns'), mode/patience/atol/rtol valid. Throws t5xx::Error naming
// the gin key.
void ValidateAction(const ActionConfig& a, const std::string& mode,
                    const std::vector<std::string>& tasks);

// Checks utils.SaveCheckpointConfig's SaveBestCheckpointer metric
// ('{run}/{tag}') against the summaries the run writes: 'train/<metric>',
// 'training_eval/<task>/<metric>' (a task of `eval_tasks`) or
// 'inference_eval/<task>/eval/<metric>' (a task of `infer_metrics`, one of
// its metric names). Throws t5xx::Error naming
// <configurable>.metric_name_to_monitor and what exists.
void ValidateMonitoredMetric(const std::string& metric, const std::vector<std::string>& eval_tasks,
                             const std::map<std::string, std::vector<std::string>>& infer_metrics,
                             const std::string& configurable = "checkpoints.SaveBestCheckpointer");

// An INFER_EVAL action's metric among its task's metric names (the
// evaluator's): throws t5xx::Error naming the gin key and the names.
void ValidateInferEvalMetric(const ActionConfig& a, const std::vector<std::string>& names);

// An action with its state (EarlyStoppingAction's metric history).
struct Action {
  ActionConfig config;
  std::vector<double> history;

  // t5x's EarlyStoppingAction.run / TerminateOnNanAction.run on the summaries
  // of one evaluation (task -> metric -> value); true = stop training.
  // Explains a stop (or a missing metric) on `console`.
  bool Run(const std::map<std::string, std::map<std::string, double>>& by_task,
           int64_t step, std::ostream& console);
};

// Runs every action (as t5x's run_actions, all of them, or-ing the results);
// *nan_stop is set when a TerminateOnNanAction asked to stop.
bool RunActions(std::vector<Action>& actions,
                const std::map<std::string, std::map<std::string, double>>& by_task,
                int64_t step, std::ostream& console, bool* nan_stop);

}  // namespace t5xx::trainer
