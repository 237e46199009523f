// Postprocessors and metrics of gin-defined tasks (seqio.Task.postprocess_fn
// and metric_fns): their configurables, t5's t5.data.postprocessors.* and
// t5.evaluation.metrics.* (data/dataset_providers/postprocessors.h, data/evaluation/evaluation.h), and
// how each is built.
#include <climits>
#include <functional>
#include <string>

#include "t5xx/config/reading.h"
#include "t5xx/config/spec_builders.h"
#include "t5xx/seqio_gin/builders.h"

namespace t5xx::seqio_gin {
namespace {

using gin::Value;

constexpr char kStringToFloat[] = "t5.data.postprocessors.string_to_float";
constexpr char kLowerText[] = "t5.data.postprocessors.lower_text";
constexpr char kLabelToId[] = "t5.data.postprocessors.string_label_to_class_id";
constexpr char kQa[] = "t5.data.postprocessors.qa";
constexpr char kSpanQa[] = "t5.data.postprocessors.span_qa";
constexpr char kMultirc[] = "t5.data.postprocessors.multirc";
constexpr char kRecord[] = "t5.data.postprocessors.record";
constexpr char kWscSimple[] = "t5.data.postprocessors.wsc_simple";
constexpr char kRankPost[] = "t5.data.postprocessors.rank_classification";
constexpr char kRankMetric[] = "t5.evaluation.metrics.rank_classification";
constexpr char kMetrics[] = "t5.evaluation.metrics.";
constexpr char kAccuracy[] = "t5.evaluation.metrics.accuracy";
constexpr char kSequenceAccuracy[] = "t5.evaluation.metrics.sequence_accuracy";
constexpr char kF1Invalid[] = "t5.evaluation.metrics.f1_score_with_invalid";
constexpr char kMeanF1[] = "t5.evaluation.metrics.mean_multiclass_f1";
constexpr char kSquad[] = "t5.evaluation.metrics.squad";
constexpr char kTriviaQa[] = "t5.evaluation.metrics.trivia_qa";
constexpr char kBleu[] = "t5.evaluation.metrics.bleu";
constexpr char kRouge[] = "t5.evaluation.metrics.rouge";
constexpr char kRougeMean[] = "t5.evaluation.metrics.rouge_mean";
constexpr char kPearson[] = "t5.evaluation.metrics.pearson_corrcoef";
constexpr char kSpearman[] = "t5.evaluation.metrics.spearman_corrcoef";
constexpr char kEditDistance[] = "t5.evaluation.metrics.edit_distance";
constexpr char kSklearn[] = "t5.evaluation.metrics.sklearn_metrics_wrapper";
constexpr char kMultircF1[] = "t5.evaluation.metrics.multirc_f1_over_all_answers";
constexpr char kAllMatch[] = "t5.evaluation.metrics.all_match";
constexpr char kMeanGroup[] = "t5.evaluation.metrics.mean_group_metric";
constexpr char kDeduplicate[] = "t5.evaluation.metrics.deduplicate_metric";
constexpr char kSpanSquad[] = "t5.evaluation.metrics.span_squad";
// glue_utils passes CoLA's sklearn_metrics_wrapper the Python lambda
// `lambda x: 100 * x`, which gin cannot write: t5xx names it.
constexpr char kTimes100[] = "t5xx.metrics.times_100";

}  // namespace

seqio::PostprocessFn BuildPostprocessor(BuildContext& ctx, const Value& v,
                                        const std::string& outer) {
  if (v.is_none()) return nullptr;
  const std::string& kind =
      gin::ExpectOneOf(v,
                       {kStringToFloat, kLowerText, kLabelToId, kQa, kSpanQa, kMultirc, kRecord,
                        kWscSimple, kRankPost},
                       "a postprocess_fn");
  const std::string s = gin::CallScope(outer, v);
  gin::Config& c = ctx.config;
  return At(v, [&]() -> seqio::PostprocessFn {
    if (kind == kStringToFloat) {
      return seqio::postprocessors::string_to_float(c.Query(kind, "default", s).AsFloat());
    }
    if (kind == kLowerText) return seqio::postprocessors::lower_text();
    if (kind == kQa) return seqio::postprocessors::qa();
    if (kind == kSpanQa) return seqio::postprocessors::span_qa();
    if (kind == kMultirc) return seqio::postprocessors::multirc();
    if (kind == kRecord) return seqio::postprocessors::record();
    if (kind == kWscSimple) return seqio::postprocessors::wsc_simple();
    if (kind == kRankPost) {
      const Value keys = c.Query(kind, "passthrough_feature_keys", s);
      gin::Refuse(!keys.is_none() && !keys.AsList().empty(), keys,
                  "t5xx's rank_classification targets are the 4-tuples t5's metric reads; "
                  "remove passthrough_feature_keys");
      return seqio::postprocessors::rank_classification();
    }
    return seqio::postprocessors::string_label_to_class_id(
        gin::StringList(c.Query(kind, "label_classes", s)), c.Query(kind, "default", s).AsInt());
  });
}

bool IsScoreMetric(const Value& v) {
  return v.kind() == Value::Kind::kReference && v.reference_name() == kRankMetric;
}

seqio::ScoreMetricFn BuildScoreMetric(BuildContext& ctx, const Value& v,
                                      const std::string& outer) {
  gin::ExpectOneOf(v, {kRankMetric}, "a score metric_fn");
  const std::string s = gin::CallScope(outer, v);
  gin::Config& c = ctx.config;
  const Value& n = c.Query(kRankMetric, "num_classes", s);
  const bool normalize = c.Query(kRankMetric, "normalize_by_target_length", s).AsBool();
  const Value& idx_len = c.Query(kRankMetric, "idx_len", s);
  gin::Refuse(idx_len.AsInt() != 2, idx_len,
              "the rank_classification postprocessor's idx is (input index, choice index); "
              "remove idx_len or bind 2");
  return At(n.location().ToString().empty() ? v : n, [&] {
    return seqio::metric_fns::rank_classification(
        n.is_none() ? std::nullopt : std::optional<int64_t>(n.AsInt()), normalize);
  });
}

seqio::MetricFn BuildMetric(BuildContext& ctx, const Value& v, const std::string& outer) {
  T5XX_CHECK(!IsScoreMetric(v), gin::WhereShort(v) + ": @" + std::string(kRankMetric) +
                                    " takes (targets, scores); use it directly in "
                                    "seqio.Task.metric_fns, not inside another metric");
  const std::string& kind = gin::ExpectOneOf(
      v,
      {kAccuracy, kSequenceAccuracy, kF1Invalid, kMeanF1, kSquad, kTriviaQa, kBleu, kRouge,
       kRougeMean, kPearson, kSpearman, kEditDistance, kSklearn, kMultircF1, kAllMatch,
       kMeanGroup, kDeduplicate, kSpanSquad},
      "a metric_fn");
  const std::string s = gin::CallScope(outer, v);
  gin::Config& c = ctx.config;
  // A bad bound argument is reported at its binding, a default's at `v`.
  auto at_argument = [&](const Value& arg, auto build) {
    return At(arg.location().ToString().empty() ? v : arg, build);
  };
  if (kind == kBleu) {
    const Value& tokenizer = c.Query(kind, "tokenizer", s);
    return at_argument(tokenizer, [&] { return seqio::metric_fns::bleu(tokenizer.AsString()); });
  }
  if (kind == kRouge || kind == kRougeMean) {
    const Value& keys = c.Query(kind, "score_keys", s);
    const bool stem = c.Query(kind, "use_stemmer", s).AsBool();
    if (kind == kRougeMean) {
      return at_argument(keys, [&] { return seqio::metric_fns::rouge_mean(gin::StringList(keys), stem); });
    }
    c.Query(kind, "verbose", s).AsBool();  // t5: logging only
    return at_argument(keys, [&] { return seqio::metric_fns::rouge(gin::StringList(keys), stem); });
  }
  if (kind == kMeanGroup || kind == kDeduplicate) {
    // The wrapped metric is built as any metric_fn, in this call's scope.
    seqio::MetricFn inner = BuildMetric(ctx, c.Query(kind, "metric_fn", s), s);
    const std::string group_key = c.Query(kind, "group_key", s).AsString();
    const std::string value_key = c.Query(kind, "value_key", s).AsString();
    if (kind == kDeduplicate) {
      return At(v, [&] { return seqio::metric_fns::deduplicate_metric(inner, group_key, value_key); });
    }
    const bool subgroups = c.Query(kind, "return_subgroup_scores", s).AsBool();
    return At(v, [&] {
      return seqio::metric_fns::mean_group_metric(inner, group_key, value_key, subgroups);
    });
  }
  if (kind == kSklearn) {
    const Value& metric_str = c.Query(kind, "metric_str", s);
    const Value& dict_str = c.Query(kind, "metric_dict_str", s);
    const Value& post = c.Query(kind, "metric_post_process_fn", s);
    std::function<double(double)> post_fn;
    if (!post.is_none()) {
      gin::ExpectOneOf(post, {kTimes100}, "a metric_post_process_fn");
      post_fn = [](double x) { return 100 * x; };
    }
    return at_argument(metric_str, [&] {
      return seqio::metric_fns::sklearn_metrics_wrapper(
          metric_str.AsString(), dict_str.is_none() ? "" : dict_str.AsString(), post_fn);
    });
  }
  return At(v, [&]() -> seqio::MetricFn {
    if (kind == kMultircF1) return seqio::metric_fns::multirc_f1_over_all_answers();
    if (kind == kAllMatch) return seqio::metric_fns::all_match();
    if (kind == kSpanSquad) return seqio::metric_fns::span_squad();
    if (kind == kAccuracy) return seqio::metric_fns::accuracy();
    if (kind == kSequenceAccuracy) return seqio::metric_fns::sequence_accuracy();
    if (kind == kF1Invalid) return seqio::metric_fns::f1_score_with_invalid();
    if (kind == kSquad) return seqio::metric_fns::squad();
    if (kind == kTriviaQa) return seqio::metric_fns::trivia_qa();
    if (kind == kPearson) return seqio::metric_fns::pearson_corrcoef();
    if (kind == kSpearman) return seqio::metric_fns::spearman_corrcoef();
    if (kind == kEditDistance) {
      return seqio::metric_fns::edit_distance(c.Query(kind, "lower", s).AsBool());
    }
    const int64_t n = gin::Int32(c.Query(kind, "num_classes", s), 1);
    return seqio::metric_fns::mean_multiclass_f1(static_cast<int>(n));
  });
}

void RegisterEvaluationConfigurables(gin::Registry& r) {
  using namespace gin::spec;
  r.Register({kStringToFloat,
              {Optional("default", T::kFloat, F(-1.0), "Returned when the text is no float.")},
              "Parses the decoded text as a float."});
  r.Register({kLowerText, {}, "Lowercases the decoded text."});
  r.Register({kLabelToId,
              {Required("label_classes", T::kList, "The class names, in id order."),
               Optional("default", T::kInt, I(-1), "Returned for an unknown label.")},
              "Maps the decoded label text to its class id."});
  r.Register({kQa, {}, "Targets become the example's 'answers'; predictions stay text."});
  r.Register({kSpanQa, {},
              "Targets become {'answers': the example's answers, 'context': its context}; "
              "predictions (spans 'start: i end: j') stay text."});
  r.Register({kMultirc, {},
              "{'value': the 'False'/'True' class id (-1 otherwise)}, with 'group': the "
              "example's idx/question for targets."});
  r.Register({kRecord, {},
              "Targets become {'value': the example's answers, 'group': (idx/passage, "
              "idx/query)}; predictions {'value': text}."});
  r.Register({kWscSimple, {},
              "Targets become the example's label; predictions 1 if they name the referent "
              "(targets_pretokenized) up to case and determiners, 0 if not, -1 if empty."});
  for (const char* m : {"accuracy", "sequence_accuracy", "f1_score_with_invalid", "squad",
                        "trivia_qa", "pearson_corrcoef", "spearman_corrcoef",
                        "multirc_f1_over_all_answers", "all_match", "span_squad"}) {
    r.Register({std::string(kMetrics) + m, {}, "A t5 evaluation metric."});
  }
  r.Register({kRankPost,
              {Optional("passthrough_feature_keys", T::kOptionalList, None(),
                        "None only: t5xx's targets are t5's 4-tuples.")},
              "Targets become (idx, is_correct, weight, len(targets)) for the "
              "rank_classification metric; predictions (scores) pass unchanged."});
  r.Register({kRankMetric,
              {Optional("num_classes", T::kOptionalInt, None(),
                        "Choices per input; None: varying (accuracy only)."),
               Optional("normalize_by_target_length", T::kBool, B(false),
                        "Divide each score by its number of target tokens."),
               Optional("idx_len", T::kInt, I(2), "2 only: (input index, choice index).")},
              "A score metric_fn: each input's best-scored choice is its prediction; accuracy, "
              "and f1/auc-roc/auc-pr (2 classes) or mean_<N>class_f1 (more)."});
  r.Register({kSklearn,
              {Required("metric_str", T::kString,
                        "The sklearn.metrics function; t5xx implements 'matthews_corrcoef'."),
               Optional("metric_dict_str", T::kOptionalString, None(),
                        "The output key; None: metric_str."),
               Optional("metric_post_process_fn", T::kOptionalReference, None(),
                        "Applied to the value: None or @t5xx.metrics.times_100.")},
              "A sklearn.metrics function as a t5 metric (CoLA: matthews_corrcoef ×100)."});
  r.Register({kTimes100, {}, "lambda x: 100 * x (glue_utils' CoLA metric_post_process_fn)."});
  r.Register({kMeanGroup,
              {Required("metric_fn", T::kReference, "The metric computed on each group."),
               Optional("group_key", T::kString, S("group"), "The group's key in target dicts."),
               Optional("value_key", T::kString, S("value"), "The value's key in the dicts."),
               Optional("return_subgroup_scores", T::kBool, B(false),
                        "Also '<group>-<key>' for each group.")},
              "The mean over groups (targets' 'group') of metric_fn on their 'value's."});
  r.Register({kDeduplicate,
              {Required("metric_fn", T::kReference, "The metric computed on unique examples."),
               Optional("group_key", T::kString, S("group"), "The group's key in target dicts."),
               Optional("value_key", T::kString, S("value"), "The value's key in the dicts.")},
              "metric_fn on the 'value's of the first example of each group."});
  r.Register({kMeanF1, {Required("num_classes", T::kInt)},
              "Macro-averaged F1 over num_classes labels."});
  r.Register({kBleu,
              {Optional("tokenizer", T::kString, S("intl"),
                        "sacrebleu tokenizer: 'intl' (t5's default), '13a' or 'none'.")},
              "sacrebleu corpus BLEU as t5 computes it."});
  const Value rouge_keys = Value::List({S("rouge1"), S("rouge2"), S("rougeLsum")});
  r.Register({kRouge,
              {Optional("score_keys", T::kList, rouge_keys, "rouge1..rouge9, rougeL, rougeLsum."),
               Optional("verbose", T::kBool, B(true), "t5 logs the bootstrap interval; unused."),
               Optional("use_stemmer", T::kBool, B(false),
                        "rouge-score's Porter stemmer (a RougeScorer keyword).")},
              "ROUGE F-measure ×100, the mean over examples (t5's bootstrap mid estimates it)."});
  r.Register({kRougeMean,
              {Optional("score_keys", T::kList, rouge_keys, "rouge1..rouge9, rougeL, rougeLsum."),
               Optional("use_stemmer", T::kBool, B(false),
                        "rouge-score's Porter stemmer (a RougeScorer keyword).")},
              "ROUGE F-measure ×100, the mean over examples."});
  r.Register({kEditDistance,
              {Optional("lower", T::kBool, B(true), "Lowercase both sides first.")},
              "Word-level edit distance: min/max/mean/median/sum."});
}

}  // namespace t5xx::seqio_gin
