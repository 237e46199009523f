// t5's metrics (metrics.h) as seqio metric_fns: functions of the
// postprocessed targets and predictions of a task, returning {name: value}.
// The values a postprocess_fn may return (PostprocessedValue) are defined
// here, below the data layer, so that scoring needs no part of seqio's
// pipeline.
//
// Behaviour source: t5/evaluation/metrics.py (each metric's arguments and
// kinds of values) and seqio/evaluation.py (metric_fn(targets, predictions)).
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "t5xx/metrics/metrics.h"

namespace t5xx::seqio {

// What a postprocess_fn returns (postprocessors.h): Python lets it return
// anything; t5xx covers what t5's postprocessors and metrics use: a string,
// an integer class id, a float, or a list of reference strings.
using PostprocessedValue =
    std::variant<std::string, int64_t, double, std::vector<std::string>>;

// "string 'x'", "int 3", "float 0.5", "list of 2 strings": for error messages.
std::string DescribeValue(const PostprocessedValue& v);

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

}  // namespace t5xx::seqio
