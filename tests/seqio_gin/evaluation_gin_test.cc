// t5's metrics as gin configurables (seqio_gin/evaluation.cc): a task whose
// metric_fns are @t5.evaluation.metrics.bleu / rouge / edit_distance /
// pearson_corrcoef / spearman_corrcoef with their bindings scores its
// predictions with those arguments; bad arguments are errors naming the
// binding. Expected values are hand arithmetic, derived in comments.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "t5xx/config/config.h"
#include "t5xx/data/evaluation/evaluation.h"
#include "t5xx/seqio_gin/seqio_gin.h"
#include "test_util.h"

namespace t5xx::seqio_gin {
namespace {

namespace fs = std::filesystem;

class EvaluationGinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterSeqioConfigurables(registry_);
    dir_ = fs::temp_directory_path() /
           ("t5xx_evaluation_gin_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A task "t" over the lines `targets` (one example each) with `bindings`,
  // scored on `predictions`.
  seqio::metrics::Metrics Score(const std::string& targets, const std::string& bindings,
                                const std::vector<std::string>& predictions) {
    seqio::TaskPtr task = MakeTask(targets, bindings);
    seqio::DatasetPtr ds = task->GetDataset({{"targets", 64}}, "validation", /*shuffle=*/false);
    std::vector<seqio::Example> examples;
    while (auto ex = ds->Next()) examples.push_back(*ex);
    return seqio::EvaluatePredictions(*task, examples, predictions);
  }

  // The task "t" of Score.
  seqio::TaskPtr MakeTask(const std::string& targets, const std::string& bindings) {
    std::ofstream(dir_ / "targets.txt") << targets;
    const std::string gin =
        "t/seqio.Task.name = 't'\n"
        "t/seqio.Task.source = @seqio.TextLineDataSource()\n"
        "t/seqio.TextLineDataSource.split_to_filepattern = {'validation': '" +
        (dir_ / "targets.txt").string() +
        "'}\n"
        "t/seqio.Task.preprocessors = [@seqio.preprocessors.rekey, "
        "@seqio.preprocessors.tokenize]\n"
        "seqio.preprocessors.rekey.key_map = {'targets': 'text'}\n"
        "t/seqio.Task.output_features = {'targets': @seqio.Feature()}\n"
        "t/seqio.Feature.vocabulary = @seqio.ByteVocabulary()\n"
        "t5xx.seqio.register.tasks = [@t/seqio.Task()]\n" +
        bindings;
    config_ = std::make_unique<gin::Config>(&registry_);
    config_->ParseString(gin, "tasks.gin");
    config_->Finalize({"t5xx.seqio.register"});
    tasks_ = std::make_unique<seqio::TaskRegistry>();
    mixtures_ = std::make_unique<seqio::MixtureRegistry>();
    RegisterGinTasks(*config_, {}, *tasks_, *mixtures_);
    return tasks_->Get("t");
  }

  gin::Registry registry_;
  std::unique_ptr<gin::Config> config_;
  std::unique_ptr<seqio::TaskRegistry> tasks_;
  std::unique_ptr<seqio::MixtureRegistry> mixtures_;
  fs::path dir_;
};

TEST_F(EvaluationGinTest, TextMetricsTakeTheirBindings) {
  const auto m = Score("The cats ran.\nhello world\n",
                       "t/seqio.Task.metric_fns = [@t5.evaluation.metrics.bleu, "
                       "@t5.evaluation.metrics.rouge, @t5.evaluation.metrics.edit_distance]\n"
                       "t5.evaluation.metrics.bleu.tokenizer = '13a'\n"
                       "t5.evaluation.metrics.rouge.score_keys = ['rouge1', 'rougeL']\n"
                       "t5.evaluation.metrics.rouge.use_stemmer = True\n"
                       "t5.evaluation.metrics.rouge.verbose = False\n"
                       "t5.evaluation.metrics.edit_distance.lower = False\n",
                       {"The cat runs.", "hello world"});
  // bleu (13a): "The cats ran ." / "The cat runs ." and "hello world" twice.
  // 1-grams (2 + 2)/(4 + 2), 2-grams (0 + 1)/(3 + 1), 3-grams 0/2 and
  // 4-grams 0/1 smoothed to 100/(2*2) and 100/(4*1): BLEU = 100 *
  // (4/6 * 1/4 * 1/4 * 1/4)^(1/4) = 100 / 96^(1/4).
  EXPECT_NEAR(m.at("bleu"), 100.0 / std::pow(96.0, 0.25), 1e-12);
  // rouge with the stemmer: "the cat ran" vs "the cat run" -> 2 of 3 both
  // ways (rouge1 and LCS), then 1 for "hello world": mean (2/3 + 1) / 2.
  EXPECT_NEAR(m.at("rouge1"), 250.0 / 3, 1e-12);
  EXPECT_NEAR(m.at("rougeL"), 250.0 / 3, 1e-12);
  EXPECT_FALSE(m.count("rouge2"));
  // edit_distance without lowering: [The cats ran ''] vs [The cat runs '']
  // -> 2, then 0.
  EXPECT_EQ(m.at("sum_edit"), 2.0);
  EXPECT_EQ(m.at("median_edit"), 1.0);
}

TEST_F(EvaluationGinTest, CorrelationsWithStringToFloat) {
  const auto m = Score("1\n2\n3\n",
                       "t/seqio.Task.postprocess_fn = @t5.data.postprocessors.string_to_float\n"
                       "t/seqio.Task.metric_fns = [@t5.evaluation.metrics.pearson_corrcoef, "
                       "@t5.evaluation.metrics.spearman_corrcoef]\n",
                       {"1", "2", "4"});
  // x = 1 2 3, y = 1 2 4: sxy = 3, sxx = 2, syy = 42/9 -> r = 9 / sqrt(84).
  EXPECT_NEAR(m.at("pearson_corrcoef"), 900 / std::sqrt(84.0), 1e-12);
  EXPECT_NEAR(m.at("spearman_corrcoef"), 100.0, 1e-12);
}

TEST_F(EvaluationGinTest, DefaultsAreT5s) {
  // bleu's tokenizer defaults to 'intl' (splits the '-'), rouge's keys to
  // rouge1, rouge2, rougeLsum.
  const auto m = Score("a-b c d e\n",
                       "t/seqio.Task.metric_fns = [@t5.evaluation.metrics.bleu, "
                       "@t5.evaluation.metrics.rouge_mean]\n",
                       {"a - b c d e"});
  EXPECT_NEAR(m.at("bleu"), 100.0, 1e-9);
  EXPECT_EQ(m.size(), 4u);
  EXPECT_DOUBLE_EQ(m.at("rougeLsum"), 100.0);
}

TEST_F(EvaluationGinTest, BadArgumentsNameTheBinding) {
  EXPECT_ERROR_CONTAINS(Score("a\n",
                              "t/seqio.Task.metric_fns = [@t5.evaluation.metrics.bleu]\n"
                              "t5.evaluation.metrics.bleu.tokenizer = 'zh'\n",
                              {"a"}),
                        "tasks.gin:10:40: metrics.bleu: sacrebleu: unknown tokenizer 'zh'; t5xx "
                        "implements sacrebleu's 'intl' (t5's default), '13a' and 'none'");
  EXPECT_ERROR_CONTAINS(Score("a\n",
                              "t/seqio.Task.metric_fns = [@t5.evaluation.metrics.rouge]\n"
                              "t5.evaluation.metrics.rouge.score_keys = ['rougeW']\n",
                              {"a"}),
                        "tasks.gin:10:42: metrics.rouge: invalid rouge type 'rougeW'; use "
                        "rouge1 .. rouge9");
  EXPECT_ERROR_CONTAINS(Score("a\n",
                              "t/seqio.Task.metric_fns = [@t5.evaluation.metrics.rouge]\n"
                              "t5.evaluation.metrics.rouge.split_summaries = True\n",
                              {"a"}),
                        "unknown parameter 'split_summaries' of 't5.evaluation.metrics.rouge'");
}

// An example as t5's glue()/record()/wsc_simple() preprocessors leave it:
// the target text and TFDS's int32 idx features (or an int64 label).
seqio::Example Ex(const std::string& target, std::map<std::string, int32_t> ints,
                  std::vector<std::string> answers = {}) {
  seqio::Example ex;
  ex["targets_pretokenized"] = target;
  for (const auto& [k, v] : ints) {
    ex[k] = k == "label" ? seqio::Array::Int64(v) : seqio::Array::Int32(v);
  }
  if (!answers.empty()) ex["answers"] = seqio::Array::Strings(answers);
  return ex;
}

TEST_F(EvaluationGinTest, ColaMatthewsCorrcoefAsGlueUtils) {
  const auto m = Score("acceptable\nunacceptable\nacceptable\n",
                       "t/seqio.Task.postprocess_fn = "
                       "@t5.data.postprocessors.string_label_to_class_id\n"
                       "t5.data.postprocessors.string_label_to_class_id.label_classes = "
                       "['unacceptable', 'acceptable']\n"
                       "t/seqio.Task.metric_fns = "
                       "[@t5.evaluation.metrics.sklearn_metrics_wrapper()]\n"
                       "t5.evaluation.metrics.sklearn_metrics_wrapper.metric_str = "
                       "'matthews_corrcoef'\n"
                       "t5.evaluation.metrics.sklearn_metrics_wrapper.metric_post_process_fn = "
                       "@t5xx.metrics.times_100\n",
                       {"acceptable", "acceptable", "junk"});
  // t = 1 0 1, p = 1 1 -1: n = 3, trace 1, t sums {0: 1, 1: 2}, p sums
  // {-1: 1, 1: 2}: (1*3 - 2*2) / sqrt((9 - 5) * (9 - 5)) = -1/4.
  EXPECT_NEAR(m.at("matthews_corrcoef"), -25.0, 1e-12);
  EXPECT_EQ(m.size(), 1u);
}

TEST_F(EvaluationGinTest, MultircGroupsByQuestion) {
  seqio::TaskPtr task = MakeTask(
      "x\n",
      "t/seqio.Task.postprocess_fn = @t5.data.postprocessors.multirc\n"
      "t/seqio.Task.metric_fns = [@t5.evaluation.metrics.multirc_f1_over_all_answers, "
      "@t5.evaluation.metrics.mean_group_metric()]\n"
      "t5.evaluation.metrics.mean_group_metric.metric_fn = @t5.evaluation.metrics.all_match\n");
  const std::vector<seqio::Example> examples = {
      Ex("True", {{"idx/question", 0}}), Ex("False", {{"idx/question", 0}}),
      Ex("True", {{"idx/question", 1}}), Ex("True", {{"idx/question", 2}})};
  const auto m = seqio::EvaluatePredictions(*task, examples, {"True", "False", "True", "no"});
  // F1 over all answers: TP 2, FN 1 (the invalid "no") -> 4/5; groups 0 and
  // 1 all match, group 2 not -> 2/3.
  EXPECT_NEAR(m.at("f1"), 80.0, 1e-12);
  EXPECT_NEAR(m.at("exact_match"), 200.0 / 3, 1e-12);
  // A target example without idx/question names the feature.
  EXPECT_ERROR_CONTAINS(seqio::EvaluatePredictions(*task, {Ex("True", {})}, {"True"}),
                        "t5.data.postprocessors.multirc: the example has no integer scalar "
                        "feature 'idx/question'");
}

TEST_F(EvaluationGinTest, RecordScoresEachQueryOnce) {
  seqio::TaskPtr task = MakeTask(
      "x\n",
      "t/seqio.Task.postprocess_fn = @t5.data.postprocessors.record\n"
      "t/seqio.Task.metric_fns = [@t5.evaluation.metrics.deduplicate_metric()]\n"
      "t5.evaluation.metrics.deduplicate_metric.metric_fn = @t5.evaluation.metrics.squad\n");
  const std::vector<std::string> answers = {"Penguin", "pigeon"};
  const std::vector<seqio::Example> examples = {
      Ex("Penguin", {{"idx/passage", 0}, {"idx/query", 0}}, answers),
      Ex("pigeon", {{"idx/passage", 0}, {"idx/query", 0}}, answers),
      Ex("Paris", {{"idx/passage", 0}, {"idx/query", 1}}, {"Paris"})};
  // Query (0, 0) once, with its first prediction "pigeon" (a match); query
  // (0, 1) missed.
  const auto m = seqio::EvaluatePredictions(*task, examples, {"pigeon", "x", "Rome"});
  EXPECT_NEAR(m.at("em"), 50.0, 1e-12);
  EXPECT_NEAR(m.at("f1"), 50.0, 1e-12);
}

TEST_F(EvaluationGinTest, WscSimpleAndSpanSquad) {
  seqio::TaskPtr wsc = MakeTask("x\n",
                                "t/seqio.Task.postprocess_fn = @t5.data.postprocessors.wsc_simple\n"
                                "t/seqio.Task.metric_fns = [@t5.evaluation.metrics.accuracy]\n");
  const auto m = seqio::EvaluatePredictions(
      *wsc, {Ex("the fuzzy bunny", {{"label", 1}}), Ex("Bob's hat", {{"label", 0}})},
      {"The Bunny", "Bob"});
  // "bunny" is in the referent's words: 1 == 1; "Bob" vs "Bob's hat": 0 == 0.
  EXPECT_NEAR(m.at("accuracy"), 100.0, 1e-12);

  seqio::TaskPtr span = MakeTask("x\n",
                                 "t/seqio.Task.postprocess_fn = @t5.data.postprocessors.span_qa\n"
                                 "t/seqio.Task.metric_fns = [@t5.evaluation.metrics.span_squad]\n");
  seqio::Example ex = Ex("start: 1 end: 2", {}, {"Normans", "the Normans"});
  ex["context"] = std::string("The Normans (Norman: Nourmands) were");
  const auto s = seqio::EvaluatePredictions(*span, {ex, ex}, {"start: 0 end: 1", "start: 2"});
  // "The Normans" matches; a span without an end gives "".
  EXPECT_NEAR(s.at("em"), 50.0, 1e-12);
}

TEST_F(EvaluationGinTest, CatalogMetricArgumentsAreChecked) {
  EXPECT_ERROR_CONTAINS(Score("a\n",
                              "t/seqio.Task.metric_fns = "
                              "[@t5.evaluation.metrics.sklearn_metrics_wrapper()]\n"
                              "t5.evaluation.metrics.sklearn_metrics_wrapper.metric_str = "
                              "'roc_auc_score'\n",
                              {"a"}),
                        "metrics.sklearn_metrics_wrapper: metric_str 'roc_auc_score' is not "
                        "implemented");
  EXPECT_ERROR_CONTAINS(Score("a\n",
                              "t/seqio.Task.metric_fns = "
                              "[@t5.evaluation.metrics.mean_group_metric()]\n"
                              "t5.evaluation.metrics.mean_group_metric.metric_fn = "
                              "@t5.data.postprocessors.qa\n",
                              {"a"}),
                        "a metric_fn");
  // Plain text targets are no dicts: the error names the postprocessor.
  EXPECT_ERROR_CONTAINS(Score("a\n",
                              "t/seqio.Task.metric_fns = "
                              "[@t5.evaluation.metrics.mean_group_metric()]\n"
                              "t5.evaluation.metrics.mean_group_metric.metric_fn = "
                              "@t5.evaluation.metrics.all_match\n",
                              {"a"}),
                        "metrics.mean_group_metric: target 0 is a string 'a' but the metric "
                        "needs dicts with 'group' and 'value' "
                        "(postprocess_fn=@t5.data.postprocessors.multirc");
}

}  // namespace
}  // namespace t5xx::seqio_gin
