// t5x's trainer actions: checking their settings and running them.
#include "t5xx/trainer/train_actions.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "t5xx/trainer/train_metrics.h"
#include "t5xx/util/error.h"

namespace t5xx::trainer {
namespace {

using Summary = std::map<std::string, double>;

// The metric names an action may watch (MetricsAccumulator's, plus the
// per-feature families).
bool IsKnownMetric(const std::string& name, bool train) {
  static const std::set<std::string> kModel = {
      "accuracy", "loss", "z_loss", "cross_ent_loss", "loss_per_nonpadding_target_token",
      "loss_per_all_target_tokens", "z_loss_per_all_target_tokens",
      "cross_ent_loss_per_all_target_tokens", "non_padding_fraction/loss_weights",
      "timing/seconds", "timing/seqs", "timing/steps_per_second", "timing/seqs_per_second",
      "timing/seqs_per_second_per_core", "timing/target_tokens_per_second",
      "timing/target_tokens_per_second_per_core"};
  static const std::set<std::string> kTrain = {"learning_rate", "learning_rate/current",
                                               "timing/uptime", "timing/model_flops_per_second",
                                               "timing/mfu"};
  if (kModel.count(name) || (train && kTrain.count(name))) return true;
  return name.rfind("non_padding_fraction/", 0) == 0 ||
         name.rfind("effective_batch_size/", 0) == 0;
}

std::string TaskKey(const ActionConfig& a) {
  return a.gin_name + (a.kind == ActionConfig::Kind::kEarlyStopping ? ".metric" : ".task");
}

}  // namespace

void ValidateAction(const ActionConfig& a, const std::string& mode,
                    const std::vector<std::string>& tasks) {
  const std::string key = TaskKey(a);
  if (std::find(tasks.begin(), tasks.end(), a.task) == tasks.end()) {
    std::string known;
    for (const auto& t : tasks) known += (known.empty() ? "'" : ", '") + t + "'";
    throw Error(key + " names task '" + a.task + "', but the " + mode + " summaries are " +
                (tasks.empty() ? std::string(mode == "INFER_EVAL"
                                                 ? "none (no inference evaluation)"
                                                 : "none (train.train_eval_dataset_cfg is None)")
                               : "for " + known) +
                "; name one of those" +
                (mode == "TRAIN"        ? ""
                 : mode == "INFER_EVAL" ? " or set train.infer_eval_dataset_cfg"
                                        : " or set train.train_eval_dataset_cfg"));
  }
  // INFER_EVAL metrics are what the task's metric_fns return: named at the
  // first evaluation when missing (Action::Run).
  T5XX_CHECK(mode == "INFER_EVAL" || IsKnownMetric(a.metric, mode == "TRAIN"),
        a.gin_name + ".metric names metric '" + a.metric + "', which the " + mode +
            " summaries do not have; use a t5x metric name such as 'loss', 'accuracy' or "
            "'loss_per_nonpadding_target_token'");
  if (a.kind == ActionConfig::Kind::kEarlyStopping) {
    T5XX_CHECK(a.mode == "min" || a.mode == "max",
          a.gin_name + ".mode = '" + a.mode + "': use 'min' or 'max' (t5x: mode must be in "
          "[\"min\", \"max\"])");
    T5XX_CHECK(a.patience >= 1, a.gin_name + ".patience must be >= 1, got " +
                               std::to_string(a.patience));
    T5XX_CHECK(a.atol >= 0, a.gin_name + ".atol must be >= 0, got " + FormatMetric(a.atol));
    T5XX_CHECK(a.rtol >= 0, a.gin_name + ".rtol must be >= 0, got " + FormatMetric(a.rtol));
  }
}

namespace {

std::string Quoted(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out.empty() ? "none" : out;
}

}  // namespace

void ValidateMonitoredMetric(const std::string& metric, const std::vector<std::string>& eval_tasks,
                             const std::map<std::string, std::vector<std::string>>& infer_metrics,
                             const std::string& configurable) {
  const std::string key = configurable + ".metric_name_to_monitor = '" + metric + "'";
  auto under = [&](const std::string& prefix) { return metric.rfind(prefix, 0) == 0; };
  if (under("train/")) {
    const std::string tag = metric.substr(6);
    T5XX_CHECK(IsKnownMetric(tag, /*train=*/true),
               key + ": the train summaries have no '" + tag +
                   "'; use a t5x metric name such as 'train/loss' or 'train/accuracy'");
    return;
  }
  if (under("training_eval/")) {
    for (const std::string& t : eval_tasks) {
      if (!under("training_eval/" + t + "/")) continue;
      const std::string tag = metric.substr(14 + t.size() + 1);
      T5XX_CHECK(IsKnownMetric(tag, /*train=*/false),
                 key + ": the train-eval summaries have no '" + tag + "'; use e.g. 'loss' or 'accuracy'");
      return;
    }
    throw Error(key + ": no train-eval task of this run is named there; the train-eval tasks are " +
                Quoted(eval_tasks));
  }
  if (under("inference_eval/")) {
    std::vector<std::string> tasks;
    for (const auto& [t, names] : infer_metrics) {
      tasks.push_back(t);
      if (!under("inference_eval/" + t + "/")) continue;
      const std::string tag = metric.substr(15 + t.size() + 1);
      T5XX_CHECK(tag.rfind("eval/", 0) == 0 &&
                     std::find(names.begin(), names.end(), tag.substr(5)) != names.end(),
                 key + ": task '" + t + "' logs " + Quoted(names) + " under 'eval/' (e.g. '" +
                     "inference_eval/" + t + "/eval/" + (names.empty() ? "bleu" : names.front()) + "')");
      return;
    }
    throw Error(key + ": no task of the inference evaluation is named there; its tasks are " +
                Quoted(tasks));
  }
  throw Error(key + ": t5xx writes no summaries under that run; monitor 'train/<metric>', "
                    "'training_eval/<task>/<metric>' or 'inference_eval/<task>/eval/<metric>'");
}

void ValidateInferEvalMetric(const ActionConfig& a, const std::vector<std::string>& names) {
  T5XX_CHECK(std::find(names.begin(), names.end(), a.metric) != names.end(),
             a.gin_name + ".metric names metric '" + a.metric + "' of task '" + a.task +
                 "', whose metric_fns give " + Quoted(names) + "; name one of those");
}

// t5x's EarlyStoppingAction.run / TerminateOnNanAction.run.
bool Action::Run(const std::map<std::string, Summary>& by_task, int64_t step,
                 std::ostream& console) {
  auto t = by_task.find(config.task);
  if (t == by_task.end()) return false;  // validated; e.g. an empty eval
  auto m = t->second.find(config.metric);
  if (m == t->second.end()) {
    console << "[action] " << config.gin_name << ": metric '" << config.metric
            << "' is not in the summary of task '" << config.task << "'; not run" << std::endl;
    return false;
  }
  const double value = m->second;
  if (config.kind == ActionConfig::Kind::kTerminateOnNan) {
    if (std::isfinite(value)) return false;
    console << "[action] " << config.gin_name << ": " << config.metric << " of task '"
            << config.task << "' is " << value << " at step " << step
            << "; stopping training" << std::endl;
    return true;
  }
  history.push_back(value);
  if (static_cast<int64_t>(history.size()) < config.patience) return false;
  // No improvement between consecutive values: min mode: current >=
  // previous - (atol + rtol * |previous|); max mode: current <= previous +
  // (atol + rtol * |previous|).
  bool stalled = true;
  for (size_t i = 0; i + 1 < static_cast<size_t>(config.patience); ++i) {
    const double prev = history[i], cur = history[i + 1];
    const double delta = config.atol + config.rtol * std::abs(prev);
    stalled = stalled && (config.mode == "min" ? cur >= prev - delta : cur <= prev + delta);
  }
  if (stalled) {
    std::ostringstream h;
    for (size_t i = 0; i < history.size(); ++i) h << (i ? ", " : "") << FormatMetric(history[i]);
    console << "[action] " << config.gin_name << ": " << config.metric << " of task '"
            << config.task << "' has not improved for " << config.patience
            << " evaluations (" << h.str() << ") at step " << step << "; stopping training"
            << std::endl;
    return true;
  }
  history.erase(history.begin());
  return false;
}

// Runs every action (as t5x's run_actions, all of them, or-ing the results);
// *nan_stop is set when a TerminateOnNanAction asked to stop.
bool RunActions(std::vector<Action>& actions, const std::map<std::string, Summary>& by_task,
                int64_t step, std::ostream& console, bool* nan_stop) {
  bool stop = false;
  for (auto& a : actions) {
    const bool s = a.Run(by_task, step, console);
    if (s && a.config.kind == ActionConfig::Kind::kTerminateOnNan) *nan_stop = true;
    stop = stop || s;
  }
  return stop;
}

}  // namespace t5xx::trainer
