// t5's rank_classification metric (t5/evaluation/metrics.py:
// rank_classification): multiple-choice classification by log-likelihood
// ranking. The rank_classification preprocessor (data/preprocessors/
// rank_classification.h) makes one example per (input, choice); the model
// scores each (seqio's score metric_fns get the log-likelihoods); the
// choice with the best score of each input is its prediction.
//
// The sklearn metrics t5 calls are computed here with sklearn's rules
// (sklearn 1.5: accuracy_score on indicator rows, f1_score binary,
// fbeta_score macro over indicator columns, roc_auc_score and
// average_precision_score over the distinct thresholds of the scores, all
// with sample weights). Checked against t5's own function by
// tests/metrics/rank_classification_test.cc (goldens made with t5 and
// sklearn) and, through seqio's Evaluator, by
// tests/interop/run_rank_classification_test.sh. Framework-free: no
// libtorch.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "t5xx/metrics/metrics.h"

namespace t5xx::seqio::metrics {

// What t5's rank_classification postprocessor makes of a target example:
// the tuple (tuple(example["idx"]), example["is_correct"],
// example.get("weight", 1.0), len(example["targets"])).
struct RankClassificationTarget {
  // (input index, choice index): the preprocessor's "idx".
  std::vector<int64_t> idx;
  bool is_correct = false;
  // The example's float32 "weight" (1.0 without one).
  double weight = 1.0;
  // The number of target tokens (after the task's trimming and EOS).
  int64_t target_length = 0;

  bool operator==(const RankClassificationTarget& o) const {
    return idx == o.idx && is_correct == o.is_correct && weight == o.weight &&
           target_length == o.target_length;
  }
  bool operator!=(const RankClassificationTarget& o) const { return !(*this == o); }
};

// t5 metrics.rank_classification(targets, scores, num_classes,
// normalize_by_target_length, idx_len). scores[i] is the log-likelihood of
// targets[i] (divided by its target_length when normalize_by_target_length).
// The rows are sorted by idx (stable); then
//  num_classes unset: the rows are grouped by idx[0] (consecutive runs); each
//    group's prediction is its first best score; {"accuracy": 100 *
//    sum(is_correct * weight of the prediction) / sum(those weights)}.
//  num_classes set: the rows are num_classes choices per input in order
//    (scores as float32, the first best wins; weights of each input's first
//    row). Several correct choices in a row: {"accuracy"} only, the weighted
//    share of inputs whose prediction is correct. Otherwise "accuracy"
//    (weighted exact match of the indicator rows) and, with 2 classes, "f1"
//    (binary, positive class 1), "auc-roc" and "auc-pr" (of choice 1's
//    softmax probability in float32); with more, "mean_<N>class_f1" (macro
//    F1 over the indicator columns). All ×100.
// Throws t5xx::Error (message starting "metrics.rank_classification: ") when
// the sizes differ or are 0, an idx does not have idx_len entries, two rows
// share an idx, the rows are not a multiple of num_classes, num_classes < 1,
// a target_length is 0 with normalize_by_target_length, or (2 classes) only
// one class occurs among the correct choices (sklearn: ROC AUC undefined).
Metrics rank_classification(const std::vector<RankClassificationTarget>& targets,
                            const std::vector<double>& scores,
                            std::optional<int64_t> num_classes = std::nullopt,
                            bool normalize_by_target_length = false, int64_t idx_len = 2);

}  // namespace t5xx::seqio::metrics
