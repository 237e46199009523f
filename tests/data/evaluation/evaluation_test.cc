// Tests for Task.postprocess_fn / metric_fns: t5's postprocessors
// (postprocessors.h) and seqio's per-task scoring (evaluation.h).
//
// Expected values are hand-worked from t5/data/postprocessors.py and
// t5/evaluation/metrics.py semantics; each is derived in a comment.
#include "t5xx/data/evaluation/evaluation.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/sources/function_source.h"
#include "t5xx/data/vocabularies/byte_vocabulary.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using V = PostprocessedValue;

const Example kNoExample;

TEST(PostprocessorsTest, StringToFloat) {
  auto f = postprocessors::string_to_float();
  EXPECT_EQ(std::get<double>(f("3.5", kNoExample, false)), 3.5);
  EXPECT_EQ(std::get<double>(f("  -2e1\n", kNoExample, false)), -20.0);  // float("  -2e1\n")
  EXPECT_EQ(std::get<double>(f("two", kNoExample, false)), -1.0);        // ValueError -> default
  EXPECT_EQ(std::get<double>(f("", kNoExample, false)), -1.0);
  EXPECT_EQ(std::get<double>(f("1.5x", kNoExample, false)), -1.0);
  EXPECT_EQ(std::get<double>(f("0x10", kNoExample, false)), -1.0);  // Python refuses hex
  EXPECT_EQ(std::get<double>(postprocessors::string_to_float(7.0)("?", kNoExample, true)), 7.0);
}

TEST(PostprocessorsTest, LowerTextAndLabelToClassId) {
  EXPECT_EQ(std::get<std::string>(postprocessors::lower_text()("AbC d", kNoExample, false)),
            "abc d");
  auto f = postprocessors::string_label_to_class_id({"negative", "positive"});
  EXPECT_EQ(std::get<int64_t>(f("positive", kNoExample, false)), 1);
  EXPECT_EQ(std::get<int64_t>(f("negative", kNoExample, true)), 0);
  EXPECT_EQ(std::get<int64_t>(f("Positive", kNoExample, false)), -1);  // exact match only
  auto g = postprocessors::string_label_to_class_id({"a", "b", "c"}, 9);
  EXPECT_EQ(std::get<int64_t>(g("d", kNoExample, false)), 9);
  EXPECT_ERROR_CONTAINS(postprocessors::string_label_to_class_id({}), "label_classes is empty");
}

TEST(PostprocessorsTest, QaTargetsAreTheAnswers) {
  auto f = postprocessors::qa();
  Example ex{{"answers", std::string("Denver Broncos")}};
  EXPECT_EQ(std::get<std::vector<std::string>>(f("whatever", ex, true)),
            std::vector<std::string>{"Denver Broncos"});
  EXPECT_EQ(std::get<std::string>(f("the Broncos", ex, false)), "the Broncos");
  // TFDS's Sequence(Text) answers (SQuAD, TriviaQA, ReCoRD): every answer.
  Example squad{{"answers", Array::Strings({"Denver Broncos", "Broncos"})}};
  EXPECT_EQ(std::get<std::vector<std::string>>(f("whatever", squad, true)),
            (std::vector<std::string>{"Denver Broncos", "Broncos"}));
  EXPECT_ERROR_CONTAINS(f("x", kNoExample, true),
                        "t5.data.postprocessors.qa: the example has no feature 'answers'");
  EXPECT_ERROR_CONTAINS(f("x", Example{{"answers", Array::Int64(3)}}, true),
                        "it is an array (int64 scalar)");
}

TEST(MetricFnsTest, CatalogMetricsNameTheRightPostprocessor) {
  // A value of the wrong kind names the metric, the example and the
  // postprocess_fn that makes the right kind.
  EXPECT_ERROR_CONTAINS(metric_fns::multirc_f1_over_all_answers()({V("True")}, {V("True")}),
                        "metrics.multirc_f1_over_all_answers: target 0 is a string 'True' but "
                        "the metric needs dicts with 'value' "
                        "(postprocess_fn=@t5.data.postprocessors.multirc");
  ValueDict text_value;
  text_value.items["value"] = std::string("yes");
  EXPECT_ERROR_CONTAINS(
      metric_fns::multirc_f1_over_all_answers()({V(text_value)}, {V(text_value)}),
      "metrics.multirc_f1_over_all_answers: target value 0 is a string 'yes' but the metric "
      "needs integer class ids");
  EXPECT_ERROR_CONTAINS(metric_fns::span_squad()({V(std::vector<std::string>{"a"})}, {V("x")}),
                        "metrics.span_squad: target 0 is a list of 1 strings but the metric "
                        "needs dicts with 'answers' and 'context' "
                        "(postprocess_fn=@t5.data.postprocessors.span_qa)");
  EXPECT_ERROR_CONTAINS(metric_fns::cola_matthews_corrcoef()({V(int64_t{1})}, {V("x")}),
                        "metrics.matthews_corrcoef: prediction 0 is a string 'x' but the metric "
                        "needs integer class ids (postprocess_fn=@t5.data.postprocessors."
                        "string_label_to_class_id)");
  ValueDict no_group;
  no_group.items["value"] = int64_t{1};
  EXPECT_ERROR_CONTAINS(
      metric_fns::deduplicate_metric(metric_fns::squad())({V(no_group)}, {V(no_group)}),
      "metrics.deduplicate_metric: target 0 is a dict with keys 'value' but the metric needs "
      "dicts with 'group' and 'value'");
  EXPECT_ERROR_CONTAINS(metric_fns::super_glue_metric("wsc.fixed"), "wsc_simple");
  EXPECT_ERROR_CONTAINS(metric_fns::sklearn_metrics_wrapper("f1_score"),
                        "metric_str 'f1_score' is not implemented");
}

TEST(MetricFnsTest, AccuracyOnStringsAndNumbers) {
  // 2 of 3 equal -> 66.67.
  auto m = metric_fns::accuracy()({V("a"), V("b"), V("c")}, {V("a"), V("x"), V("c")});
  EXPECT_NEAR(m.at("accuracy"), 200.0 / 3, 1e-12);
  // int 1 == float 1.0 (sklearn compares values); 1 of 2 equal -> 50.
  m = metric_fns::accuracy()({V(int64_t{1}), V(int64_t{0})}, {V(1.0), V(int64_t{1})});
  EXPECT_DOUBLE_EQ(m.at("accuracy"), 50.0);
  EXPECT_ERROR_CONTAINS(metric_fns::accuracy()({V("a")}, {V(int64_t{1})}),
                        "metrics.accuracy: prediction 0 is a int 1 but the metric needs strings");
  EXPECT_ERROR_CONTAINS(metric_fns::accuracy()({V(int64_t{1})}, {V(int64_t{1}), V(int64_t{0})}),
                        "got 1 targets but 2 predictions");
}

TEST(MetricFnsTest, KindErrorsNameThePostprocessorToUse) {
  EXPECT_ERROR_CONTAINS(metric_fns::f1_score_with_invalid()({V("1")}, {V("1")}),
                        "string_label_to_class_id");
  EXPECT_ERROR_CONTAINS(metric_fns::trivia_qa()({V("x")}, {V("x")}),
                        "target 0 is a string 'x' but the metric needs lists of reference "
                        "answers (postprocess_fn=@t5.data.postprocessors.qa)");
  // t5's squad on a string target (squad_v010 has no postprocess_fn): its
  // characters are the answers, as Python iterates a str.
  const auto m = metric_fns::squad()({V("xy")}, {V("x")});
  EXPECT_DOUBLE_EQ(m.at("em"), 100.0);
  EXPECT_DOUBLE_EQ(m.at("f1"), 100.0);
  EXPECT_ERROR_CONTAINS(metric_fns::mean_multiclass_f1(0), "num_classes is 0");
}

TEST(MetricFnsTest, F1AndMeanMulticlassOnClassIds) {
  // targets 1,0,1,1 predictions 1,1,0,-1: TP=1, FP=1, FN=2 (the invalid -1
  // counts as wrong: 1 - target = 0) -> F1 = 2/(2+1+2) = 40.
  auto m = metric_fns::f1_score_with_invalid()(
      {V(int64_t{1}), V(int64_t{0}), V(int64_t{1}), V(int64_t{1})},
      {V(int64_t{1}), V(int64_t{1}), V(int64_t{0}), V(int64_t{-1})});
  EXPECT_DOUBLE_EQ(m.at("f1"), 40.0);
  // 3 classes, targets 0,1,2 predictions 0,2,2: F1(0)=1, F1(1)=0,
  // F1(2)=2*1/(2+1)=2/3 -> mean 5/9.
  m = metric_fns::mean_multiclass_f1(3)({V(int64_t{0}), V(int64_t{1}), V(2.0)},
                                        {V(int64_t{0}), V(int64_t{2}), V(int64_t{2})});
  EXPECT_NEAR(m.at("mean_3class_f1"), 500.0 / 9, 1e-12);
}

TEST(MetricFnsTest, TextMetricsOnStrings) {
  // bleu: identical text -> 100; t5's lists of references when the first
  // target is a list.
  auto m = metric_fns::bleu()({V("a b c d e")}, {V("a b c d e")});
  EXPECT_NEAR(m.at("bleu"), 100.0, 1e-9);
  m = metric_fns::bleu("13a")({V(std::vector<std::string>{"a b c d", "q"})}, {V("a b c d")});
  EXPECT_NEAR(m.at("bleu"), 100.0, 1e-9);
  // rouge and rouge_mean agree (t5xx's rouge is the mean); keys as given.
  m = metric_fns::rouge({"rouge1", "rougeL"})({V("a b"), V("c d")}, {V("a x"), V("c d")});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_DOUBLE_EQ(m.at("rouge1"), 75.0);  // (1/2 + 1) / 2
  EXPECT_EQ(m, metric_fns::rouge_mean({"rouge1", "rougeL"})({V("a b"), V("c d")},
                                                           {V("a x"), V("c d")}));
  m = metric_fns::edit_distance(false)({V("A b")}, {V("a b")});
  EXPECT_EQ(m.at("sum_edit"), 1.0);
  m = metric_fns::trivia_qa()({V(std::vector<std::string>{"The Answer"})}, {V("answer")});
  EXPECT_DOUBLE_EQ(m.at("em"), 100.0);
}

TEST(MetricFnsTest, CorrelationsOnNumbers) {
  // Ints and floats mix (string_to_float gives floats, labels ints).
  auto m = metric_fns::pearson_corrcoef()({V(int64_t{0}), V(2.0)}, {V(0.0), V(int64_t{1})});
  EXPECT_DOUBLE_EQ(m.at("pearson_corrcoef"), 100.0);
  m = metric_fns::spearman_corrcoef()({V(0.0), V(2.0), V(1.0)}, {V(0.0), V(1.0), V(2.0)});
  EXPECT_NEAR(m.at("spearman_corrcoef"), 50.0, 1e-12);
}

TEST(MetricFnsTest, NewMetricsCheckKindsAndArguments) {
  EXPECT_ERROR_CONTAINS(metric_fns::pearson_corrcoef()({V("0.5")}, {V(0.5)}),
                        "metrics.pearson_corrcoef: target 0 is a string '0.5' but the metric "
                        "needs numbers (postprocess_fn=@t5.data.postprocessors.string_to_float)");
  EXPECT_ERROR_CONTAINS(metric_fns::rouge()({V("a")}, {V(int64_t{3})}),
                        "metrics.rouge: prediction 0 is a int 3");
  EXPECT_ERROR_CONTAINS(metric_fns::bleu()({V("a")}, {V(std::vector<std::string>{"a"})}),
                        "metrics.bleu: prediction 0 is a list");
  EXPECT_ERROR_CONTAINS(metric_fns::bleu()({V(std::vector<std::string>{"a"}), V("b")},
                                           {V("a"), V("b")}),
                        "metrics.bleu: target 1 is a string 'b'");
  EXPECT_ERROR_CONTAINS(metric_fns::edit_distance()({V(1.5)}, {V("x")}),
                        "metrics.edit_distance: target 0 is a float");
  EXPECT_ERROR_CONTAINS(metric_fns::trivia_qa()({V("x")}, {V("x")}), "postprocessors.qa");
  // Arguments fail when the MetricFn is made.
  EXPECT_ERROR_CONTAINS(metric_fns::bleu("zh"), "metrics.bleu: sacrebleu: unknown tokenizer 'zh'");
  EXPECT_ERROR_CONTAINS(metric_fns::rouge({"rouge1", "rougeLs"}),
                        "metrics.rouge: invalid rouge type 'rougeLs'");
  EXPECT_ERROR_CONTAINS(metric_fns::rouge_mean({}), "metrics.rouge: no rouge types");
}

// A task over the byte vocabulary whose targets are labels.
TaskPtr LabelTask(PostprocessFn post, std::vector<MetricFn> metric_fns) {
  auto source = std::make_shared<FunctionDataSource>(
      [](const std::string&, bool, uint64_t) -> DatasetPtr { return nullptr; });
  auto vocab = std::make_shared<ByteVocabulary>();
  OutputFeatures features{{"targets", Feature{vocab, true, true}}};
  return std::make_shared<Task>("label_task", source, std::vector<Preprocessor>{}, features,
                                1000, std::move(post), std::move(metric_fns));
}

Example TargetExample(const std::string& label) {
  ByteVocabulary vocab;
  return Example{{"targets", vocab.Encode(label)}};
}

TEST(EvaluatePredictionsTest, PostprocessesTargetsAndPredictionsThenMergesMetrics) {
  TaskPtr task = LabelTask(postprocessors::string_label_to_class_id({"no", "yes"}),
                           {metric_fns::accuracy(), metric_fns::f1_score_with_invalid()});
  // Targets decoded from tokens: yes, no, yes, yes -> 1, 0, 1, 1.
  // The third example keeps its raw text, which wins over the tokens.
  std::vector<Example> examples = {TargetExample("yes"), TargetExample("no"),
                                   TargetExample("no"), TargetExample("yes")};
  examples[2]["targets_pretokenized"] = std::string("yes");
  // Predictions yes, yes, no, maybe -> 1, 1, 0, -1.
  const auto m = EvaluatePredictions(*task, examples, {"yes", "yes", "no", "maybe"});
  // accuracy: only example 0 matches -> 25. f1: TP=1 FP=1 FN=2 -> 40.
  ASSERT_EQ(m.size(), 2u);
  EXPECT_DOUBLE_EQ(m.at("accuracy"), 25.0);
  EXPECT_DOUBLE_EQ(m.at("f1"), 40.0);
}

TEST(EvaluatePredictionsTest, WithoutPostprocessFnComparesText) {
  TaskPtr task = LabelTask(nullptr, {metric_fns::sequence_accuracy()});
  const auto m = EvaluatePredictions(*task, {TargetExample("a b"), TargetExample("c")},
                                     {"a b", "c "});  // "c " != "c"
  EXPECT_DOUBLE_EQ(m.at("sequence_accuracy"), 50.0);
}

TEST(EvaluatePredictionsTest, Errors) {
  TaskPtr none = LabelTask(nullptr, {});
  EXPECT_ERROR_CONTAINS(EvaluatePredictions(*none, {TargetExample("a")}, {"a"}),
                        "evaluating task 'label_task': the task has no metric_fns");
  TaskPtr twice = LabelTask(nullptr, {metric_fns::accuracy(), metric_fns::accuracy()});
  EXPECT_ERROR_CONTAINS(EvaluatePredictions(*twice, {TargetExample("a")}, {"a"}),
                        "two metric_fns both return 'accuracy'");
  TaskPtr acc = LabelTask(nullptr, {metric_fns::accuracy()});
  EXPECT_ERROR_CONTAINS(EvaluatePredictions(*acc, {TargetExample("a")}, {"a", "b"}),
                        "1 examples but 2 predictions");
  EXPECT_ERROR_CONTAINS(EvaluatePredictions(*acc, {}, {}), "no examples to score");
  EXPECT_ERROR_CONTAINS(EvaluatePredictions(*acc, {Example{}}, {"a"}),
                        "neither 'targets_pretokenized' text nor 'targets' tokens");
  TaskPtr f1 = LabelTask(nullptr, {metric_fns::f1_score_with_invalid()});
  EXPECT_ERROR_CONTAINS(EvaluatePredictions(*f1, {TargetExample("1")}, {"1"}),
                        "evaluating task 'label_task': metrics.f1_score_with_invalid: target 0 "
                        "is a string '1'");
}

}  // namespace
}  // namespace t5xx::seqio
