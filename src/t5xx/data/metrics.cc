// t5 evaluation metrics; see metrics.h. Behaviour sources:
// t5/evaluation/metrics.py and t5/evaluation/qa_utils.py.
#include "t5xx/data/metrics.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "t5xx/util/error.h"

namespace t5xx::seqio::metrics {
namespace {

// Lengths must match and be non-zero.
void CheckSizes(const std::string& metric, size_t num_targets,
                size_t num_predictions) {
  T5XX_CHECK(num_targets == num_predictions,
        "metrics." + metric + ": got " + std::to_string(num_targets) +
            " targets but " + std::to_string(num_predictions) +
            " predictions; they must have the same length");
  T5XX_CHECK(num_targets > 0, "metrics." + metric +
                             ": empty input (0 targets and predictions); "
                             "at least one example is needed");
}

template <typename T>
double FractionEqual(const std::vector<T>& targets,
                     const std::vector<T>& predictions) {
  size_t same = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] == predictions[i]) ++same;
  }
  return static_cast<double>(same) / static_cast<double>(targets.size());
}

// 2TP / (2TP + FP + FN), 0 when the denominator is 0.
double F1FromCounts(int64_t tp, int64_t fp, int64_t fn) {
  const int64_t denom = 2 * tp + fp + fn;
  return denom == 0 ? 0.0 : 2.0 * static_cast<double>(tp) / static_cast<double>(denom);
}

bool IsWordChar(unsigned char c) {
  return std::isalnum(c) || c == '_' || c >= 0x80;
}

bool IsSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

std::vector<std::string> SplitWhitespace(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (unsigned char c : s) {
    if (IsSpace(c)) {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(c));
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// qa_utils._f1_score on already-normalised strings.
double TokenF1(const std::string& target, const std::string& prediction) {
  const std::vector<std::string> pred = SplitWhitespace(prediction);
  const std::vector<std::string> ref = SplitWhitespace(target);
  std::unordered_map<std::string, int64_t> ref_counts;
  for (const auto& t : ref) ++ref_counts[t];
  int64_t common = 0;
  for (const auto& t : pred) {
    auto it = ref_counts.find(t);
    if (it != ref_counts.end() && it->second > 0) {
      --it->second;
      ++common;
    }
  }
  if (common == 0) return 0.0;
  const double precision = static_cast<double>(common) / pred.size();
  const double recall = static_cast<double>(common) / ref.size();
  return 2.0 * precision * recall / (precision + recall);
}

}  // namespace

Metrics accuracy(const std::vector<std::string>& targets,
                 const std::vector<std::string>& predictions) {
  CheckSizes("accuracy", targets.size(), predictions.size());
  return {{"accuracy", 100.0 * FractionEqual(targets, predictions)}};
}

Metrics accuracy(const std::vector<int64_t>& targets,
                 const std::vector<int64_t>& predictions) {
  CheckSizes("accuracy", targets.size(), predictions.size());
  return {{"accuracy", 100.0 * FractionEqual(targets, predictions)}};
}

Metrics sequence_accuracy(const std::vector<std::string>& targets,
                          const std::vector<std::string>& predictions) {
  CheckSizes("sequence_accuracy", targets.size(), predictions.size());
  return {{"sequence_accuracy", 100.0 * FractionEqual(targets, predictions)}};
}

Metrics f1_score_with_invalid(const std::vector<int64_t>& targets,
                              const std::vector<int64_t>& predictions) {
  CheckSizes("f1_score_with_invalid", targets.size(), predictions.size());
  int64_t tp = 0, fp = 0, fn = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    const int64_t t = targets[i];
    T5XX_CHECK(t == 0 || t == 1,
          "metrics.f1_score_with_invalid: target " + std::to_string(i) +
              " is " + std::to_string(t) + "; binary targets must be 0 or 1");
    int64_t p = predictions[i];
    if (p != 0 && p != 1) p = 1 - t;  // invalid: always wrong (as t5 does)
    if (p == 1 && t == 1) ++tp;
    if (p == 1 && t == 0) ++fp;
    if (p == 0 && t == 1) ++fn;
  }
  return {{"f1", 100.0 * F1FromCounts(tp, fp, fn)}};
}

Metrics mean_multiclass_f1(int num_classes, const std::vector<int64_t>& targets,
                           const std::vector<int64_t>& predictions) {
  const std::string name = "mean_" + std::to_string(num_classes) + "class_f1";
  T5XX_CHECK(num_classes >= 1, "metrics.mean_multiclass_f1: num_classes is " +
                              std::to_string(num_classes) +
                              "; it must be at least 1");
  CheckSizes("mean_multiclass_f1", targets.size(), predictions.size());
  std::vector<int64_t> tp(num_classes, 0), fp(num_classes, 0), fn(num_classes, 0);
  auto in_range = [&](int64_t c) { return c >= 0 && c < num_classes; };
  for (size_t i = 0; i < targets.size(); ++i) {
    const int64_t t = targets[i], p = predictions[i];
    if (t == p) {
      if (in_range(t)) ++tp[t];
    } else {
      if (in_range(p)) ++fp[p];
      if (in_range(t)) ++fn[t];
    }
  }
  double sum = 0.0;
  for (int c = 0; c < num_classes; ++c) sum += F1FromCounts(tp[c], fp[c], fn[c]);
  return {{name, 100.0 * sum / num_classes}};
}

IntMetricFn mean_multiclass_f1(int num_classes) {
  T5XX_CHECK(num_classes >= 1, "metrics.mean_multiclass_f1: num_classes is " +
                              std::to_string(num_classes) +
                              "; it must be at least 1");
  return [num_classes](const std::vector<int64_t>& targets,
                       const std::vector<int64_t>& predictions) {
    return mean_multiclass_f1(num_classes, targets, predictions);
  };
}

std::string normalize_squad(const std::string& answer) {
  // 1. lowercase (ASCII) and 2. delete string.punctuation characters.
  std::string s;
  s.reserve(answer.size());
  for (unsigned char c : answer) {
    if (c < 0x80 && std::ispunct(c)) continue;
    s.push_back(static_cast<char>(c < 0x80 ? std::tolower(c) : c));
  }
  // 3. re.sub(r"\b(a|an|the)\b", " ", s): replace whole-word articles.
  std::string no_articles;
  no_articles.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const bool at_boundary =
        IsWordChar(static_cast<unsigned char>(s[i])) &&
        (i == 0 || !IsWordChar(static_cast<unsigned char>(s[i - 1])));
    if (at_boundary) {
      size_t j = i;
      while (j < s.size() && IsWordChar(static_cast<unsigned char>(s[j]))) ++j;
      const std::string word = s.substr(i, j - i);
      if (word == "a" || word == "an" || word == "the") {
        no_articles.push_back(' ');
      } else {
        no_articles += word;
      }
      i = j;
    } else {
      no_articles.push_back(s[i]);
      ++i;
    }
  }
  // 4. " ".join(s.split()).
  std::string out;
  for (const auto& tok : SplitWhitespace(no_articles)) {
    if (!out.empty()) out.push_back(' ');
    out += tok;
  }
  return out;
}

Metrics squad(const std::vector<std::vector<std::string>>& targets,
              const std::vector<std::string>& predictions) {
  CheckSizes("squad", targets.size(), predictions.size());
  double em_sum = 0.0, f1_sum = 0.0;
  for (size_t i = 0; i < targets.size(); ++i) {
    T5XX_CHECK(!targets[i].empty(), "metrics.squad: example " + std::to_string(i) +
                                   " has no reference answers; each needs "
                                   "at least one");
    const std::string pred = normalize_squad(predictions[i]);
    double best_em = 0.0, best_f1 = 0.0;
    for (const auto& ref_raw : targets[i]) {
      const std::string ref = normalize_squad(ref_raw);
      best_em = std::max(best_em, ref == pred ? 1.0 : 0.0);
      best_f1 = std::max(best_f1, TokenF1(ref, pred));
    }
    em_sum += best_em;
    f1_sum += best_f1;
  }
  const double n = static_cast<double>(targets.size());
  return {{"em", 100.0 * em_sum / n}, {"f1", 100.0 * f1_sum / n}};
}

}  // namespace t5xx::seqio::metrics
