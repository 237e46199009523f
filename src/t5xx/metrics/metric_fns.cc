// t5's metrics as seqio metric_fns over postprocessed values (see
// metric_fns.h).
#include "t5xx/metrics/metric_fns.h"
#include "t5xx/metrics/metric_readers.h"

#include <cmath>
#include <optional>
#include <utility>

#include "t5xx/metrics/rouge_scorer.h"
#include "t5xx/metrics/sacrebleu_tokenizers.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

PostprocessedValue ToValue(const DictEntry& e) {
  return std::visit([](const auto& x) { return PostprocessedValue(x); }, e);
}

std::string DescribeValue(const PostprocessedValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return "string '" + *s + "'";
  if (const auto* i = std::get_if<int64_t>(&v)) return "int " + std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return "float " + std::to_string(*d);
  if (const auto* l = std::get_if<std::vector<std::string>>(&v)) {
    return "list of " + std::to_string(l->size()) + " strings";
  }
  if (const auto* t = std::get_if<std::vector<int64_t>>(&v)) {
    return "tuple of " + std::to_string(t->size()) + " ints";
  }
  if (std::holds_alternative<metrics::RankClassificationTarget>(v)) {
    return std::string("rank_classification tuple (idx, is_correct, weight, targets length)");
  }
  const auto& d = std::get<ValueDict>(v);
  std::string keys;
  for (const auto& [k, e] : d.items) keys += (keys.empty() ? "'" : ", '") + k + "'";
  return d.items.empty() ? std::string("dict with no keys") : "dict with keys " + keys;
}

namespace metric_readers {

[[noreturn]] void WrongKind(const std::string& metric, size_t index, const char* role,
                            const PostprocessedValue& v, const std::string& want) {
  throw Error("metrics." + metric + ": " + role + " " + std::to_string(index) + " is a " +
              DescribeValue(v) + " but the metric needs " + want);
}

namespace {

// Every value of `xs` converted by `convert` (nullopt: the wrong kind, an
// error naming the metric, the value's role and index, and `want`).
template <typename T, typename Convert>
std::vector<T> Collect(const std::string& metric, const char* role,
                       const std::vector<PostprocessedValue>& xs, const std::string& want,
                       Convert convert) {
  std::vector<T> out;
  out.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    std::optional<T> x = convert(xs[i]);
    if (!x) WrongKind(metric, i, role, xs[i], want);
    out.push_back(std::move(*x));
  }
  return out;
}

template <typename T>
std::optional<T> IfHolds(const PostprocessedValue& v) {
  if (const auto* x = std::get_if<T>(&v)) return *x;
  return std::nullopt;
}

}  // namespace

std::vector<std::string> Strings(const std::string& metric, const char* role,
                                 const std::vector<PostprocessedValue>& xs) {
  return Collect<std::string>(metric, role, xs, "strings (no postprocess_fn, or lower_text)",
                              IfHolds<std::string>);
}

std::vector<int64_t> Ints(const std::string& metric, const char* role,
                          const std::vector<PostprocessedValue>& xs) {
  return Collect<int64_t>(
      metric, role, xs,
      "integer class ids (postprocess_fn=@t5.data.postprocessors.string_label_to_class_id)",
      [](const PostprocessedValue& v) -> std::optional<int64_t> {
        if (const auto* n = std::get_if<int64_t>(&v)) return *n;
        const auto* d = std::get_if<double>(&v);
        if (d && std::isfinite(*d) && std::floor(*d) == *d) return static_cast<int64_t>(*d);
        return std::nullopt;
      });
}

// Targets that are lists of reference strings (postprocessors.qa).
std::vector<std::vector<std::string>> AnswerLists(const std::string& metric,
                                                  const std::vector<PostprocessedValue>& xs) {
  return Collect<std::vector<std::string>>(
      metric, "target", xs, "lists of reference answers (postprocess_fn=@t5.data.postprocessors.qa)",
      IfHolds<std::vector<std::string>>);
}

// Numbers (integers or floats) as doubles.
std::vector<double> Floats(const std::string& metric, const char* role,
                           const std::vector<PostprocessedValue>& xs) {
  return Collect<double>(metric, role, xs,
                         "numbers (postprocess_fn=@t5.data.postprocessors.string_to_float)",
                         [](const PostprocessedValue& v) -> std::optional<double> {
                           if (const auto* n = std::get_if<int64_t>(&v)) return static_cast<double>(*n);
                           return IfHolds<double>(v);
                         });
}

}  // namespace metric_readers

namespace {

using namespace metric_readers;  // NOLINT

// Numbers as doubles; nullopt when the first value is not a number.
std::optional<std::vector<double>> Numbers(const std::string& metric, const char* role,
                                           const std::vector<PostprocessedValue>& xs) {
  if (xs.empty() || std::holds_alternative<std::string>(xs[0])) return std::nullopt;
  if (!std::holds_alternative<int64_t>(xs[0]) && !std::holds_alternative<double>(xs[0])) {
    WrongKind(metric, 0, role, xs[0], "strings or numbers");
  }
  std::vector<double> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (const auto* n = std::get_if<int64_t>(&xs[i])) {
      out.push_back(static_cast<double>(*n));
    } else if (const auto* d = std::get_if<double>(&xs[i])) {
      out.push_back(*d);
    } else {
      WrongKind(metric, i, role, xs[i], "numbers like the first value");
    }
  }
  return out;
}

void CheckRougeKeys(const std::vector<std::string>& score_keys) {
  try {
    rouge_scorer::RougeScorer check(score_keys);
  } catch (const Error& e) {
    throw Error(std::string("metrics.") + e.what());
  }
}

// A MetricFn reading the targets, then the predictions, with `read` (one of
// the readers above, which name the metric in their errors) and scoring
// them with fn(targets, predictions).
template <typename Read, typename Fn>
MetricFn Over(const char* metric, Read read, Fn fn) {
  return [metric, read, fn](const std::vector<PostprocessedValue>& t,
                            const std::vector<PostprocessedValue>& p) {
    auto targets = read(metric, "target", t);  // targets are checked first
    return fn(targets, read(metric, "prediction", p));
  };
}

}  // namespace

namespace metric_fns {

MetricFn accuracy() {
  return [](const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    auto tn = Numbers("accuracy", "target", t);
    if (!tn) {
      auto ts = Strings("accuracy", "target", t);  // targets are checked first
      return metrics::accuracy(ts, Strings("accuracy", "prediction", p));
    }
    auto pn = Numbers("accuracy", "prediction", p);
    if (!pn && !p.empty()) WrongKind("accuracy", 0, "prediction", p[0], "numbers like the targets");
    if (!pn || pn->size() != tn->size()) {  // let metrics::accuracy report the sizes
      return metrics::accuracy(std::vector<int64_t>(tn->size()), std::vector<int64_t>(p.size()));
    }
    // sklearn's accuracy_score: the fraction of equal values.
    std::vector<int64_t> equal(tn->size());
    for (size_t i = 0; i < tn->size(); ++i) equal[i] = (*tn)[i] == (*pn)[i] ? 1 : 0;
    return metrics::accuracy(std::vector<int64_t>(tn->size(), 1), equal);
  };
}

MetricFn sequence_accuracy() {
  return Over("sequence_accuracy", Strings, metrics::sequence_accuracy);
}

MetricFn f1_score_with_invalid() {
  return Over("f1_score_with_invalid", Ints, metrics::f1_score_with_invalid);
}

MetricFn mean_multiclass_f1(int num_classes) {
  metrics::IntMetricFn fn = metrics::mean_multiclass_f1(num_classes);  // checks num_classes
  return Over("mean_multiclass_f1", Ints, fn);
}

MetricFn squad() {
  return [](const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    // t5's squad iterates each target's answers: a target left a string (a
    // task without postprocess_fn=qa, t5's squad_v010) is the list of its
    // characters (code points), as Python iterates a str.
    std::vector<PostprocessedValue> targets = t;
    for (PostprocessedValue& v : targets) {
      if (const auto* s = std::get_if<std::string>(&v)) {
        std::vector<std::string> chars;
        for (size_t i = 0; i < s->size();) {
          size_t n = 1;
          while (i + n < s->size() && (static_cast<unsigned char>((*s)[i + n]) & 0xC0) == 0x80) ++n;
          chars.push_back(s->substr(i, n));
          i += n;
        }
        v = std::move(chars);
      }
    }
    return metrics::squad(AnswerLists("squad", targets), Strings("squad", "prediction", p));
  };
}

MetricFn trivia_qa() {
  return [](const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    return metrics::trivia_qa(AnswerLists("trivia_qa", t), Strings("trivia_qa", "prediction", p));
  };
}

MetricFn bleu(const std::string& tokenizer) {
  try {
    sacrebleu::TokenizerFromName(tokenizer);
  } catch (const Error& e) {
    throw Error(std::string("metrics.bleu: ") + e.what());
  }
  return [tokenizer](const std::vector<PostprocessedValue>& t,
                     const std::vector<PostprocessedValue>& p) {
    const auto preds = Strings("bleu", "prediction", p);
    if (!t.empty() && std::holds_alternative<std::vector<std::string>>(t[0])) {
      return metrics::bleu(AnswerLists("bleu", t), preds, tokenizer);
    }
    return metrics::bleu(Strings("bleu", "target", t), preds, tokenizer);
  };
}

MetricFn rouge(const std::vector<std::string>& score_keys, bool use_stemmer) {
  CheckRougeKeys(score_keys);
  return Over("rouge", Strings, [score_keys, use_stemmer](const auto& t, const auto& p) {
    return metrics::rouge(t, p, score_keys, use_stemmer);
  });
}

MetricFn rouge_mean(const std::vector<std::string>& score_keys, bool use_stemmer) {
  CheckRougeKeys(score_keys);
  return Over("rouge", Strings, [score_keys, use_stemmer](const auto& t, const auto& p) {
    return metrics::rouge_mean(t, p, score_keys, use_stemmer);
  });
}

MetricFn pearson_corrcoef() { return Over("pearson_corrcoef", Floats, metrics::pearson_corrcoef); }

MetricFn spearman_corrcoef() {
  return Over("spearman_corrcoef", Floats, metrics::spearman_corrcoef);
}

MetricFn edit_distance(bool lower) {
  return Over("edit_distance", Strings, [lower](const auto& t, const auto& p) {
    return metrics::edit_distance(t, p, lower);
  });
}

}  // namespace metric_fns

}  // namespace t5xx::seqio
