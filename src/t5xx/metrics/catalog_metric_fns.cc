// The metric_fns of t5's GLUE/SuperGLUE/SQuAD catalog over postprocessed
// values: class ids, and the dicts of t5's multirc, record and span_qa
// postprocessors (see metric_fns.h).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "t5xx/metrics/metric_fns.h"
#include "t5xx/metrics/metric_readers.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio::metric_fns {
namespace {

using metric_readers::WrongKind;

// The dict a metric needs at xs[index], or an error naming the
// postprocess_fn that makes one.
const ValueDict& DictAt(const std::string& metric, const char* role, size_t index,
                        const PostprocessedValue& v, const std::string& want) {
  const auto* d = std::get_if<ValueDict>(&v);
  if (!d) WrongKind(metric, index, role, v, want);
  return *d;
}

// dict[key] of a dict read by DictAt; Python's KeyError as an error.
const DictEntry& EntryAt(const std::string& metric, const char* role, size_t index,
                         const ValueDict& d, const std::string& key, const std::string& want) {
  auto it = d.items.find(key);
  if (it == d.items.end()) WrongKind(metric, index, role, PostprocessedValue(d), want);
  return it->second;
}

// "dicts with 'group' and 'value' (postprocess_fn=...)".
std::string GroupedWant(const std::string& key, const std::string& key2 = "") {
  return "dicts with '" + key + "'" + (key2.empty() ? "" : " and '" + key2 + "'") +
         " (postprocess_fn=@t5.data.postprocessors.multirc or @t5.data.postprocessors.record)";
}

// The `value_key` entries of dicts.
std::vector<PostprocessedValue> Values(const std::string& metric, const char* role,
                                       const std::vector<PostprocessedValue>& xs,
                                       const std::string& value_key) {
  std::vector<PostprocessedValue> out;
  out.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const ValueDict& d = DictAt(metric, role, i, xs[i], GroupedWant(value_key));
    out.push_back(ToValue(EntryAt(metric, role, i, d, value_key, GroupedWant(value_key))));
  }
  return out;
}

// A group as a key that is equal where Python's dict keys are: a float with
// an integral value is the int (1.0 == 1, same hash). A list is unhashable.
DictEntry GroupKey(const std::string& metric, size_t index, const DictEntry& g) {
  if (const auto* d = std::get_if<double>(&g); d && std::isfinite(*d) && std::floor(*d) == *d &&
                                                std::fabs(*d) < 9.2e18) {
    return static_cast<int64_t>(*d);
  }
  if (std::holds_alternative<std::vector<std::string>>(g)) {
    WrongKind(metric, index, "target's group", ToValue(g),
              "a hashable group (an int, string or tuple of ints; Python raises TypeError: "
              "unhashable type: 'list')");
  }
  return g;
}

// Python str() of a group, for return_subgroup_scores' keys.
std::string GroupStr(const DictEntry& g) {
  if (const auto* s = std::get_if<std::string>(&g)) return *s;
  if (const auto* i = std::get_if<int64_t>(&g)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&g)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    for (int p = 1; p <= 17; ++p) {  // the shortest round-tripping form, as repr
      char b2[32];
      std::snprintf(b2, sizeof b2, "%.*g", p, *d);
      if (std::strtod(b2, nullptr) == *d) {
        std::snprintf(buf, sizeof buf, "%s", b2);
        break;
      }
    }
    return buf;
  }
  const auto& t = std::get<std::vector<int64_t>>(g);
  std::string out = "(";
  for (size_t i = 0; i < t.size(); ++i) out += (i ? ", " : "") + std::to_string(t[i]);
  return out + (t.size() == 1 ? ",)" : ")");
}

// Python == between two postprocessed values as numpy.array_equal compares
// the elements: numbers by value, otherwise the same kind and contents.
bool PyEqual(const PostprocessedValue& a, const PostprocessedValue& b) {
  auto number = [](const PostprocessedValue& v, double* out) {
    if (const auto* i = std::get_if<int64_t>(&v)) *out = static_cast<double>(*i);
    else if (const auto* d = std::get_if<double>(&v)) *out = *d;
    else return false;
    return true;
  };
  const auto* ia = std::get_if<int64_t>(&a);
  const auto* ib = std::get_if<int64_t>(&b);
  if (ia && ib) return *ia == *ib;
  double x = 0, y = 0;
  if (number(a, &x) || number(b, &y)) return number(a, &x) && number(b, &y) && x == y;
  return a == b;
}

// Class ids, or (as sklearn accepts them) string labels given ids in order
// of appearance; a mix of strings and numbers is sklearn's ValueError.
std::pair<std::vector<int64_t>, std::vector<int64_t>> Labels(
    const std::string& metric, const std::vector<PostprocessedValue>& t,
    const std::vector<PostprocessedValue>& p) {
  const bool strings = !t.empty() && std::holds_alternative<std::string>(t[0]);
  if (!strings) {
    auto ti = metric_readers::Ints(metric, "target", t);
    return {ti, metric_readers::Ints(metric, "prediction", p)};
  }
  std::map<std::string, int64_t> ids;
  auto read = [&](const std::vector<PostprocessedValue>& xs, const char* role) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < xs.size(); ++i) {
      const auto* s = std::get_if<std::string>(&xs[i]);
      if (!s) {
        WrongKind(metric, i, role, xs[i],
                  "labels of one kind, strings like target 0 (sklearn: mix of label input "
                  "types), or integer class ids (postprocess_fn=@t5.data.postprocessors."
                  "string_label_to_class_id)");
      }
      out.push_back(ids.emplace(*s, static_cast<int64_t>(ids.size())).first->second);
    }
    return out;
  };
  auto ti = read(t, "target");
  return {ti, read(p, "prediction")};
}

}  // namespace

MetricFn sklearn_metrics_wrapper(const std::string& metric_str, const std::string& metric_dict_str,
                                 std::function<double(double)> metric_post_process_fn) {
  T5XX_CHECK(metric_str == "matthews_corrcoef",
             "metrics.sklearn_metrics_wrapper: metric_str '" + metric_str +
                 "' is not implemented; t5xx implements sklearn.metrics.matthews_corrcoef (the "
                 "one t5's catalog wraps, for CoLA)");
  const std::string key = metric_dict_str.empty() ? metric_str : metric_dict_str;
  return [key, post = std::move(metric_post_process_fn)](
             const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    auto [ti, pi] = Labels("matthews_corrcoef", t, p);
    const double v = metrics::matthews_corrcoef(ti, pi);
    return metrics::Metrics{{key, post ? post(v) : v}};
  };
}

MetricFn cola_matthews_corrcoef() {
  return sklearn_metrics_wrapper("matthews_corrcoef", "", [](double x) { return 100 * x; });
}

MetricFn multirc_f1_over_all_answers() {
  return [](const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    const std::string kName = "multirc_f1_over_all_answers";
    const auto tv = Values(kName, "target", t, "value");
    const auto pv = Values(kName, "prediction", p, "value");
    auto ti = metric_readers::Ints(kName, "target value", tv);
    return metrics::f1_score_with_invalid(ti, metric_readers::Ints(kName, "prediction value", pv));
  };
}

MetricFn all_match() {
  return [](const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    bool equal = t.size() == p.size();
    for (size_t i = 0; equal && i < t.size(); ++i) equal = PyEqual(t[i], p[i]);
    return metrics::Metrics{{"exact_match", equal ? 100.0 : 0.0}};
  };
}

MetricFn mean_group_metric(MetricFn metric_fn, const std::string& group_key,
                           const std::string& value_key, bool return_subgroup_scores) {
  T5XX_CHECK(metric_fn != nullptr, "metrics.mean_group_metric: no metric_fn given");
  return [metric_fn = std::move(metric_fn), group_key, value_key, return_subgroup_scores](
             const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    const std::string name = "mean_group_metric";
    // Groups in order of first appearance, as Python's defaultdict.
    std::map<DictEntry, size_t> index;
    std::vector<DictEntry> groups;
    std::vector<std::pair<std::vector<PostprocessedValue>, std::vector<PostprocessedValue>>> values;
    for (size_t i = 0; i < t.size() && i < p.size(); ++i) {  // Python zips

      const std::string want = GroupedWant(group_key, value_key);
      const ValueDict& td = DictAt(name, "target", i, t[i], want);
      const DictEntry g = GroupKey(name, i, EntryAt(name, "target", i, td, group_key, want));
      const DictEntry& tv = EntryAt(name, "target", i, td, value_key, want);
      const ValueDict& pd = DictAt(name, "prediction", i, p[i], GroupedWant(value_key));
      const DictEntry& pv = EntryAt(name, "prediction", i, pd, value_key, GroupedWant(value_key));
      auto [it, fresh] = index.emplace(g, groups.size());
      if (fresh) {
        groups.push_back(g);
        values.emplace_back();
      }
      values[it->second].first.push_back(ToValue(tv));
      values[it->second].second.push_back(ToValue(pv));
    }
    // Per metric key, the group scores in group order (keys in order of
    // first appearance), then numpy.mean.
    std::vector<std::string> keys;
    std::map<std::string, std::vector<double>> scores;
    auto add = [&](const std::string& key, double score) {
      auto [it, fresh] = scores.emplace(key, std::vector<double>{});
      if (fresh) keys.push_back(key);
      it->second.push_back(score);
    };
    for (size_t g = 0; g < groups.size(); ++g) {
      metrics::Metrics m;
      try {
        m = metric_fn(values[g].first, values[g].second);
      } catch (const Error& e) {
        throw Error("metrics.mean_group_metric: group " + GroupStr(groups[g]) + ": " + e.what());
      }
      for (const auto& [key, score] : m) {
        add(key, score);
        if (return_subgroup_scores) add(GroupStr(groups[g]) + "-" + key, score);
      }
    }
    metrics::Metrics out;
    for (const std::string& key : keys) {
      const std::vector<double>& s = scores[key];
      double sum = 0;
      for (double x : s) sum += x;
      out[key] = sum / static_cast<double>(s.size());
    }
    return out;
  };
}

MetricFn deduplicate_metric(MetricFn metric_fn, const std::string& group_key,
                            const std::string& value_key) {
  T5XX_CHECK(metric_fn != nullptr, "metrics.deduplicate_metric: no metric_fn given");
  return [metric_fn = std::move(metric_fn), group_key, value_key](
             const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    const std::string name = "deduplicate_metric";
    std::map<DictEntry, bool> seen;
    std::vector<PostprocessedValue> dt, dp;
    // Python zips: the shorter side ends the loop.
    for (size_t i = 0; i < t.size() && i < p.size(); ++i) {
      const std::string want = GroupedWant(group_key, value_key);
      const ValueDict& td = DictAt(name, "target", i, t[i], want);
      const DictEntry g = GroupKey(name, i, EntryAt(name, "target", i, td, group_key, want));
      if (!seen.emplace(g, true).second) continue;
      dt.push_back(ToValue(EntryAt(name, "target", i, td, value_key, want)));
      const ValueDict& pd = DictAt(name, "prediction", i, p[i], GroupedWant(value_key));
      dp.push_back(ToValue(EntryAt(name, "prediction", i, pd, value_key, GroupedWant(value_key))));
    }
    return metric_fn(dt, dp);
  };
}

MetricFn span_squad() {
  return [](const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    const std::string kName = "span_squad";
    const std::string want =
        "dicts with 'answers' and 'context' (postprocess_fn=@t5.data.postprocessors.span_qa)";
    std::vector<std::vector<std::string>> answers;
    std::vector<std::string> contexts;
    for (size_t i = 0; i < t.size(); ++i) {
      const ValueDict& d = DictAt(kName, "target", i, t[i], want);
      const auto* a = std::get_if<std::vector<std::string>>(&EntryAt(kName, "target", i, d,
                                                                     "answers", want));
      const auto* c = std::get_if<std::string>(&EntryAt(kName, "target", i, d, "context", want));
      if (!a || !c) WrongKind(kName, i, "target", t[i], want + " (a list and a string)");
      answers.push_back(*a);
      contexts.push_back(*c);
    }
    return metrics::span_squad(answers, contexts, metric_readers::Strings(kName, "prediction", p));
  };
}

std::vector<MetricFn> glue_metric(const std::string& name) {
  if (name == "cola") return {cola_matthews_corrcoef()};
  if (name == "mrpc" || name == "qqp") return {f1_score_with_invalid(), accuracy()};
  if (name == "stsb") return {pearson_corrcoef(), spearman_corrcoef()};
  for (const char* n : {"sst2", "mnli", "mnli_matched", "mnli_mismatched", "qnli", "rte", "wnli"}) {
    if (name == n) return {accuracy()};
  }
  if (name == "ax") return {};
  throw Error("metrics.glue_metric: no GLUE task '" + name +
              "' in t5's GLUE_METRICS (cola, sst2, mrpc, stsb, qqp, mnli, mnli_matched, "
              "mnli_mismatched, qnli, rte, wnli, ax)");
}

std::vector<MetricFn> super_glue_metric(const std::string& name) {
  for (const char* n : {"boolq", "copa", "rte", "wic"}) {
    if (name == n) return {accuracy()};
  }
  if (name == "cb") return {mean_multiclass_f1(3), accuracy()};
  if (name == "multirc") return {multirc_f1_over_all_answers(), mean_group_metric(all_match())};
  if (name == "record") return {deduplicate_metric(squad())};
  if (name == "axb" || name == "axg") return {};
  throw Error("metrics.super_glue_metric: no SuperGLUE task '" + name +
              "' in t5's SUPERGLUE_METRICS (boolq, cb, copa, multirc, record, rte, wic, axb, "
              "axg; t5 scores WSC with the wsc_simple tasks)");
}

ScoreMetricFn rank_classification(std::optional<int64_t> num_classes,
                                  bool normalize_by_target_length) {
  T5XX_CHECK(!num_classes || *num_classes >= 1,
             "metrics.rank_classification: num_classes is " + std::to_string(*num_classes) +
                 "; it must be at least 1 (or None for a varying number of choices)");
  return [num_classes, normalize_by_target_length](const std::vector<PostprocessedValue>& targets,
                                                   const std::vector<double>& scores) {
    std::vector<metrics::RankClassificationTarget> rows;
    rows.reserve(targets.size());
    for (size_t i = 0; i < targets.size(); ++i) {
      const auto* t = std::get_if<metrics::RankClassificationTarget>(&targets[i]);
      if (!t) {
        WrongKind("rank_classification", i, "target", targets[i],
                  "the tuples of postprocess_fn=@t5.data.postprocessors.rank_classification");
      }
      rows.push_back(*t);
    }
    return metrics::rank_classification(rows, scores, num_classes, normalize_by_target_length);
  };
}

}  // namespace t5xx::seqio::metric_fns
