// Answers metrics_requests.h's JSON requests with t5xx's metrics.
#include "metrics_requests.h"

#include <cmath>
#include <string>
#include <vector>

#include "t5xx/metrics/metrics.h"
#include "t5xx/metrics/porter_stemmer.h"
#include "t5xx/metrics/rouge_scorer.h"
#include "t5xx/metrics/sacrebleu.h"
#include "t5xx/metrics/unicode_properties.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio::testing {
namespace {

using json = nlohmann::json;
using Strs = std::vector<std::string>;

json MetricsJson(const metrics::Metrics& m) {
  json out = json::object();
  for (const auto& [k, v] : m) out[k] = std::isnan(v) ? json(nullptr) : json(v);
  return out;
}

std::vector<double> Numbers(const json& j) {
  std::vector<double> out;
  for (const auto& x : j) out.push_back(x.is_null() ? NAN : x.get<double>());
  return out;
}

json UnicodeRanges() {
  json out;
  const std::pair<const char*, bool (*)(char32_t)> props[] = {
      {"space", unicode::IsSpace},   {"word", unicode::IsWord},     {"punctuation", unicode::IsPunctuation},
      {"symbol", unicode::IsSymbol}, {"number", unicode::IsNumber},
  };
  for (const auto& [name, pred] : props) {
    json ranges = json::array();
    int64_t start = -1;
    for (char32_t c = 0; c <= 0x110000; ++c) {
      const bool in = c < 0x110000 && !(c >= 0xD800 && c <= 0xDFFF) && pred(c);
      if (in && start < 0) start = c;
      if (!in && start >= 0 && !(c >= 0xD800 && c <= 0xDFFF)) {
        ranges.push_back({start, static_cast<int64_t>(c) - 1});
        start = -1;
      }
    }
    out[name] = ranges;
  }
  json lower = json::array();
  for (char32_t c = 0; c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    const std::u32string one(1, c);
    const std::u32string l = unicode::Lower(one);
    if (l != one) lower.push_back({static_cast<int64_t>(c), unicode::Encode(l)});
  }
  out["lower"] = lower;
  return out;
}

PorterStemmer::Mode StemMode(const std::string& mode) {
  if (mode == "MARTIN_EXTENSIONS") return PorterStemmer::Mode::kMartinExtensions;
  if (mode == "ORIGINAL_ALGORITHM") return PorterStemmer::Mode::kOriginalAlgorithm;
  T5XX_CHECK(mode == "NLTK_EXTENSIONS", "unknown Porter stemmer mode " + mode);
  return PorterStemmer::Mode::kNltkExtensions;
}

json Answer(const json& r) {
  const std::string fn = r.at("fn");
  if (fn == "bleu") {
    const std::string tok = r.value("tokenizer", "intl");
    const Strs preds = r.at("predictions").get<Strs>();
    if (!r.at("targets").empty() && r.at("targets")[0].is_array()) {
      return MetricsJson(metrics::bleu(r.at("targets").get<std::vector<Strs>>(), preds, tok));
    }
    return MetricsJson(metrics::bleu(r.at("targets").get<Strs>(), preds, tok));
  }
  if (fn == "corpus_bleu") {
    sacrebleu::BleuOptions o;
    o.tokenize = sacrebleu::TokenizerFromName(r.value("tokenize", "13a"));
    o.smooth_method = r.value("smooth_method", "exp");
    if (r.contains("smooth_value") && !r.at("smooth_value").is_null()) {
      o.smooth_value = r.at("smooth_value").get<double>();
    }
    o.lowercase = r.value("lowercase", false);
    o.use_effective_order = r.value("use_effective_order", false);
    const auto s = sacrebleu::CorpusBleu(r.at("hypotheses").get<Strs>(),
                                         r.at("references").get<std::vector<Strs>>(), o);
    return {{"score", s.score}, {"counts", s.counts}, {"totals", s.totals},
            {"precisions", s.precisions}, {"bp", s.bp}, {"sys_len", s.sys_len},
            {"ref_len", s.ref_len}};
  }
  if (fn == "tokenize") {
    const auto tok = sacrebleu::TokenizerFromName(r.at("tokenizer"));
    json out = json::array();
    for (const auto& line : r.at("lines")) out.push_back(sacrebleu::Tokenize(tok, line.get<std::string>()));
    return out;
  }
  if (fn == "rouge" || fn == "rouge_mean") {
    const auto t = r.at("targets").get<Strs>(), p = r.at("predictions").get<Strs>();
    const auto keys = r.value("score_keys", Strs{"rouge1", "rouge2", "rougeLsum"});
    const bool stem = r.value("use_stemmer", false);
    return MetricsJson(fn == "rouge" ? metrics::rouge(t, p, keys, stem)
                                     : metrics::rouge_mean(t, p, keys, stem));
  }
  if (fn == "rouge_score") {
    const rouge_scorer::RougeScorer scorer(r.at("rouge_types").get<Strs>(),
                                           r.value("use_stemmer", false));
    json out = json::object();
    for (const auto& [k, s] :
         scorer.score(r.at("target").get<std::string>(), r.at("prediction").get<std::string>())) {
      out[k] = {s.precision, s.recall, s.fmeasure};
    }
    return out;
  }
  if (fn == "rouge_tokenize") {
    json out = json::array();
    for (const auto& t : r.at("texts")) {
      out.push_back(rouge_scorer::Tokenize(t.get<std::string>(), r.value("use_stemmer", false)));
    }
    return out;
  }
  if (fn == "porter_stem") {
    const PorterStemmer stemmer(StemMode(r.value("mode", "NLTK_EXTENSIONS")));
    json out = json::array();
    for (const auto& w : r.at("words")) out.push_back(stemmer.stem(w.get<std::string>()));
    return out;
  }
  if (fn == "pearson_corrcoef") {
    return MetricsJson(metrics::pearson_corrcoef(Numbers(r.at("targets")), Numbers(r.at("predictions"))));
  }
  if (fn == "spearman_corrcoef") {
    return MetricsJson(metrics::spearman_corrcoef(Numbers(r.at("targets")), Numbers(r.at("predictions"))));
  }
  if (fn == "edit_distance") {
    return MetricsJson(metrics::edit_distance(r.at("targets").get<Strs>(),
                                              r.at("predictions").get<Strs>(), r.value("lower", true)));
  }
  if (fn == "squad" || fn == "trivia_qa") {
    const auto t = r.at("targets").get<std::vector<Strs>>();
    const auto p = r.at("predictions").get<Strs>();
    return MetricsJson(fn == "squad" ? metrics::squad(t, p) : metrics::trivia_qa(t, p));
  }
  if (fn == "normalize_squad" || fn == "normalize_trivia_qa" || fn == "python_lower") {
    json out = json::array();
    for (const auto& t : r.at("texts")) {
      const std::string s = t.get<std::string>();
      out.push_back(fn == "normalize_squad"       ? metrics::normalize_squad(s)
                    : fn == "normalize_trivia_qa" ? metrics::normalize_trivia_qa(s)
                                                  : unicode::Encode(unicode::Lower(unicode::Decode(s))));
    }
    return out;
  }
  if (fn == "unicode_ranges") return UnicodeRanges();
  throw Error("unknown request fn '" + fn + "'");
}

}  // namespace

json AnswerMetricsRequest(const json& request) {
  try {
    return Answer(request);
  } catch (const Error& e) {
    return {{"error", e.what()}};
  }
}

}  // namespace t5xx::seqio::testing
