// Tests for t5xx::seqio::metrics: the 'metrics' cases of T5XX_TESTVECTORS
// (from t5/evaluation/metrics_test.py), t5's own metrics_test.py cases for
// the text metrics, plus hand-worked cases.
#include "t5xx/metrics/metrics.h"

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "t5xx/metrics/sacrebleu.h"
#include "test_util.h"

namespace t5xx::seqio::metrics {
namespace {

using json = nlohmann::json;
using Ints = std::vector<int64_t>;
using Strs = std::vector<std::string>;

const json& Vectors() {
  static const json j = [] {
    const std::string path = T5XX_TESTVECTORS;
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return json::parse(in);
  }();
  return j;
}

Metrics RunCase(const json& c) {
  const std::string metric = c.at("metric").get<std::string>();
  if (metric == "accuracy") {
    return accuracy(c.at("targets").get<Ints>(), c.at("predictions").get<Ints>());
  }
  if (metric == "f1_score_with_invalid") {
    return f1_score_with_invalid(c.at("targets").get<Ints>(),
                                 c.at("predictions").get<Ints>());
  }
  if (metric == "squad") {
    return squad(c.at("targets").get<std::vector<Strs>>(),
                 c.at("predictions").get<Strs>());
  }
  const std::string mc = "mean_multiclass_f1(num_classes=";
  if (metric.rfind(mc, 0) == 0) {
    const int n = std::stoi(metric.substr(mc.size()));
    return mean_multiclass_f1(n)(c.at("targets").get<Ints>(),
                                 c.at("predictions").get<Ints>());
  }
  ADD_FAILURE() << "unknown metric in test vectors: " << metric;
  return {};
}

TEST(MetricsTestVectors, AllCases) {
  const json& cases = Vectors().at("metrics");
  ASSERT_FALSE(cases.empty());
  int checked = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.dump());
    const Metrics got = RunCase(c);
    // The vectors give expected values rounded to 2 decimals; exact ones
    // have no tolerance.
    const double tol = c.contains("tolerance") ? c.at("tolerance").get<double>() : 1e-9;
    ASSERT_EQ(got.size(), c.at("expected").size());
    for (const auto& [key, value] : c.at("expected").items()) {
      ASSERT_TRUE(got.count(key)) << "missing key " << key;
      EXPECT_NEAR(got.at(key), value.get<double>(), tol) << key;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 5);  // accuracy, f1, squad em+f1, mean_3class_f1
}

TEST(Accuracy, Strings) {
  // 2 of 3 equal ("b" vs "B" differs: no normalisation) -> 66.67.
  const Metrics m = accuracy(Strs{"a", "b", "c"}, Strs{"a", "B", "c"});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NEAR(m.at("accuracy"), 200.0 / 3.0, 1e-9);
}

TEST(Accuracy, IntsPerfect) {
  EXPECT_DOUBLE_EQ(accuracy(Ints{3, 4}, Ints{3, 4}).at("accuracy"), 100.0);
}

TEST(SequenceAccuracy, HandWorked) {
  // "this is a string" matches exactly; "this is another string" vs
  // "this is another  string" (two spaces) does not; "" == "" matches.
  // 2 of 3 -> 66.67.
  const Metrics m = sequence_accuracy(
      Strs{"this is a string", "this is another string", ""},
      Strs{"this is a string", "this is another  string", ""});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NEAR(m.at("sequence_accuracy"), 200.0 / 3.0, 1e-9);
  EXPECT_DOUBLE_EQ(sequence_accuracy(Strs{"x"}, Strs{"y"}).at("sequence_accuracy"), 0.0);
}

TEST(F1ScoreWithInvalid, HandWorked) {
  // targets 1 1 0 0 1, predictions 1 7 1 0 -1. Invalid 7 -> 0 (FN),
  // invalid -1 (target 1) -> 0 (FN). TP=1 (i0), FP=1 (i2), FN=2 (i1, i4).
  // F1 = 2*1 / (2*1 + 1 + 2) = 0.4 -> 40.
  EXPECT_NEAR(f1_score_with_invalid(Ints{1, 1, 0, 0, 1}, Ints{1, 7, 1, 0, -1}).at("f1"),
              40.0, 1e-9);
  // All-negative with correct predictions: TP=FP=FN=0 -> 0 (sklearn's
  // zero_division value).
  EXPECT_DOUBLE_EQ(f1_score_with_invalid(Ints{0, 0}, Ints{0, 5}).at("f1"), 0.0);
}

TEST(MeanMulticlassF1, HandWorked) {
  // num_classes=2, targets 0 0 1 1, predictions 0 1 1 1.
  // class 0: TP=1, FP=0, FN=1 -> 2/3; class 1: TP=2, FP=1, FN=0 -> 4/5.
  // mean = (2/3 + 4/5) / 2 = 11/15 -> 73.33.
  const Metrics m = mean_multiclass_f1(2, Ints{0, 0, 1, 1}, Ints{0, 1, 1, 1});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NEAR(m.at("mean_2class_f1"), 1100.0 / 15.0, 1e-9);
  // A class that never occurs contributes 0: num_classes=3 over the same
  // data -> (2/3 + 4/5 + 0) / 3 = 22/45 -> 48.89.
  EXPECT_NEAR(mean_multiclass_f1(3)(Ints{0, 0, 1, 1}, Ints{0, 1, 1, 1})
                  .at("mean_3class_f1"),
              2200.0 / 45.0, 1e-9);
}

TEST(Squad, Normalisation) {
  // lowercase, strip punctuation, drop a/an/the, collapse whitespace.
  EXPECT_EQ(normalize_squad("The Cat, an  apple!"), "cat apple");
  EXPECT_EQ(normalize_squad("  A  \t the\nTHE an "), "");
  // Articles only as whole words: "theater", "anna", "bad" are kept.
  EXPECT_EQ(normalize_squad("Theater Anna bad"), "theater anna bad");
  // Punctuation is removed before articles: "a.b" -> "ab" (not an article),
  // "the-end" -> "theend".
  EXPECT_EQ(normalize_squad("a.b the-end"), "ab theend");
  EXPECT_EQ(normalize_squad("$$$$"), "");
}

TEST(Squad, HandWorked) {
  // Example 1: "The Eiffel Tower!" vs prediction "eiffel tower" normalise
  // equal -> EM 1, F1 1.
  // Example 2: references {"red car", "big blue car"}, prediction
  // "a blue car" -> "blue car". vs "red car": common 1, P=1/2, R=1/2, F1=1/2.
  // vs "big blue car": common 2, P=2/2, R=2/3, F1=2*(2/3)/(5/3)=4/5.
  // max EM 0, max F1 4/5.
  // Mean: EM (1+0)/2 = 50; F1 (1+0.8)/2 = 90.
  const Metrics m = squad({{"The Eiffel Tower!"}, {"red car", "big blue car"}},
                          {"eiffel tower", "a blue car"});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_NEAR(m.at("em"), 50.0, 1e-9);
  EXPECT_NEAR(m.at("f1"), 90.0, 1e-9);
}

TEST(Squad, RepeatedTokensCountedOnce) {
  // prediction "x x y" vs reference "x y y": bag overlap min(2,1)+min(1,2)=2,
  // P=2/3, R=2/3, F1=2/3 -> 66.67; EM 0.
  const Metrics m = squad({{"x y y"}}, {"x x y"});
  EXPECT_NEAR(m.at("f1"), 200.0 / 3.0, 1e-9);
  EXPECT_DOUBLE_EQ(m.at("em"), 0.0);
}

TEST(MetricsErrors, MismatchedLengths) {
  EXPECT_ERROR_CONTAINS(accuracy(Ints{1, 2}, Ints{1}), "metrics.accuracy");
  EXPECT_ERROR_CONTAINS(accuracy(Strs{"a"}, Strs{"a", "b"}), "same length");
  EXPECT_ERROR_CONTAINS(sequence_accuracy(Strs{"a"}, Strs{}), "metrics.sequence_accuracy");
  EXPECT_ERROR_CONTAINS(f1_score_with_invalid(Ints{1}, Ints{1, 0}),
                        "metrics.f1_score_with_invalid");
  EXPECT_ERROR_CONTAINS(mean_multiclass_f1(3)(Ints{1}, Ints{}), "metrics.mean_multiclass_f1");
  EXPECT_ERROR_CONTAINS(squad({{"a"}}, {"a", "b"}), "metrics.squad");
}

TEST(MetricsErrors, EmptyInput) {
  EXPECT_ERROR_CONTAINS(accuracy(Ints{}, Ints{}), "metrics.accuracy: empty input");
  EXPECT_ERROR_CONTAINS(sequence_accuracy(Strs{}, Strs{}), "empty input");
  EXPECT_ERROR_CONTAINS(f1_score_with_invalid(Ints{}, Ints{}), "empty input");
  EXPECT_ERROR_CONTAINS(mean_multiclass_f1(2, Ints{}, Ints{}), "empty input");
  EXPECT_ERROR_CONTAINS(squad({}, {}), "metrics.squad: empty input");
}

TEST(MetricsErrors, BadDomain) {
  EXPECT_ERROR_CONTAINS(f1_score_with_invalid(Ints{0, 2}, Ints{0, 1}),
                        "target 1 is 2");
  EXPECT_ERROR_CONTAINS(mean_multiclass_f1(0), "num_classes is 0");
  EXPECT_ERROR_CONTAINS(squad({{"a"}, {}}, {"a", "b"}),
                        "example 1 has no reference answers");
}


// t5/evaluation/metrics_test.py's cases for the metrics added later.
TEST(T5MetricsTestCases, BleuRougeSquadTriviaQa) {
  const std::string ref = "this is a string";
  EXPECT_NEAR(bleu(Strs{ref, ref}, Strs{ref, ref}).at("bleu"), 100.0, 1e-9);
  EXPECT_EQ(bleu(Strs{ref, ref}, Strs{"", ""}).at("bleu"), 0.0);
  EXPECT_NEAR(bleu(std::vector<Strs>{{"", ref}, {ref, ""}}, Strs{ref, ref}).at("bleu"), 100.0,
              1e-9);
  for (const Metrics& m : {rouge(Strs{ref, ref}, Strs{ref, ref}),
                           rouge_mean(Strs{ref, ref}, Strs{ref, ref})}) {
    ASSERT_EQ(m.size(), 3u);
    EXPECT_DOUBLE_EQ(m.at("rouge1"), 100.0);
    EXPECT_DOUBLE_EQ(m.at("rouge2"), 100.0);
    EXPECT_DOUBLE_EQ(m.at("rougeLsum"), 100.0);
  }
  const Metrics zero = rouge(Strs{ref, ref}, Strs{"", ""});
  EXPECT_EQ(zero.at("rouge1") + zero.at("rouge2") + zero.at("rougeLsum"), 0.0);
  // test_squad_big: "‘a big  Moose!‘" normalises to "‘ big moose‘" (the
  // quotes are not ASCII punctuation, "a" is a whole word): F1 vs "big
  // moose" = 2 * 1/3 * 1/2 / (5/6) = 0.4; EM 1 of 4, F1 (0.4 + 0 + 1 + 0) / 4.
  const std::vector<Strs> big = {{"big moose", "hippo"}, {"correct1"},
                                 {"correct2.1", "correct2.2"}, {"a", "b"}};
  const Strs big_pred = {"\xE2\x80\x98" "a big  Moose!" "\xE2\x80\x98", "wrong", "correct2.2", "c"};
  EXPECT_DOUBLE_EQ(squad(big, big_pred).at("em"), 25.0);
  EXPECT_NEAR(squad(big, big_pred).at("f1"), 35.0, 1e-12);
  EXPECT_EQ(normalize_squad(big_pred[0]), "\xE2\x80\x98 big moose\xE2\x80\x98");
  // test_trivia_qa: the quotes become spaces, so example 1 matches too:
  // EM (1 + 0 + 1 + 0) / 4.
  EXPECT_DOUBLE_EQ(trivia_qa(big, big_pred).at("em"), 50.0);
  EXPECT_DOUBLE_EQ(trivia_qa(big, big_pred).at("f1"), 50.0);
  EXPECT_EQ(normalize_trivia_qa("snake_case Word\xC2\xB4s"), "snake case word s");
}

TEST(T5MetricsTestCases, CorrelationsAndEditDistance) {
  EXPECT_DOUBLE_EQ(pearson_corrcoef({0, 2}, {0, 1}).at("pearson_corrcoef"), 100.0);
  EXPECT_NEAR(spearman_corrcoef({0, 2, 1}, {0, 1, 2}).at("spearman_corrcoef"), 50.0, 1e-12);
  // "this is a different sentence." vs "this is a sentence.": the pieces
  // [this is a different sentence ''] vs [this is a sentence ''] -> 1.
  const Metrics lower = edit_distance(Strs{"This is a sentence."},
                                      Strs{"This is a different SENTENCE."});
  for (const char* k : {"min_edit", "max_edit", "mean_edit", "median_edit", "sum_edit"}) {
    EXPECT_EQ(lower.at(k), 1.0) << k;
  }
  EXPECT_EQ(edit_distance(Strs{"This is a sentence."}, Strs{"This is a different SENTENCE."},
                          /*lower=*/false)
                .at("sum_edit"),
            2.0);
  EXPECT_EQ(edit_distance(Strs{"Non-ascii separate."}, Strs{"Non-ascii\xF0\x9F\x99\x82separate."},
                          false)
                .at("max_edit"),
            0.0);
}

TEST(Bleu, TokenizerIsSelectableAndChecked) {
  // "a-b" vs "a - b": 'intl' splits the hyphen (Pd), '13a' does not (a hyphen
  // splits only after a digit), 'none' splits neither side.
  EXPECT_NEAR(bleu(Strs{"x a-b y z"}, Strs{"x a - b y z"}, "intl").at("bleu"), 100.0, 1e-9);
  EXPECT_LT(bleu(Strs{"x a-b y z"}, Strs{"x a - b y z"}, "13a").at("bleu"), 100.0);
  EXPECT_ERROR_CONTAINS(bleu(Strs{"a"}, Strs{"a"}, "zh"), "metrics.bleu: sacrebleu: unknown tokenizer 'zh'");
  EXPECT_ERROR_CONTAINS(bleu(Strs{"a"}, Strs{"a", "b"}), "metrics.bleu: got 1 targets");
  // Lists of references are reference streams, as t5 passes them: 2
  // predictions, lists of 3 -> stream k = targets[k]; prediction 0 is
  // scored against targets[0][0] and targets[1][0].
  const std::vector<Strs> lists = {{"p q r s", "x", "y"}, {"zz", "x", "y"}};
  EXPECT_NEAR(bleu(lists, Strs{"p q r s", "unrelated words here now"}).at("bleu"),
              sacrebleu::CorpusBleu({"p q r s", "unrelated words here now"},
                                    {{"p q r s", "x"}, {"zz", "x"}},
                                    {"exp", 0.0, false, sacrebleu::Tokenizer::kIntl})
                  .score,
              0.0);
}

TEST(Rouge, HandWorkedCorpus) {
  // prepare_summary_rouge makes " . " a line end: "a b .\nc d" vs
  // "a b .\nc e". rouge1 3/4; rouge2: {ab, bc, cd} vs {ab, bc, ce} 2/3;
  // rougeLsum: [a b] 2 hits, [c d] 1 hit of 4 -> 3/4.
  // "x y" vs "x z": rouge1 1/2, rouge2 0, rougeLsum 1/2.
  // Means ×100: 62.5, 33.33, 62.5.
  const Metrics m = rouge(Strs{"a b . c d", "x y"}, Strs{"a b . c e", "x z"});
  EXPECT_DOUBLE_EQ(m.at("rouge1"), 62.5);
  EXPECT_NEAR(m.at("rouge2"), 100.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(m.at("rougeLsum"), 62.5);
  EXPECT_EQ(prepare_summary_rouge("a . b . c"), "a .\nb .\nc");
  EXPECT_EQ(prepare_summary_rouge("a . . b"), "a .\n. b");  // no overlapping matches
  // With the stemmer "runs" and "running" both become "run".
  EXPECT_DOUBLE_EQ(rouge_mean(Strs{"runs"}, Strs{"running"}, {"rouge1"}, true).at("rouge1"), 100.0);
  EXPECT_DOUBLE_EQ(rouge_mean(Strs{"runs"}, Strs{"running"}, {"rouge1"}, false).at("rouge1"), 0.0);
  EXPECT_ERROR_CONTAINS(rouge(Strs{"a"}, Strs{"a"}, {"rougeX"}), "metrics.rouge: invalid rouge type 'rougeX'");
  EXPECT_ERROR_CONTAINS(rouge(Strs{}, Strs{}), "metrics.rouge: empty input");
}

TEST(Correlations, HandWorked) {
  // x = 1 2 3, y = 1 2 5: centred -1 0 1 and -5/3 -2/3 7/3; sxy = 4,
  // sxx = 2, syy = 78/9 -> r = 4 / sqrt(2 * 78 / 9) = 12 / sqrt(156).
  EXPECT_NEAR(pearson_corrcoef({1, 2, 3}, {1, 2, 5}).at("pearson_corrcoef"),
              100 * 12 / std::sqrt(156.0), 1e-12);
  // Spearman: the ranks are 1 2 3 for both -> 100.
  EXPECT_NEAR(spearman_corrcoef({1, 2, 3}, {1, 2, 5}).at("spearman_corrcoef"), 100.0, 1e-12);
  // Ties get average ranks: x = 1 2 2 3 -> 1 2.5 2.5 4; y ranks 1 2 3 4.
  // sxy = 4.5, sxx = 4.5, syy = 5 -> r = sqrt(0.9).
  EXPECT_NEAR(spearman_corrcoef({1, 2, 2, 3}, {1, 2, 3, 4}).at("spearman_corrcoef"),
              100 * std::sqrt(0.9), 1e-12);
  // Two points: exactly -100; a constant side or a NaN: NaN (as scipy).
  EXPECT_EQ(pearson_corrcoef({3, 1}, {1, 3}).at("pearson_corrcoef"), -100.0);
  EXPECT_TRUE(std::isnan(pearson_corrcoef({1, 1, 1}, {1, 2, 3}).at("pearson_corrcoef")));
  EXPECT_TRUE(std::isnan(pearson_corrcoef({1, NAN, 3}, {1, 2, 3}).at("pearson_corrcoef")));
  EXPECT_TRUE(std::isnan(spearman_corrcoef({1, 2, 3}, {4, 4, 4}).at("spearman_corrcoef")));
  EXPECT_TRUE(std::isnan(spearman_corrcoef({1}, {2}).at("spearman_corrcoef")));
  EXPECT_ERROR_CONTAINS(pearson_corrcoef({1}, {2}), "needs at least 2");
  EXPECT_ERROR_CONTAINS(spearman_corrcoef({1, 2}, {2}), "metrics.spearman_corrcoef: got 2 targets");
}

TEST(EditDistance, StatisticsOverExamples) {
  // distances 0 ("a"/"a"), 1 ("a b"/"a c"), 2 ("a b c"/"x y c"), 5 (""
  // is the one piece [''] vs [a b c d e]: 1 substitution + 4 insertions).
  const Metrics m = edit_distance(Strs{"a", "a b", "a b c", ""},
                                  Strs{"a", "a c", "x y c", "a b c d e"});
  EXPECT_EQ(m.at("min_edit"), 0.0);
  EXPECT_EQ(m.at("max_edit"), 5.0);
  EXPECT_EQ(m.at("mean_edit"), 2.0);
  EXPECT_EQ(m.at("median_edit"), 1.5);
  EXPECT_EQ(m.at("sum_edit"), 8.0);
  // Two separators make an empty piece: "a,  b" -> [a '' '' b] vs [a b].
  EXPECT_EQ(edit_distance(Strs{"a b"}, Strs{"a,  b"}).at("sum_edit"), 2.0);
  // Python's lower(): final sigma differs from medial sigma.
  EXPECT_EQ(edit_distance(Strs{"\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82"},
                          Strs{"\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3"}).at("sum_edit"),
            0.0);
  EXPECT_ERROR_CONTAINS(edit_distance(Strs{}, Strs{}), "metrics.edit_distance: empty input");
}
}  // namespace
}  // namespace t5xx::seqio::metrics
