// Tests for t5xx::seqio::metrics: the 'metrics' cases of T5XX_TESTVECTORS
// (from t5/evaluation/metrics_test.py) plus hand-worked cases.
#include "t5xx/data/metrics.h"

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

}  // namespace
}  // namespace t5xx::seqio::metrics
