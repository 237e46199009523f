// seqio's Evaluator (seqio/evaluation.py) with its loggers (seqio/loggers.py),
// as t5x's eval() and train()'s inference evaluation run it: each task of a
// task or mixture that has the split and metric_fns is read once and kept in
// memory (num_examples first examples; task_feature_lengths None = each
// feature's longest example), decoded with the model's predict_batch_with_aux
// (decode_fn, no packing) for its predict metric_fns and scored with
// score_batch for its score metric_fns (the log-likelihood of each
// example's targets), postprocessed and measured by the task's metric_fns
// (data/evaluation/evaluation.h), and logged:
//   console       "[<scope> <task>] step N | <metric> <value> | ..."
//                 (PyLoggingLogger)
//   TensorBoard   <log_dir>/<task>/ events, tags eval/<metric> (TensorBoardLogger)
//   JSON          <log_dir>/<task>-metrics.jsonl, one {"step": N, <metric>:
//                 value, ...} line appended per evaluation (written to a
//                 .tmp file and renamed, as seqio does), and
//                 <log_dir>/<task>-<step:06>.jsonl, one line per example:
//                 {"input": the task example, "target": the postprocessed
//                 target, "output": the decoded prediction, "prediction": the
//                 postprocessed prediction, "score": the score -- each
//                 of the last three only for the kind of metric_fn the
//                 task has} (JSONLogger; token lists over 32
//                 ids summarised as seqio's TensorAndNumpyEncoder does).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/metrics/metrics.h"
#include "t5xx/models/base_model.h"
#include "t5xx/run/inference/replicas.h"
#include "t5xx/run/train_config.h"

namespace t5xx::trainer {
class SummaryWriter;
}

namespace t5xx::run {

class InferenceEvaluator {
 public:
  // Reads every evaluated task's examples of d.split (unshuffled unless
  // d.shuffle, seeded with d.seed or 42 as seqio's Evaluator) now. `scope`
  // names the DatasetConfig in messages ("infer_eval", "eval"). Logs go to
  // log_dir when write_logs (the chief process). Throws t5xx::Error when a
  // task cannot be read. No task with the split and a metric_fn leaves the
  // evaluator empty (seqio's Evaluator: eval_tasks is empty).
  InferenceEvaluator(const DatasetConfig& d, const std::string& scope,
                     const EvaluatorConfig& config, std::string log_dir, bool write_logs);
  ~InferenceEvaluator();

  // Whether no task is evaluated, and why (for a message).
  bool empty() const { return tasks_.empty(); }
  // Whether some task has score_metric_fns (Evaluate then scores too).
  bool scores() const;
  const std::string& no_tasks_reason() const { return no_tasks_reason_; }

  // The evaluated tasks, in order.
  std::vector<std::string> task_names() const;
  // Examples of `task` kept for evaluation.
  size_t num_examples(const std::string& task) const;
  // The names of the metrics Evaluate returns for `task` (its metric_fns'
  // keys), found by scoring its targets as predictions; empty for a task
  // it does not evaluate.
  std::vector<std::string> MetricNames(const std::string& task) const;

  // Decodes every task's examples with `model` and `params` (decode settings
  // from `model_config`), computes and logs the metrics at `step`, and
  // returns task -> metric -> value. With `replicas` (replicas.h) the
  // processes decode their shares and every process gets every prediction
  // (only the one with write_logs writes). Throws t5xx::Error naming the
  // task when a metric fails.
  std::map<std::string, seqio::metrics::Metrics> Evaluate(
      int64_t step, const models::BaseTransformerModel& model, const models::ParamStore& params,
      const ModelConfig& model_config, std::ostream& console,
      const InferenceReplicas& replicas = {});

 private:
  struct TaskData {
    seqio::TaskPtr task;
    std::vector<seqio::Example> examples;
    seqio::FeatureLengths lengths;
  };
  // What the model gave for a task's examples: the decoded predictions
  // (with predict metric_fns) and the scores (with score metric_fns).
  struct TaskOutputs {
    std::vector<std::string> outputs;
    std::vector<double> scores;
  };
  void Log(int64_t step, const TaskData& t, const seqio::metrics::Metrics& metrics,
           const TaskOutputs& out);

  std::string scope_;  // "infer_eval", "eval": messages and console lines
  std::string no_tasks_reason_;
  std::vector<TaskData> tasks_;
  int64_t batch_size_;
  EvaluatorConfig config_;
  std::string log_dir_;
  bool write_logs_;
  std::map<std::string, std::unique_ptr<trainer::SummaryWriter>> writers_;
};

}  // namespace t5xx::run
