// See rank_classification.h.
#include "t5xx/metrics/rank_classification.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>

#include "t5xx/util/error.h"

namespace t5xx::seqio::metrics {
namespace {

constexpr char kWho[] = "metrics.rank_classification: ";

// sklearn's zero_division=0: num / den, 0 when den is 0.
double Divide(double num, double den) { return den == 0.0 ? 0.0 : num / den; }

// The cumulative (false positive, true positive) weights at each distinct
// score, highest score first: sklearn's _binary_clf_curve.
struct Curve {
  std::vector<double> fps, tps;
};

Curve BinaryCurve(const std::vector<bool>& y, const std::vector<float>& score,
                  const std::vector<double>& weight) {
  std::vector<size_t> order(y.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return score[a] > score[b]; });
  Curve c;
  double fp = 0.0, tp = 0.0;
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t i = order[k];
    (y[i] ? tp : fp) += weight[i];
    if (k + 1 == order.size() || score[order[k + 1]] != score[i]) {
      c.fps.push_back(fp);
      c.tps.push_back(tp);
    }
  }
  return c;
}

// sklearn roc_auc_score for a binary y: the trapezoidal area under
// (fpr, tpr) from (0, 0) through every distinct threshold.
double RocAuc(const Curve& c) {
  const double fmax = c.fps.back(), tmax = c.tps.back();
  double area = 0.0, fprev = 0.0, tprev = 0.0;
  for (size_t k = 0; k < c.fps.size(); ++k) {
    const double f = c.fps[k] / fmax, t = c.tps[k] / tmax;
    area += (f - fprev) * (t + tprev) / 2.0;
    fprev = f;
    tprev = t;
  }
  return area;
}

// sklearn average_precision_score for a binary y: the sum over distinct
// thresholds (highest first) of (recall_k - recall_{k-1}) * precision_k.
double AveragePrecision(const Curve& c) {
  const double tmax = c.tps.back();
  double ap = 0.0, rprev = 0.0;
  for (size_t k = 0; k < c.tps.size(); ++k) {
    const double r = tmax == 0.0 ? 1.0 : c.tps[k] / tmax;
    ap += (r - rprev) * Divide(c.tps[k], c.tps[k] + c.fps[k]);
    rprev = r;
  }
  return ap;
}

// Index of the first largest value (numpy.argmax).
template <typename T>
size_t ArgMax(const T* x, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return best;
}

}  // namespace

Metrics rank_classification(const std::vector<RankClassificationTarget>& targets_in,
                            const std::vector<double>& scores_in,
                            std::optional<int64_t> num_classes, bool normalize_by_target_length,
                            int64_t idx_len) {
  T5XX_CHECK(targets_in.size() == scores_in.size(),
             std::string(kWho) + std::to_string(targets_in.size()) + " targets but " +
                 std::to_string(scores_in.size()) + " scores");
  T5XX_CHECK(!targets_in.empty(), std::string(kWho) + "no targets to score");
  T5XX_CHECK(!num_classes || *num_classes >= 1,
             std::string(kWho) + "num_classes is " + std::to_string(num_classes.value_or(0)) +
                 "; it must be at least 1 (or None for a varying number of choices)");
  std::vector<double> scores = scores_in;
  if (normalize_by_target_length) {
    for (size_t i = 0; i < scores.size(); ++i) {
      T5XX_CHECK(targets_in[i].target_length != 0,
                 std::string(kWho) + "target " + std::to_string(i) +
                     " has no tokens, so its score cannot be normalized by its length");
      scores[i] /= static_cast<double>(targets_in[i].target_length);
    }
  }
  for (size_t i = 0; i < targets_in.size(); ++i) {
    T5XX_CHECK(static_cast<int64_t>(targets_in[i].idx.size()) == idx_len,
               std::string(kWho) + "the 'idx' of target " + std::to_string(i) + " has " +
                   std::to_string(targets_in[i].idx.size()) + " entries; it should be " +
                   std::to_string(idx_len) + "-dimensional (input index, choice index)");
  }
  // Sorted by idx, as t5 sorts them (stable).
  std::vector<size_t> order(targets_in.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return targets_in[a].idx < targets_in[b].idx; });
  std::vector<RankClassificationTarget> targets;
  std::vector<double> sorted_scores;
  for (size_t i : order) {
    if (!targets.empty()) {
      T5XX_CHECK(targets.back().idx != targets_in[i].idx,
                 std::string(kWho) +
                     "two targets have the same 'idx', so they cannot be told apart (t5: "
                     "targets list with non-unique indices); each (input, choice) must have its "
                     "own idx, as the rank_classification preprocessor gives them");
    }
    targets.push_back(targets_in[i]);
    sorted_scores.push_back(scores[i]);
  }
  const size_t n = targets.size();

  if (!num_classes) {
    double correct = 0.0, total = 0.0;
    for (size_t begin = 0; begin < n;) {
      size_t end = begin;
      while (end < n && targets[end].idx[0] == targets[begin].idx[0]) ++end;
      const size_t best = begin + ArgMax(sorted_scores.data() + begin, end - begin);
      const double w = targets[best].weight;
      correct += (targets[best].is_correct ? 1.0 : 0.0) * w;
      total += w;
      begin = end;
    }
    return {{"accuracy", 100.0 * correct / total}};
  }

  const size_t k = static_cast<size_t>(*num_classes);
  T5XX_CHECK(n % k == 0, std::string(kWho) + std::to_string(n) + " targets are not a multiple of "
                             "num_classes " + std::to_string(k) +
                             "; every input must have num_classes choices");
  // t5 would rank rows of different inputs together: refused, naming one.
  for (size_t begin = 0; begin < n;) {
    size_t end = begin;
    while (end < n && targets[end].idx[0] == targets[begin].idx[0]) ++end;
    T5XX_CHECK(end - begin == k,
               std::string(kWho) + "input " + std::to_string(targets[begin].idx[0]) + " has " +
                   std::to_string(end - begin) + " choices but num_classes is " +
                   std::to_string(k) + "; set num_classes to the number of choices per input " +
                   "(or None when it varies)");
    begin = end;
  }
  const size_t rows = n / k;
  std::vector<double> weights(rows);
  std::vector<size_t> predictions(rows);
  std::vector<float> ll(n);
  bool multiple_answers = false;
  for (size_t i = 0; i < n; ++i) ll[i] = static_cast<float>(sorted_scores[i]);
  for (size_t r = 0; r < rows; ++r) {
    weights[r] = targets[r * k].weight;
    predictions[r] = ArgMax(ll.data() + r * k, k);
    size_t correct = 0;
    for (size_t c = 0; c < k; ++c) correct += targets[r * k + c].is_correct ? 1 : 0;
    multiple_answers = multiple_answers || correct > 1;
  }
  auto label = [&](size_t r, size_t c) { return targets[r * k + c].is_correct; };
  const double weight_sum = std::accumulate(weights.begin(), weights.end(), 0.0);

  if (multiple_answers) {
    double hit = 0.0;
    for (size_t r = 0; r < rows; ++r) hit += (label(r, predictions[r]) ? 1.0 : 0.0) * weights[r];
    return {{"accuracy", 100.0 * hit / weight_sum}};
  }

  // accuracy_score on indicator rows: a row counts when the labels are
  // exactly the one-hot prediction.
  double exact = 0.0;
  for (size_t r = 0; r < rows; ++r) {
    bool same = true;
    for (size_t c = 0; c < k; ++c) same = same && label(r, c) == (c == predictions[r]);
    exact += same ? weights[r] : 0.0;
  }
  Metrics out{{"accuracy", 100.0 * exact / weight_sum}};

  if (k > 2) {
    // fbeta_score(beta=1, average="macro", labels=range(k)) over indicator
    // columns: 2 tp / (true + predicted) per column, 0 when both are 0.
    double sum = 0.0;
    for (size_t c = 0; c < k; ++c) {
      double tp = 0.0, truth = 0.0, predicted = 0.0;
      for (size_t r = 0; r < rows; ++r) {
        const bool y = label(r, c), p = predictions[r] == c;
        tp += (y && p) ? weights[r] : 0.0;
        truth += y ? weights[r] : 0.0;
        predicted += p ? weights[r] : 0.0;
      }
      sum += Divide(2.0 * tp, truth + predicted);
    }
    out["mean_" + std::to_string(k) + "class_f1"] = 100.0 * sum / static_cast<double>(k);
    return out;
  }

  // Two classes (k == 1 gives the same formulas over one column).
  // f1_score(labels.argmax(-1), predictions): binary, positive class 1.
  double tp = 0.0, fp = 0.0, fn = 0.0;
  std::vector<bool> positive(rows);
  std::vector<float> probs(rows);
  for (size_t r = 0; r < rows; ++r) {
    const float* x = ll.data() + r * k;
    size_t truth = 0;
    for (size_t c = 0; c < k; ++c) {
      if (label(r, c)) {
        truth = c;
        break;
      }
    }
    const bool y = truth == 1, p = predictions[r] == 1;
    tp += (y && p) ? weights[r] : 0.0;
    fp += (!y && p) ? weights[r] : 0.0;
    fn += (y && !p) ? weights[r] : 0.0;
    // exp_normalize in float32, as numpy computes it on the float32 array.
    const float b = *std::max_element(x, x + k);
    float denom = 0.0f;
    for (size_t c = 0; c < k; ++c) denom += std::exp(x[c] - b);
    positive[r] = k > 1 && label(r, 1);
    probs[r] = std::exp(x[k > 1 ? 1 : 0] - b) / denom;
  }
  out["f1"] = 100.0 * Divide(2.0 * tp, 2.0 * tp + fp + fn);
  const size_t num_positive = static_cast<size_t>(std::count(positive.begin(), positive.end(), true));
  T5XX_CHECK(num_positive != 0 && num_positive != rows,
             std::string(kWho) + "choice 1 is correct for " +
                 (num_positive == 0 ? "none" : "all") + " of the " + std::to_string(rows) +
                 " inputs, and sklearn's roc_auc_score is not defined with only one class "
                 "present; evaluate examples of both classes");
  const Curve curve = BinaryCurve(positive, probs, weights);
  out["auc-roc"] = 100.0 * RocAuc(curve);
  out["auc-pr"] = 100.0 * AveragePrecision(curve);
  return out;
}

}  // namespace t5xx::seqio::metrics
