// Scoring a Task's predictions with its postprocessor and metrics (see
// evaluation.h).
#include "t5xx/data/evaluation.h"

#include <cmath>
#include <optional>
#include <utility>

#include "t5xx/data/file_utils.h"
#include "t5xx/data/rouge_scorer.h"
#include "t5xx/data/sacrebleu_tokenizers.h"
#include "t5xx/data/task.h"
#include "t5xx/util/error.h"
#include "t5xx/util/file_kind.h"

namespace t5xx::seqio {
namespace {

[[noreturn]] void WrongKind(const std::string& metric, size_t index, const char* role,
                            const PostprocessedValue& v, const std::string& want) {
  throw Error("metrics." + metric + ": " + role + " " + std::to_string(index) + " is a " +
              DescribeValue(v) + " but the metric needs " + want);
}

std::vector<std::string> Strings(const std::string& metric, const char* role,
                                 const std::vector<PostprocessedValue>& xs) {
  std::vector<std::string> out;
  out.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const auto* s = std::get_if<std::string>(&xs[i]);
    if (!s) WrongKind(metric, i, role, xs[i], "strings (no postprocess_fn, or lower_text)");
    out.push_back(*s);
  }
  return out;
}

std::vector<int64_t> Ints(const std::string& metric, const char* role,
                          const std::vector<PostprocessedValue>& xs) {
  std::vector<int64_t> out;
  out.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    if (const auto* n = std::get_if<int64_t>(&xs[i])) {
      out.push_back(*n);
    } else if (const auto* d = std::get_if<double>(&xs[i]);
               d && std::isfinite(*d) && std::floor(*d) == *d) {
      out.push_back(static_cast<int64_t>(*d));
    } else {
      WrongKind(metric, i, role, xs[i],
                "integer class ids (postprocess_fn=@t5.data.postprocessors."
                "string_label_to_class_id)");
    }
  }
  return out;
}

// Numbers as doubles; nullopt when the first value is not a number.
std::optional<std::vector<double>> Numbers(const std::string& metric, const char* role,
                                           const std::vector<PostprocessedValue>& xs) {
  if (xs.empty() || std::holds_alternative<std::string>(xs[0])) return std::nullopt;
  if (std::holds_alternative<std::vector<std::string>>(xs[0])) {
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

// Targets that are lists of reference strings (postprocessors.qa).
std::vector<std::vector<std::string>> AnswerLists(const std::string& metric,
                                                  const std::vector<PostprocessedValue>& xs) {
  std::vector<std::vector<std::string>> out;
  out.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    if (const auto* l = std::get_if<std::vector<std::string>>(&xs[i])) {
      out.push_back(*l);
    } else {
      WrongKind(metric, i, "target", xs[i],
                "lists of reference answers (postprocess_fn=@t5.data.postprocessors.qa)");
    }
  }
  return out;
}

// Numbers (integers or floats) as doubles.
std::vector<double> Floats(const std::string& metric, const char* role,
                           const std::vector<PostprocessedValue>& xs) {
  std::vector<double> out;
  out.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    if (const auto* n = std::get_if<int64_t>(&xs[i])) {
      out.push_back(static_cast<double>(*n));
    } else if (const auto* d = std::get_if<double>(&xs[i])) {
      out.push_back(*d);
    } else {
      WrongKind(metric, i, role, xs[i],
                "numbers (postprocess_fn=@t5.data.postprocessors.string_to_float)");
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
  return [](const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    auto ts = Strings("sequence_accuracy", "target", t);
    return metrics::sequence_accuracy(ts, Strings("sequence_accuracy", "prediction", p));
  };
}

MetricFn f1_score_with_invalid() {
  return [](const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    auto ti = Ints("f1_score_with_invalid", "target", t);
    return metrics::f1_score_with_invalid(ti, Ints("f1_score_with_invalid", "prediction", p));
  };
}

MetricFn mean_multiclass_f1(int num_classes) {
  metrics::IntMetricFn fn = metrics::mean_multiclass_f1(num_classes);  // checks num_classes
  return [fn](const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    auto ti = Ints("mean_multiclass_f1", "target", t);
    return fn(ti, Ints("mean_multiclass_f1", "prediction", p));
  };
}

MetricFn squad() {
  return [](const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    return metrics::squad(AnswerLists("squad", t), Strings("squad", "prediction", p));
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
  return [score_keys, use_stemmer](const std::vector<PostprocessedValue>& t,
                                   const std::vector<PostprocessedValue>& p) {
    auto ts = Strings("rouge", "target", t);
    return metrics::rouge(ts, Strings("rouge", "prediction", p), score_keys, use_stemmer);
  };
}

MetricFn rouge_mean(const std::vector<std::string>& score_keys, bool use_stemmer) {
  CheckRougeKeys(score_keys);
  return [score_keys, use_stemmer](const std::vector<PostprocessedValue>& t,
                                   const std::vector<PostprocessedValue>& p) {
    auto ts = Strings("rouge", "target", t);
    return metrics::rouge_mean(ts, Strings("rouge", "prediction", p), score_keys, use_stemmer);
  };
}

MetricFn pearson_corrcoef() {
  return [](const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    auto td = Floats("pearson_corrcoef", "target", t);
    return metrics::pearson_corrcoef(td, Floats("pearson_corrcoef", "prediction", p));
  };
}

MetricFn spearman_corrcoef() {
  return [](const std::vector<PostprocessedValue>& t, const std::vector<PostprocessedValue>& p) {
    auto td = Floats("spearman_corrcoef", "target", t);
    return metrics::spearman_corrcoef(td, Floats("spearman_corrcoef", "prediction", p));
  };
}

MetricFn edit_distance(bool lower) {
  return [lower](const std::vector<PostprocessedValue>& t,
                 const std::vector<PostprocessedValue>& p) {
    auto ts = Strings("edit_distance", "target", t);
    return metrics::edit_distance(ts, Strings("edit_distance", "prediction", p), lower);
  };
}

}  // namespace metric_fns

std::string DecodedTarget(const Task& task, const Example& example) {
  if (auto it = example.find("targets_pretokenized"); it != example.end()) {
    if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  }
  auto it = example.find("targets");
  const auto* ids = it == example.end() ? nullptr : std::get_if<Tokens>(&it->second);
  auto f = task.output_features().find("targets");
  T5XX_CHECK(ids && f != task.output_features().end() && f->second.vocabulary,
        "task '" + task.name() + "': an example to evaluate has neither 'targets_pretokenized' "
        "text nor 'targets' tokens with a vocabulary in the task's output_features");
  return f->second.vocabulary->Decode(*ids);
}

metrics::Metrics EvaluatePredictions(const Task& task, const std::vector<Example>& examples,
                                     const std::vector<std::string>& predictions) {
  const std::string where = "evaluating task '" + task.name() + "': ";
  T5XX_CHECK(!task.metric_fns().empty(),
        where + "the task has no metric_fns; bind seqio.Task.metric_fns, e.g. "
                "[@t5.evaluation.metrics.accuracy]");
  T5XX_CHECK(examples.size() == predictions.size(),
        where + std::to_string(examples.size()) + " examples but " +
            std::to_string(predictions.size()) + " predictions; give one prediction per example");
  T5XX_CHECK(!examples.empty(), where + "no examples to score");
  const PostprocessFn& post = task.postprocess_fn();
  std::vector<PostprocessedValue> targets, preds;
  targets.reserve(examples.size());
  preds.reserve(examples.size());
  for (size_t i = 0; i < examples.size(); ++i) {
    const std::string target = DecodedTarget(task, examples[i]);
    if (post) {
      targets.push_back(post(target, examples[i], /*is_target=*/true));
      preds.push_back(post(predictions[i], examples[i], /*is_target=*/false));
    } else {
      targets.emplace_back(target);
      preds.emplace_back(predictions[i]);
    }
  }
  metrics::Metrics out;
  for (const MetricFn& fn : task.metric_fns()) {
    metrics::Metrics m;
    try {
      m = fn(targets, preds);
    } catch (const Error& e) {
      throw Error(where + e.what());
    }
    for (auto& [k, v] : m) {
      T5XX_CHECK(!out.count(k), where + "two metric_fns both return '" + k +
                               "'; a metric may appear in only one of them");
      out[k] = v;
    }
  }
  return out;
}

std::vector<std::string> ReadPredictionsFile(const std::string& path) {
  const std::string why = NotARegularFile(path);
  T5XX_CHECK(why.empty(), "predictions file '" + path + "' " + why);
  LineReader reader(path);
  std::vector<std::string> predictions;
  for (std::string line; reader.Next(&line);) predictions.push_back(std::move(line));
  return predictions;
}

}  // namespace t5xx::seqio
