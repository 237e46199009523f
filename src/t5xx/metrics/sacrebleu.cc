// sacrebleu's corpus BLEU (see sacrebleu.h).
#include "t5xx/metrics/sacrebleu.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include "t5xx/metrics/unicode_properties.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio::sacrebleu {
namespace {

// An n-gram as the ids of its tokens (one char32_t per token).
using NGramCounts = std::unordered_map<std::u32string, int64_t>;

class TokenIds {
 public:
  std::u32string Ids(const std::string& tokenized) {
    std::u32string ids;
    for (const std::u32string& token : unicode::Split(unicode::Decode(tokenized))) {
      auto [it, fresh] = ids_.emplace(token, static_cast<char32_t>(ids_.size()));
      ids.push_back(it->second);
    }
    return ids;
  }

 private:
  std::unordered_map<std::u32string, char32_t> ids_;
};

// helpers.extract_all_word_ngrams: every n-gram of order 1..max_order.
NGramCounts CountNGrams(const std::u32string& ids, int max_order) {
  NGramCounts counts;
  for (int n = 1; n <= max_order; ++n) {
    for (size_t i = 0; i + n <= ids.size(); ++i) ++counts[ids.substr(i, n)];
  }
  return counts;
}

// BLEU._get_closest_ref_len: the closest length, the shorter on ties.
int64_t ClosestRefLen(int64_t hyp_len, const std::vector<int64_t>& ref_lens) {
  int64_t closest_diff = -1, closest_len = -1;
  for (int64_t len : ref_lens) {
    const int64_t diff = std::llabs(hyp_len - len);
    if (closest_diff == -1 || diff < closest_diff) {
      closest_diff = diff;
      closest_len = len;
    } else if (diff == closest_diff && len < closest_len) {
      closest_len = len;
    }
  }
  return closest_len;
}

// BLEU._preprocess_segment: optional lowercase, then tokenize(line.rstrip()).
std::string Preprocess(const std::string& line, const BleuOptions& options) {
  std::u32string text = unicode::Decode(line);
  if (options.lowercase) text = unicode::Lower(text);
  return Tokenize(options.tokenize, unicode::Encode(unicode::Rstrip(text)));
}

// utils.my_log: log with log(0) floored to -9999999999.
double MyLog(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

}  // namespace

BleuScore ComputeBleu(std::vector<double> correct, std::vector<double> total, int64_t sys_len,
                      int64_t ref_len, const BleuOptions& options) {
  const std::string& method = options.smooth_method;
  T5XX_CHECK(method == "none" || method == "floor" || method == "add-k" || method == "exp",
             "sacrebleu BLEU: unknown smooth_method '" + method +
                 "'; use 'exp' (t5's), 'floor', 'add-k' or 'none'");
  const int order = options.max_ngram_order;
  T5XX_CHECK(order >= 1 && correct.size() == static_cast<size_t>(order) &&
                 total.size() == static_cast<size_t>(order),
             "sacrebleu BLEU: max_ngram_order must be >= 1 and match the statistics");
  double smooth_value = 0.0;
  if (options.smooth_value) {
    smooth_value = *options.smooth_value;
  } else if (method == "floor") {
    smooth_value = 0.1;
  } else if (method == "add-k") {
    smooth_value = 1.0;
  }
  BleuScore out;
  out.sys_len = sys_len;
  out.ref_len = ref_len;
  if (sys_len < ref_len) {
    out.bp = sys_len > 0 ? std::exp(1.0 - static_cast<double>(ref_len) /
                                              static_cast<double>(sys_len))
                         : 0.0;
  }
  out.precisions.assign(order, 0.0);
  const bool any_correct =
      std::any_of(correct.begin(), correct.end(), [](double c) { return c != 0.0; });
  if (!any_correct) {  // early stop (sacrebleu #141)
    out.counts = std::move(correct);
    out.totals = std::move(total);
    return out;
  }
  double smooth_mteval = 1.0;
  int eff_order = order;
  for (int n = 1; n <= order; ++n) {
    if (method == "add-k" && n > 1) {
      correct[n - 1] += smooth_value;
      total[n - 1] += smooth_value;
    }
    if (total[n - 1] == 0.0) break;
    if (options.use_effective_order) eff_order = n;
    if (correct[n - 1] == 0.0) {
      if (method == "exp") {
        smooth_mteval *= 2.0;
        out.precisions[n - 1] = 100.0 / (smooth_mteval * total[n - 1]);
      } else if (method == "floor") {
        out.precisions[n - 1] = 100.0 * smooth_value / total[n - 1];
      }
    } else {
      out.precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1];
    }
  }
  double log_sum = 0.0;
  for (int n = 0; n < eff_order; ++n) log_sum += MyLog(out.precisions[n]);
  out.score = out.bp * std::exp(log_sum / eff_order);
  out.counts = std::move(correct);
  out.totals = std::move(total);
  return out;
}

BleuScore CorpusBleu(const std::vector<std::string>& hypotheses,
                     const std::vector<std::vector<std::string>>& references,
                     const BleuOptions& options) {
  T5XX_CHECK(!hypotheses.empty(), "sacrebleu BLEU: no hypotheses to score");
  T5XX_CHECK(!references.empty() && !references[0].empty(),
             "sacrebleu BLEU: no references; give at least one reference stream with one "
             "reference per hypothesis");
  const int order = options.max_ngram_order;
  T5XX_CHECK(order >= 1, "sacrebleu BLEU: max_ngram_order must be at least 1");
  // zip(hypotheses, zip(*references)): the shortest sequence decides.
  size_t segments = hypotheses.size();
  for (const auto& stream : references) segments = std::min(segments, stream.size());
  T5XX_CHECK(segments > 0, "sacrebleu BLEU: a reference stream is empty, so no segment can "
                           "be scored");
  TokenIds vocab;
  std::vector<double> correct(order, 0.0), total(order, 0.0);
  int64_t sys_len = 0, ref_len = 0;
  for (size_t i = 0; i < segments; ++i) {
    NGramCounts ref_ngrams;
    std::vector<int64_t> ref_lens;
    for (const auto& stream : references) {
      const std::u32string ids = vocab.Ids(Preprocess(stream[i], options));
      ref_lens.push_back(static_cast<int64_t>(ids.size()));
      for (const auto& [ngram, count] : CountNGrams(ids, order)) {
        int64_t& best = ref_ngrams[ngram];
        best = std::max(best, count);
      }
    }
    const std::u32string hyp = vocab.Ids(Preprocess(hypotheses[i], options));
    const int64_t hyp_len = static_cast<int64_t>(hyp.size());
    sys_len += hyp_len;
    ref_len += ClosestRefLen(hyp_len, ref_lens);
    for (const auto& [ngram, count] : CountNGrams(hyp, order)) {
      total[ngram.size() - 1] += static_cast<double>(count);
      auto it = ref_ngrams.find(ngram);
      if (it != ref_ngrams.end()) {
        correct[ngram.size() - 1] += static_cast<double>(std::min(count, it->second));
      }
    }
  }
  return ComputeBleu(std::move(correct), std::move(total), sys_len, ref_len, options);
}

}  // namespace t5xx::seqio::sacrebleu
