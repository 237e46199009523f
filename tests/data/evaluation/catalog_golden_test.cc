// The metrics and postprocessors of t5's task catalog against t5 itself:
// replays tests/metrics/catalog_goldens.json, whose expected values t5's own
// functions gave (t5.data.glue_utils' GLUE_METRICS, SUPERGLUE_METRICS and
// get_glue_postprocess_fn, t5.evaluation.metrics, t5.data.postprocessors;
// made by tests/metrics/make_catalog_goldens.py, versions in its "about").
//
// Equality: numbers within 1e-6 (on t5's ×100 scale), an int where Python
// gave an int and a float where it gave a float, strings and keys exactly;
// where Python raised, t5xx must throw t5xx::Error. NaN is null, infinities
// the strings "inf" and "-inf".
#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "t5xx/data/dataset_providers/postprocessors.h"
#include "t5xx/metrics/metric_fns.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

using json = nlohmann::json;

const json& Goldens() {
  static const json j = [] {
    const std::string path =
        std::string(T5XX_SOURCE_DIR) + "/tests/metrics/catalog_goldens.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return json::parse(in);
  }();
  return j;
}

// A JSON list: of strings (or empty) -> strings, of ints -> a tuple.
template <typename T>
T ListOf(const json& j) {
  bool ints = !j.empty();
  for (const auto& x : j) ints = ints && x.is_number_integer();
  if (ints) return j.get<std::vector<int64_t>>();
  return j.get<std::vector<std::string>>();
}

DictEntry ToEntry(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number()) return j.get<double>();
  return ListOf<DictEntry>(j);
}

PostprocessedValue ToValue(const json& j) {
  if (j.is_object()) {
    ValueDict d;
    for (auto it = j.begin(); it != j.end(); ++it) d.items[it.key()] = ToEntry(it.value());
    return d;
  }
  return seqio::ToValue(ToEntry(j));
}

// A float as the goldens write it: NaN null, infinities "inf" / "-inf".
json Number(double x) {
  if (std::isnan(x)) return nullptr;
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

json ToJson(const PostprocessedValue& v) {
  if (const auto* d = std::get_if<ValueDict>(&v)) {
    json out = json::object();
    for (const auto& [k, e] : d->items) out[k] = ToJson(seqio::ToValue(e));
    return out;
  }
  if (const auto* x = std::get_if<double>(&v)) return Number(*x);
  return std::visit(
      [](const auto& x) -> json {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, ValueDict>) {
          return nullptr;  // handled above
        } else if constexpr (std::is_same_v<std::decay_t<decltype(x)>,
                                            metrics::RankClassificationTarget>) {
          return json::array({x.idx, x.is_correct, x.weight, x.target_length});
        } else {
          return json(x);
        }
      },
      v);
}

std::vector<PostprocessedValue> Values(const json& j) {
  std::vector<PostprocessedValue> out;
  for (const auto& x : j) out.push_back(ToValue(x));
  return out;
}

std::vector<MetricFn> Metric(const std::string& name) {
  if (name.rfind("glue:", 0) == 0) return metric_fns::glue_metric(name.substr(5));
  if (name.rfind("super_glue:", 0) == 0) return metric_fns::super_glue_metric(name.substr(11));
  static const std::map<std::string, MetricFn> fns = {
      {"matthews_corrcoef", metric_fns::sklearn_metrics_wrapper("matthews_corrcoef")},
      {"cola_matthews_corrcoef", metric_fns::cola_matthews_corrcoef()},
      {"multirc_f1_over_all_answers", metric_fns::multirc_f1_over_all_answers()},
      {"all_match", metric_fns::all_match()},
      {"mean_group_metric(all_match)", metric_fns::mean_group_metric(metric_fns::all_match())},
      {"mean_group_metric(all_match,subgroups)",
       metric_fns::mean_group_metric(metric_fns::all_match(), "group", "value", true)},
      {"mean_group_metric(accuracy)", metric_fns::mean_group_metric(metric_fns::accuracy())},
      {"deduplicate_metric(squad)", metric_fns::deduplicate_metric(metric_fns::squad())},
      {"span_squad", metric_fns::span_squad()},
      {"f1_score_with_invalid", metric_fns::f1_score_with_invalid()},
      {"accuracy", metric_fns::accuracy()},
  };
  return {fns.at(name)};
}

PostprocessFn Postprocessor(const std::string& name) {
  namespace pp = postprocessors;
  if (name == "multirc") return pp::multirc();
  if (name == "record") return pp::record();
  if (name == "span_qa") return pp::span_qa();
  if (name == "qa") return pp::qa();
  if (name == "wsc_simple") return pp::wsc_simple();
  if (name == "string_to_float") return pp::string_to_float();
  if (name == "lower_text") return pp::lower_text();
  // get_glue_postprocess_fn with the TFDS builder configs' label_classes.
  if (name == "glue:cola") return pp::glue_postprocess_fn("cola", {"unacceptable", "acceptable"});
  if (name == "glue:stsb") return pp::glue_postprocess_fn("stsb");
  if (name == "super_glue:cb") {
    return pp::glue_postprocess_fn("cb", {"entailment", "contradiction", "neutral"});
  }
  throw std::runtime_error("unknown postprocessor " + name);
}

Example ToExample(const json& spec) {
  Example ex;
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    const auto first = it.value().begin();
    const std::string kind = first.key();
    const json& x = first.value();
    if (kind == "text") ex[it.key()] = x.get<std::string>();
    if (kind == "int32") ex[it.key()] = Array::Int32(x.get<int32_t>());
    if (kind == "int64") ex[it.key()] = Array::Int64(x.get<int64_t>());
    if (kind == "strings") ex[it.key()] = Array::Strings(x.get<std::vector<std::string>>());
  }
  return ex;
}

// t5xx's answer to a request, as JSON; {"error": message} when it threw.
json Answer(const json& request) {
  try {
    if (request.at("fn") == "metric") {
      const auto t = Values(request.at("targets"));
      const auto p = Values(request.at("predictions"));
      json out = json::object();
      for (const MetricFn& fn : Metric(request.at("metric"))) {
        for (const auto& [k, v] : fn(t, p)) out[k] = Number(v);
      }
      return out;
    }
    return ToJson(Postprocessor(request.at("postprocessor"))(
        request.at("text"), ToExample(request.at("example")), request.at("is_target")));
  } catch (const Error& e) {
    return {{"error", e.what()}};
  }
}

void ExpectSame(const json& want, const json& got, const std::string& where, int* failures) {
  auto fail = [&](const std::string& why) {
    if (++*failures <= 30) ADD_FAILURE() << where << ": " << why;
  };
  if (want.is_object() && want.contains("error")) {
    if (!(got.is_object() && got.contains("error"))) fail("expected an error, got " + got.dump());
    return;
  }
  if (got.is_object() && got.contains("error") && !want.contains("error")) {
    return fail("t5xx threw: " + got.at("error").get<std::string>() + "; want " + want.dump());
  }
  if (want.is_number() || got.is_number()) {
    if (!want.is_number() || !got.is_number() ||
        want.is_number_integer() != got.is_number_integer()) {
      return fail(want.dump() + " vs " + got.dump() + " (int vs float)");
    }
    if (std::fabs(want.get<double>() - got.get<double>()) > 1e-6) {
      fail(want.dump() + " vs " + got.dump());
    }
    return;
  }
  if (want.is_array() || want.is_object()) {
    if (got.type() != want.type() || got.size() != want.size()) {
      return fail(want.dump() + " vs " + got.dump());
    }
    if (want.is_array()) {
      for (size_t i = 0; i < want.size(); ++i) {
        ExpectSame(want[i], got[i], where + "[" + std::to_string(i) + "]", failures);
      }
      return;
    }
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) return fail("missing key " + it.key() + " in " + got.dump());
      ExpectSame(it.value(), got.at(it.key()), where + "." + it.key(), failures);
    }
    return;
  }
  if (want != got) fail(want.dump() + " vs " + got.dump());
}

TEST(CatalogGoldens, EveryCaseMatchesT5) {
  const json& cases = Goldens().at("cases");
  ASSERT_GT(cases.size(), 150u);
  std::map<std::string, int> per_kind;
  int failures = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& request = cases[i].at("request");
    const std::string kind =
        request.at("fn") == "metric" ? request.at("metric") : request.at("postprocessor");
    ExpectSame(cases[i].at("expected"), Answer(request),
               "case " + std::to_string(i) + " (" + kind + ")", &failures);
    ++per_kind[kind];
  }
  EXPECT_EQ(failures, 0);
  for (const char* kind :
       {"glue:cola", "matthews_corrcoef", "super_glue:multirc", "super_glue:record",
        "mean_group_metric(all_match)", "deduplicate_metric(squad)", "span_squad", "all_match",
        "multirc", "record", "span_qa", "qa", "wsc_simple", "string_to_float", "glue:stsb"}) {
    EXPECT_GT(per_kind[kind], 0) << kind;
  }
}

}  // namespace
}  // namespace t5xx::seqio
