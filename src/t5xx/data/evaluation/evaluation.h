// Scoring a Task's predictions with its postprocess_fn and metric_fns, as
// seqio's Evaluator does per task (seqio/evaluation.py: targets from
// "targets_pretokenized" or the decoded "targets", postprocess_fn on targets
// and predictions, each metric_fn(targets, predictions) merged into one
// dict). Framework-free: no libtorch.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "t5xx/data/dataset_providers/postprocessors.h"
#include "t5xx/data/pipeline/example.h"
#include "t5xx/metrics/metric_fns.h"

namespace t5xx::seqio {

class Task;

// The decoded target of a task example: "targets_pretokenized" when present
// (seqio keeps the raw text), else the "targets" tokens decoded with the
// task's targets vocabulary. Throws t5xx::Error naming the task when the
// example has neither.
std::string DecodedTarget(const Task& task, const Example& example);

// seqio Evaluator, one task: with postprocess = task.postprocess_fn() (the
// identity, returning the string, when unset),
//   targets[i]     = postprocess(DecodedTarget(task, examples[i]), examples[i], true)
//   predictions[i] = postprocess(predictions[i], examples[i], false)
// then every predict metric_fn of the task on (targets, predictions); the
// results are merged. Throws t5xx::Error naming the task when the task has
// no predict metric_fns, the counts differ or are 0, two metric_fns return
// the same key, or a metric fails (its message is kept).
metrics::Metrics EvaluatePredictions(const Task& task,
                                     const std::vector<Example>& examples,
                                     const std::vector<std::string>& predictions);

// seqio Evaluator's score metrics, one task: targets as EvaluatePredictions
// makes them, then every score metric_fn on (targets, scores) -- scores[i]
// the model's log-likelihood of examples[i]'s targets (t5x score_batch);
// merged. Throws t5xx::Error as EvaluatePredictions (no score metric_fns,
// counts).
metrics::Metrics EvaluateScores(const Task& task, const std::vector<Example>& examples,
                                const std::vector<double>& scores);

// Adds `from` to `into`; t5xx::Error naming the task when a key is in both
// (seqio: "Duplicate metric key").
void MergeMetrics(const Task& task, const metrics::Metrics& from, metrics::Metrics& into);

// The predictions file of `t5xx data score`: one prediction per line, in
// example order, plain or gzip (LineReader, file_utils.h: "\n" and "\r\n"
// line ends; every other byte kept, so a prediction may hold any bytes but a
// newline). An empty file has no predictions. Throws t5xx::Error naming the
// path when it is missing, not a regular file, or unreadable (a truncated
// gzip stream: naming the line).
std::vector<std::string> ReadPredictionsFile(const std::string& path);

}  // namespace t5xx::seqio
