// t5's evaluation metrics (t5/evaluation/metrics.py, t5/evaluation/qa_utils.py)
// without NumPy/sklearn. Framework-free: no libtorch.
//
// Every metric takes (targets, predictions) of equal, non-zero length and
// returns a std::map from metric name to value, scaled ×100 like t5 (so a
// perfect score is 100.0). Errors a caller can cause — mismatched lengths,
// empty input, out-of-domain labels, a squad example without references —
// throw t5xx::Error whose message starts with "metrics.<name>: ".
//
// Implemented: accuracy, sequence_accuracy, f1_score_with_invalid,
// mean_multiclass_f1, squad.
// Not implemented (yet): bleu (sacrebleu), rouge/rouge_mean, trivia_qa,
// span_squad, pearson/spearman, auc, rank_classification, edit_distance.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace t5xx::seqio::metrics {

// Metric name -> value (×100).
using Metrics = std::map<std::string, double>;

// t5 metrics.accuracy: 100 * fraction of i with targets[i] == predictions[i]
// (sklearn.metrics.accuracy_score). Output key: "accuracy".
// Throws t5xx::Error on mismatched lengths or empty input.
Metrics accuracy(const std::vector<std::string>& targets,
                 const std::vector<std::string>& predictions);
Metrics accuracy(const std::vector<int64_t>& targets,
                 const std::vector<int64_t>& predictions);

// t5 metrics.sequence_accuracy: 100 * fraction of examples whose predicted
// string equals the target string exactly (no normalisation).
// Output key: "sequence_accuracy".
// Throws t5xx::Error on mismatched lengths or empty input.
Metrics sequence_accuracy(const std::vector<std::string>& targets,
                          const std::vector<std::string>& predictions);

// t5 metrics.f1_score_with_invalid: binary F1 (positive label 1) ×100.
// A prediction outside {0, 1} is invalid and replaced by 1 - target, i.e. it
// always counts as wrong. F1 = 2TP / (2TP + FP + FN); 0 when TP+FP+FN == 0
// (sklearn's zero_division result). Output key: "f1".
// Throws t5xx::Error on mismatched lengths, empty input, or a target outside
// {0, 1}.
Metrics f1_score_with_invalid(const std::vector<int64_t>& targets,
                              const std::vector<int64_t>& predictions);

// t5 metrics.mean_multiclass_f1(num_classes): macro-averaged F1 over the
// labels 0..num_classes-1 (sklearn fbeta_score, beta=1, average="macro",
// labels=range(num_classes)) ×100. Per class c, F1 = 2TP/(2TP+FP+FN), 0 when
// the class occurs in neither targets nor predictions. Values outside the
// label range contribute only as FN/FP of the classes they are paired with.
// Output key: "mean_<N>class_f1" (e.g. "mean_3class_f1").
// Throws t5xx::Error if num_classes < 1 (at construction), and on mismatched
// lengths or empty input (at call).
using IntMetricFn = std::function<Metrics(const std::vector<int64_t>&,
                                          const std::vector<int64_t>&)>;
IntMetricFn mean_multiclass_f1(int num_classes);
Metrics mean_multiclass_f1(int num_classes, const std::vector<int64_t>& targets,
                           const std::vector<int64_t>& predictions);

// t5 qa_utils.normalize_squad (_normalize_answer with string.punctuation
// removed): ASCII-lowercase; delete ASCII punctuation; replace the whole
// words "a", "an", "the" with a space (word boundaries as regex \b, with
// bytes >= 0x80 treated as word characters); collapse runs of whitespace to
// one space and trim. Unlike Python, only ASCII letters are lowercased.
std::string normalize_squad(const std::string& answer);

// t5 metrics.squad -> qa_utils.qa_metrics: targets[i] is the list of
// reference answers for predictions[i]. All strings are normalised with
// normalize_squad; per example, EM (exact string equality) and token F1
// (bag-of-tokens overlap: P = common/|pred|, R = common/|ref|,
// F1 = 2PR/(P+R), 0 if nothing in common) are each maxed over the
// references, then averaged over examples and ×100. Output keys: "em", "f1".
// Throws t5xx::Error on mismatched lengths, empty input, or an example with
// no references.
Metrics squad(const std::vector<std::vector<std::string>>& targets,
              const std::vector<std::string>& predictions);

}  // namespace t5xx::seqio::metrics
