// t5 evaluation metrics; see metrics.h. Behaviour sources:
// t5/evaluation/metrics.py and t5/evaluation/qa_utils.py.
#include "t5xx/metrics/metrics.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <unordered_map>

#include "t5xx/metrics/rouge_scorer.h"
#include "t5xx/metrics/sacrebleu.h"
#include "t5xx/metrics/unicode_properties.h"
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

// numpy's pairwise summation (add.reduce of a contiguous float64 array):
// blocks of up to 128 values summed with 8 interleaved partial sums.
double PairwiseSum(const double* a, size_t n) {
  if (n < 8) {
    double res = 0.0;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int k = 0; k < 8; ++k) r[k] = a[k];
    size_t i = 8;
    for (; i < n - n % 8; i += 8) {
      for (int k = 0; k < 8; ++k) r[k] += a[i + k];
    }
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return PairwiseSum(a, n2) + PairwiseSum(a + n2, n - n2);
}

// np.sum / np.add.reduce of float64 values (numpy 2.x; checked against it).
double NumpySum(const std::vector<double>& v) { return PairwiseSum(v.data(), v.size()); }

// qa_utils._normalize_answer: lower, punctuation, articles, whitespace.
// punc_chars is string.punctuation (plus ‘ ’ ´ ` _ for TriviaQA, whose
// replacement is a space; SQuAD's is nothing).
std::string NormalizeAnswer(const std::string& answer, bool trivia_qa) {
  const std::u32string lower = unicode::Lower(unicode::Decode(answer));
  std::u32string s;
  s.reserve(lower.size());
  for (char32_t c : lower) {
    const bool punct = (c < 0x80 && std::ispunct(static_cast<int>(c))) ||
                       (trivia_qa && (c == 0x2018 || c == 0x2019 || c == 0xB4));
    if (!punct) {
      s.push_back(c);
    } else if (trivia_qa) {
      s.push_back(U' ');
    }
  }
  // re.sub(r"\b(a|an|the)\b", " ", s): a whole \w run that is an article.
  std::u32string no_articles;
  no_articles.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (!unicode::IsWord(s[i])) {
      no_articles.push_back(s[i++]);
      continue;
    }
    size_t j = i;
    while (j < s.size() && unicode::IsWord(s[j])) ++j;
    const std::u32string_view word(s.data() + i, j - i);
    if (word == U"a" || word == U"an" || word == U"the") {
      no_articles.push_back(U' ');
    } else {
      no_articles.append(word);
    }
    i = j;
  }
  // " ".join(s.split()) (then TriviaQA's .strip(), which finds nothing).
  std::u32string out;
  for (const std::u32string& token : unicode::Split(no_articles)) {
    if (!out.empty()) out.push_back(U' ');
    out += token;
  }
  return unicode::Encode(out);
}

// qa_utils.qa_metrics on answers normalised with `normalize`.
Metrics QaMetrics(const std::string& metric, const std::vector<std::vector<std::string>>& targets,
                  const std::vector<std::string>& predictions,
                  std::string (*normalize)(const std::string&)) {
  CheckSizes(metric, targets.size(), predictions.size());
  std::vector<double> ems, f1s;
  for (size_t i = 0; i < targets.size(); ++i) {
    T5XX_CHECK(!targets[i].empty(), "metrics." + metric + ": example " + std::to_string(i) +
                                        " has no reference answers; each needs at least one");
    const std::string pred = normalize(predictions[i]);
    double best_em = 0.0, best_f1 = 0.0;
    for (const auto& ref_raw : targets[i]) {
      const std::string ref = normalize(ref_raw);
      best_em = std::max(best_em, ref == pred ? 1.0 : 0.0);
      best_f1 = std::max(best_f1, TokenF1(ref, pred));
    }
    ems.push_back(best_em);
    f1s.push_back(best_f1);
  }
  // np.mean(...) * 100
  const double n = static_cast<double>(targets.size());
  return {{"em", NumpySum(ems) / n * 100}, {"f1", NumpySum(f1s) / n * 100}};
}

bool IsConstant(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [&](double x) { return x == v[0]; });
}

// scipy.stats.pearsonr's statistic (scipy >= 1.9): NaN for a constant side.
double PearsonR(const std::vector<double>& x, const std::vector<double>& y) {
  if (IsConstant(x) || IsConstant(y)) return std::numeric_limits<double>::quiet_NaN();
  const double n = static_cast<double>(x.size());
  auto normalised = [n](const std::vector<double>& v) {
    const double mean = NumpySum(v) / n;
    std::vector<double> d(v.size());
    double dmax = 0.0;
    bool nan = std::isnan(mean);
    for (size_t i = 0; i < v.size(); ++i) {
      d[i] = v[i] - mean;
      nan = nan || std::isnan(d[i]);
      dmax = std::max(dmax, std::fabs(d[i]));
    }
    if (nan) return std::vector<double>(v.size(), std::numeric_limits<double>::quiet_NaN());
    std::vector<double> sq(d.size());
    for (size_t i = 0; i < d.size(); ++i) sq[i] = (d[i] / dmax) * (d[i] / dmax);
    const double norm = dmax * std::sqrt(NumpySum(sq));
    for (double& di : d) di /= norm;
    return d;
  };
  const std::vector<double> a = normalised(x), b = normalised(y);
  double r = 0.0;
  for (size_t i = 0; i < a.size(); ++i) r += a[i] * b[i];
  if (std::isnan(r)) return r;
  r = std::clamp(r, -1.0, 1.0);
  return x.size() == 2 ? std::round(r) : r;  // exactly ±1 for two points
}

// scipy.stats.rankdata(method="average"): 1-based ranks, ties averaged.
std::vector<double> AverageRanks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && v[order[j]] == v[order[i]]) ++j;
    const double rank = 0.5 * static_cast<double>(i + 1 + j);  // mean of i+1 .. j
    for (size_t k = i; k < j; ++k) ranks[order[k]] = rank;
    i = j;
  }
  return ranks;
}

// re.split("[^\\w]", s) after optional str.lower(): the pieces between
// single non-word characters, empty ones included.
std::vector<std::u32string> WordSplit(const std::string& text, bool lower) {
  std::u32string s = unicode::Decode(text);
  if (lower) s = unicode::Lower(s);
  std::vector<std::u32string> pieces(1);
  for (char32_t c : s) {
    if (unicode::IsWord(c)) {
      pieces.back().push_back(c);
    } else {
      pieces.emplace_back();
    }
  }
  return pieces;
}

// Levenshtein distance between token sequences (editdistance.distance).
int64_t TokenEditDistance(const std::vector<std::u32string>& a,
                          const std::vector<std::u32string>& b) {
  std::vector<int64_t> prev(b.size() + 1), cur(b.size() + 1);
  std::iota(prev.begin(), prev.end(), int64_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// sacrebleu.corpus_bleu as t5's metrics.bleu calls it.
Metrics CorpusBleu(const std::vector<std::vector<std::string>>& streams,
                   const std::vector<std::string>& predictions, const std::string& tokenizer) {
  sacrebleu::BleuOptions options;
  options.smooth_method = "exp";
  options.smooth_value = 0.0;
  options.lowercase = false;
  options.use_effective_order = false;
  try {
    options.tokenize = sacrebleu::TokenizerFromName(tokenizer);
    return {{"bleu", sacrebleu::CorpusBleu(predictions, streams, options).score}};
  } catch (const Error& e) {
    throw Error(std::string("metrics.bleu: ") + e.what());
  }
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
  return NormalizeAnswer(answer, /*trivia_qa=*/false);
}

std::string normalize_trivia_qa(const std::string& answer) {
  return NormalizeAnswer(answer, /*trivia_qa=*/true);
}

Metrics squad(const std::vector<std::vector<std::string>>& targets,
              const std::vector<std::string>& predictions) {
  return QaMetrics("squad", targets, predictions, normalize_squad);
}

Metrics trivia_qa(const std::vector<std::vector<std::string>>& targets,
                  const std::vector<std::string>& predictions) {
  return QaMetrics("trivia_qa", targets, predictions, normalize_trivia_qa);
}

Metrics bleu(const std::vector<std::string>& targets, const std::vector<std::string>& predictions,
             const std::string& tokenizer) {
  CheckSizes("bleu", targets.size(), predictions.size());
  return CorpusBleu({targets}, predictions, tokenizer);  // one reference stream
}

Metrics bleu(const std::vector<std::vector<std::string>>& targets,
             const std::vector<std::string>& predictions, const std::string& tokenizer) {
  CheckSizes("bleu", targets.size(), predictions.size());
  return CorpusBleu(targets, predictions, tokenizer);  // t5: the lists as streams
}

std::string prepare_summary_rouge(const std::string& summary) {
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = summary.find(" . ", pos)) != std::string::npos; pos = hit + 3) {
    out.append(summary, pos, hit - pos);
    out += " .\n";
  }
  out.append(summary, pos, std::string::npos);
  return out;
}

Metrics rouge_mean(const std::vector<std::string>& targets,
                   const std::vector<std::string>& predictions,
                   const std::vector<std::string>& score_keys, bool use_stemmer) {
  CheckSizes("rouge", targets.size(), predictions.size());
  std::unique_ptr<rouge_scorer::RougeScorer> scorer;
  try {
    scorer = std::make_unique<rouge_scorer::RougeScorer>(score_keys, use_stemmer);
  } catch (const Error& e) {
    throw Error(std::string("metrics.") + e.what());
  }
  std::map<std::string, double> sums;
  for (const std::string& key : score_keys) sums[key] = 0.0;
  for (size_t i = 0; i < targets.size(); ++i) {
    const auto scores =
        scorer->score(prepare_summary_rouge(targets[i]), prepare_summary_rouge(predictions[i]));
    for (const auto& [key, score] : scores) sums[key] += score.fmeasure;
  }
  Metrics out;
  const double count = static_cast<double>(targets.size());
  for (const std::string& key : score_keys) out[key] = sums[key] / count * 100;
  return out;
}

Metrics rouge(const std::vector<std::string>& targets, const std::vector<std::string>& predictions,
              const std::vector<std::string>& score_keys, bool use_stemmer) {
  return rouge_mean(targets, predictions, score_keys, use_stemmer);
}

Metrics pearson_corrcoef(const std::vector<double>& targets,
                         const std::vector<double>& predictions) {
  CheckSizes("pearson_corrcoef", targets.size(), predictions.size());
  T5XX_CHECK(targets.size() >= 2, "metrics.pearson_corrcoef: 1 example; the correlation needs "
                                  "at least 2 (scipy.stats.pearsonr raises ValueError)");
  return {{"pearson_corrcoef", 100 * PearsonR(targets, predictions)}};
}

Metrics spearman_corrcoef(const std::vector<double>& targets,
                          const std::vector<double>& predictions) {
  CheckSizes("spearman_corrcoef", targets.size(), predictions.size());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto has_nan = [](const std::vector<double>& v) {
    return std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); });
  };
  // scipy: one observation, a constant side, or a NaN (nan_policy
  // 'propagate') give NaN.
  if (targets.size() < 2 || IsConstant(targets) || IsConstant(predictions) ||
      has_nan(targets) || has_nan(predictions)) {
    return {{"spearman_corrcoef", nan}};
  }
  const std::vector<double> rx = AverageRanks(targets), ry = AverageRanks(predictions);
  // numpy.corrcoef: cov = centred dot products * (1 / (n - 1)), then
  // c[1][0] / sd[1] / sd[0], clipped.
  const double n = static_cast<double>(rx.size());
  const double mx = NumpySum(rx) / n;
  const double my = NumpySum(ry) / n;
  double sxx = 0.0, syy = 0.0, sxy = 0.0;
  for (size_t i = 0; i < rx.size(); ++i) {
    const double dx = rx[i] - mx, dy = ry[i] - my;
    sxx += dx * dx;
    syy += dy * dy;
    sxy += dy * dx;
  }
  const double f = 1.0 / (n - 1);
  double r = sxy * f / std::sqrt(syy * f) / std::sqrt(sxx * f);
  r = std::clamp(r, -1.0, 1.0);
  return {{"spearman_corrcoef", 100 * r}};
}

Metrics edit_distance(const std::vector<std::string>& targets,
                      const std::vector<std::string>& predictions, bool lower) {
  CheckSizes("edit_distance", targets.size(), predictions.size());
  std::vector<int64_t> distances;
  distances.reserve(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    distances.push_back(
        TokenEditDistance(WordSplit(predictions[i], lower), WordSplit(targets[i], lower)));
  }
  std::vector<int64_t> sorted = distances;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const int64_t sum = std::accumulate(sorted.begin(), sorted.end(), int64_t{0});
  const double median = n % 2 == 1 ? static_cast<double>(sorted[n / 2])
                                   : (static_cast<double>(sorted[n / 2 - 1]) +
                                      static_cast<double>(sorted[n / 2])) / 2.0;
  return {{"min_edit", static_cast<double>(sorted.front())},
          {"max_edit", static_cast<double>(sorted.back())},
          {"mean_edit", static_cast<double>(sum) / static_cast<double>(n)},
          {"median_edit", median},
          {"sum_edit", static_cast<double>(sum)}};
}

}  // namespace t5xx::seqio::metrics
