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
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "t5xx/metrics/metrics.h"
#include "t5xx/metrics/rank_classification.h"

namespace t5xx::seqio {

// One entry of a dict a postprocess_fn returns (ValueDict): a string, an
// integer, a float, a list of strings, or a list (Python tuple) of integers.
using DictEntry =
    std::variant<std::string, int64_t, double, std::vector<std::string>, std::vector<int64_t>>;

// A Python dict returned by a postprocess_fn, key -> entry. t5's
// postprocessors return dicts for three catalog tasks:
//   multirc  target {"value": class id, "group": idx/question (int)},
//            prediction {"value": class id}
//   record   target {"value": [answers], "group": [idx/passage, idx/query]}
//            (a Python tuple), prediction {"value": text}
//   span_qa  target {"answers": [answers], "context": text}
struct ValueDict {
  std::map<std::string, DictEntry> items;
  bool operator==(const ValueDict& o) const { return items == o.items; }
  bool operator!=(const ValueDict& o) const { return items != o.items; }
};

// What a postprocess_fn returns (postprocessors.h): Python lets it return
// anything; t5xx covers what t5's postprocessors and metrics use: a string,
// an integer class id, a float, a list of reference strings, a list (tuple)
// of integers, a dict (ValueDict), or the tuple t5's rank_classification
// postprocessor makes of a target (metrics::RankClassificationTarget).
using PostprocessedValue =
    std::variant<std::string, int64_t, double, std::vector<std::string>, std::vector<int64_t>,
                 ValueDict, metrics::RankClassificationTarget>;

// A dict entry as a PostprocessedValue (the same alternative).
PostprocessedValue ToValue(const DictEntry& e);

// "string 'x'", "int 3", "float 0.5", "list of 2 strings", "tuple of 2
// ints", "dict with keys 'group', 'value'": for error messages.
std::string DescribeValue(const PostprocessedValue& v);

// seqio metric_fn(targets, predictions) -> {name: value}, over postprocessed
// values. Throws t5xx::Error (message starting "metrics.<name>: ") when the
// values have the wrong kind for the metric.
using MetricFn = std::function<metrics::Metrics(
    const std::vector<PostprocessedValue>& targets,
    const std::vector<PostprocessedValue>& predictions)>;

// seqio score metric_fn(targets, scores) -> {name: value}: a metric whose
// Python signature is (targets, scores) gets the postprocessed targets and
// the model's score of each example (the log-likelihood of its targets,
// t5x's score_batch), in example order (seqio/metrics.py
// PassthroughLegacyMetric, ModelOutputType.SCORE). Throws t5xx::Error as
// MetricFn does.
using ScoreMetricFn = std::function<metrics::Metrics(
    const std::vector<PostprocessedValue>& targets, const std::vector<double>& scores)>;

// A task's metric_fns, split as seqio splits them by signature:
// predict_metric_fns (targets, predictions) and score_metric_fns (targets,
// scores). Built implicitly from a list of predict metric_fns.
struct TaskMetricFns {
  std::vector<MetricFn> predict;
  std::vector<ScoreMetricFn> score;
  TaskMetricFns() = default;
  TaskMetricFns(std::vector<MetricFn> predict_fns)  // NOLINT: implicit on purpose
      : predict(std::move(predict_fns)) {}
  bool empty() const { return predict.empty() && score.empty(); }
};

// t5's metrics (metrics.h) as MetricFns over postprocessed values:
//  accuracy              strings (exact match) or numbers (equal as doubles)
//  sequence_accuracy     strings
//  f1_score_with_invalid integers (floats with integral values accepted)
//  mean_multiclass_f1    integers; num_classes >= 1
//  squad, trivia_qa      targets: lists of answers; predictions: strings
//                        (squad, as t5's: a string target is the list of its
//                        characters -- t5's squad_v010 has no postprocess_fn)
//  bleu                  predictions: strings; targets: strings, or lists of
//                        strings when the first target is a list (t5's test)
//  rouge, rouge_mean     strings
//  pearson_corrcoef,     numbers (postprocess_fn=@t5.data.postprocessors.
//  spearman_corrcoef       string_to_float)
//  edit_distance         strings
// and, below, the catalog's metrics over class ids and dicts.
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

// --- The metrics of t5's GLUE/SuperGLUE/SQuAD catalog (t5/data/glue_utils.py
// GLUE_METRICS, SUPERGLUE_METRICS; t5/data/tasks.py) ---------------------
// (catalog_metric_fns.cc)

// t5 metrics.sklearn_metrics_wrapper(metric_str, metric_dict_str=None,
// metric_post_process_fn=None): {metric_dict_str or metric_str:
// post(sklearn.metrics.<metric_str>(targets, predictions))}. t5xx implements
// metric_str "matthews_corrcoef" (metrics::matthews_corrcoef; targets and
// predictions are integer class ids, postprocess_fn=string_label_to_class_id).
// An empty metric_dict_str stands for None; a null post for None (the raw
// coefficient in [-1, 1]). Throws t5xx::Error for another metric_str.
MetricFn sklearn_metrics_wrapper(const std::string& metric_str,
                                 const std::string& metric_dict_str = "",
                                 std::function<double(double)> metric_post_process_fn = nullptr);

// glue_utils' CoLA metric: sklearn_metrics_wrapper("matthews_corrcoef",
// metric_post_process_fn=lambda x: 100 * x). Output key "matthews_corrcoef",
// ×100 (0 when either side holds one class only, as sklearn).
MetricFn cola_matthews_corrcoef();

// t5 metrics.multirc_f1_over_all_answers: f1_score_with_invalid over the
// "value" of each target and prediction dict (postprocess_fn=multirc).
// Output key "f1".
MetricFn multirc_f1_over_all_answers();

// t5 metrics.all_match: {"exact_match": 100 if targets and predictions are
// equal lists (numpy.array_equal: same length, pairwise equal; an int and a
// float compare by value, other kinds differ) else 0}. No error on empty or
// unequal lengths (100 and 0, as numpy).
MetricFn all_match();

// t5 metrics.mean_group_metric(metric_fn, group_key="group",
// value_key="value", return_subgroup_scores=False): the examples are grouped
// by their target dict's `group_key` entry (groups in order of first
// appearance); metric_fn runs on each group's `value_key` entries (targets
// from the target dicts, predictions from the prediction dicts); each key's
// scores are averaged over the groups (numpy.mean). With
// return_subgroup_scores, also "<group>-<key>" per group (the group written
// as Python's str: 3, (1, 2), 'a' -> a). Targets and predictions must be
// dicts (postprocess_fn=multirc or record) holding those keys.
MetricFn mean_group_metric(MetricFn metric_fn, const std::string& group_key = "group",
                           const std::string& value_key = "value",
                           bool return_subgroup_scores = false);

// t5 metrics.deduplicate_metric(metric_fn, group_key="group",
// value_key="value"): keeps the first example of each target `group_key`
// entry and calls metric_fn on their `value_key` entries (ReCoRD's replicated
// examples are scored once).
MetricFn deduplicate_metric(MetricFn metric_fn, const std::string& group_key = "group",
                            const std::string& value_key = "value");

// t5 metrics.span_squad: targets are span_qa dicts {"answers", "context"},
// predictions strings "start: 3 end: 6" (metrics::span_squad). Output keys
// "em", "f1".
MetricFn span_squad();

// glue_utils.get_glue_metric(name) / get_super_glue_metric(name): the
// metric_fns t5's catalog gives the GLUE / SuperGLUE task of that TFDS
// builder config, in t5's order:
//   GLUE: cola [cola_matthews_corrcoef]; sst2, mnli, mnli_matched,
//     mnli_mismatched, qnli, rte, wnli [accuracy]; mrpc, qqp
//     [f1_score_with_invalid, accuracy]; stsb [pearson_corrcoef,
//     spearman_corrcoef]; ax [].
//   SuperGLUE: boolq, copa, rte, wic [accuracy]; cb [mean_multiclass_f1(3),
//     accuracy]; multirc [multirc_f1_over_all_answers,
//     mean_group_metric(all_match)]; record [deduplicate_metric(squad)];
//     axb, axg [].
// Throws t5xx::Error for another name (Python: KeyError), e.g. "wsc.fixed"
// (t5's catalog uses wsc_simple tasks instead).
std::vector<MetricFn> glue_metric(const std::string& name);

std::vector<MetricFn> super_glue_metric(const std::string& name);

// t5 metrics.rank_classification(targets, scores, num_classes=None,
// normalize_by_target_length=False) as a score metric_fn: targets are the
// tuples of postprocess_fn=@t5.data.postprocessors.rank_classification
// (RankClassificationTarget); metrics::rank_classification computes it.
// Throws t5xx::Error for num_classes < 1 (when made) and a target of
// another kind (naming the postprocess_fn).
ScoreMetricFn rank_classification(std::optional<int64_t> num_classes = std::nullopt,
                                  bool normalize_by_target_length = false);
}  // namespace metric_fns

}  // namespace t5xx::seqio
