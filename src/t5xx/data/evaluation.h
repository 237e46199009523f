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

#include "t5xx/data/example.h"
#include "t5xx/data/metrics.h"
#include "t5xx/data/postprocessors.h"

namespace t5xx::seqio {

class Task;

// seqio metric_fn(targets, predictions) -> {name: value}, over postprocessed
// values. Throws t5xx::Error (message starting "metrics.<name>: ") when the
// values have the wrong kind for the metric.
using MetricFn = std::function<metrics::Metrics(
    const std::vector<PostprocessedValue>& targets,
    const std::vector<PostprocessedValue>& predictions)>;

// t5's metrics (metrics.h) as MetricFns over postprocessed values:
//  accuracy              strings (exact match) or numbers (equal as doubles)
//  sequence_accuracy     strings
//  f1_score_with_invalid integers (floats with integral values accepted)
//  mean_multiclass_f1    integers; num_classes >= 1
//  squad, trivia_qa      targets: lists of answers; predictions: strings
//  bleu                  predictions: strings; targets: strings, or lists of
//                        strings when the first target is a list (t5's test)
//  rouge, rouge_mean     strings
//  pearson_corrcoef,     numbers (postprocess_fn=@t5.data.postprocessors.
//  spearman_corrcoef       string_to_float)
//  edit_distance         strings
// A value of another kind is an error naming the metric, the example index,
// the value and the postprocess_fn that would produce the right kind.
// Arguments are checked when the MetricFn is made (a bad tokenizer or rouge
// type is a t5xx::Error then, not at the first evaluation).
namespace metric_fns {
MetricFn accuracy();
MetricFn sequence_accuracy();
MetricFn f1_score_with_invalid();
MetricFn mean_multiclass_f1(int num_classes);
MetricFn squad();
MetricFn trivia_qa();
MetricFn bleu(const std::string& tokenizer = "intl");
MetricFn rouge(const std::vector<std::string>& score_keys = {"rouge1", "rouge2", "rougeLsum"},
               bool use_stemmer = false);
MetricFn rouge_mean(const std::vector<std::string>& score_keys = {"rouge1", "rouge2",
                                                                  "rougeLsum"},
                    bool use_stemmer = false);
MetricFn pearson_corrcoef();
MetricFn spearman_corrcoef();
MetricFn edit_distance(bool lower = true);
}  // namespace metric_fns

// The decoded target of a task example: "targets_pretokenized" when present
// (seqio keeps the raw text), else the "targets" tokens decoded with the
// task's targets vocabulary. Throws t5xx::Error naming the task when the
// example has neither.
std::string DecodedTarget(const Task& task, const Example& example);

// seqio Evaluator, one task: with postprocess = task.postprocess_fn() (the
// identity, returning the string, when unset),
//   targets[i]     = postprocess(DecodedTarget(task, examples[i]), examples[i], true)
//   predictions[i] = postprocess(predictions[i], examples[i], false)
// then every metric_fn of the task on (targets, predictions); the results are
// merged. Throws t5xx::Error naming the task when the task has no metric_fns,
// the counts differ or are 0, two metric_fns return the same key, or a metric
// fails (its message is kept).
metrics::Metrics EvaluatePredictions(const Task& task,
                                     const std::vector<Example>& examples,
                                     const std::vector<std::string>& predictions);

// The predictions file of `t5xx data score`: one prediction per line, in
// example order, plain or gzip (LineReader, file_utils.h: "\n" and "\r\n"
// line ends; every other byte kept, so a prediction may hold any bytes but a
// newline). An empty file has no predictions. Throws t5xx::Error naming the
// path when it is missing, not a regular file, or unreadable (a truncated
// gzip stream: naming the line).
std::vector<std::string> ReadPredictionsFile(const std::string& path);

}  // namespace t5xx::seqio
