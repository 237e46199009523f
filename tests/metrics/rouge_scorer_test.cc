// rouge-score's RougeScorer and tokenizer (rouge_scorer.h) on hand-worked
// cases; metrics_golden_test and metrics_live_test.py compare many more
// with rouge-score itself.
#include "t5xx/metrics/rouge_scorer.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace t5xx::seqio::rouge_scorer {
namespace {

using Strs = std::vector<std::string>;

TEST(RougeTokenize, LowercasesAndKeepsOnlyAsciiAlphanumerics) {
  EXPECT_EQ(Tokenize("Don't STOP-believing: 100%!", false),
            (Strs{"don", "t", "stop", "believing", "100"}));
  // Non-ASCII letters are separators: "Café" -> "caf"; U+0130 lowers to
  // "i" + U+0307 and the Kelvin sign U+212A to "k", so both survive.
  EXPECT_EQ(Tokenize("Caf\xC3\xA9 \xC4\xB0stanbul \xE2\x84\xAA", false),
            (Strs{"caf", "i", "stanbul", "k"}));
  EXPECT_EQ(Tokenize("  ...  ", false), Strs{});
  // With the stemmer only tokens longer than 3 characters are stemmed:
  // "believing" -> "believ", "runs" -> "run", "ran" (3) stays.
  EXPECT_EQ(Tokenize("believing runs ran", true), (Strs{"believ", "run", "ran"}));
}

TEST(RougeScorer, NGramsAndLcsHandWorked) {
  const RougeScorer scorer({"rouge1", "rouge2", "rougeL"});
  // target "the cat sat", prediction "the cat ran": unigrams 2 of 3 each
  // way; bigrams "the cat" 1 of 2; LCS "the cat" = 2.
  const auto s = scorer.score("the cat sat", "the cat ran");
  EXPECT_DOUBLE_EQ(s.at("rouge1").precision, 2.0 / 3);
  EXPECT_DOUBLE_EQ(s.at("rouge1").recall, 2.0 / 3);
  EXPECT_DOUBLE_EQ(s.at("rouge1").fmeasure, 2 * (2.0 / 3) * (2.0 / 3) / (4.0 / 3));
  EXPECT_DOUBLE_EQ(s.at("rouge2").fmeasure, 0.5);
  EXPECT_DOUBLE_EQ(s.at("rougeL").recall, 2.0 / 3);
  // Clipped counts: target "a a b", prediction "a a a": unigrams min(2,3)
  // = 2 -> P 2/3, R 2/3; bigrams "a a" min(1,2) = 1 -> P 1/2, R 1/2.
  const auto c = scorer.score("a a b", "a a a");
  EXPECT_DOUBLE_EQ(c.at("rouge1").precision, 2.0 / 3);
  EXPECT_DOUBLE_EQ(c.at("rouge2").recall, 0.5);
  // An empty side scores 0 everywhere.
  const auto e = scorer.score("", "words");
  EXPECT_EQ(e.at("rouge1").fmeasure, 0.0);
  EXPECT_EQ(e.at("rougeL").fmeasure, 0.0);
}

TEST(RougeScorer, SummaryLevelLcsHandWorked) {
  const RougeScorer scorer({"rougeLsum"});
  // Target sentences [a b c], [d e]; prediction [a c], [d x e].
  // [a b c]: LCS with [a c] = {a, c}, with [d x e] none -> 2 hits.
  // [d e]: LCS with [d x e] = {d, e} -> 2 hits. 4 hits over 5 and 5 tokens.
  const auto s = scorer.score("a b c\nd e", "a c\nd x e").at("rougeLsum");
  EXPECT_DOUBLE_EQ(s.precision, 0.8);
  EXPECT_DOUBLE_EQ(s.recall, 0.8);
  // No double counting: target "a a" against prediction lines "a", "a":
  // the union LCS of the target sentence is one index -> 1 hit of 2.
  const auto d = scorer.score("a a", "a\na").at("rougeLsum");
  EXPECT_DOUBLE_EQ(d.recall, 0.5);
  EXPECT_DOUBLE_EQ(d.precision, 0.5);
  // Without newlines the whole text is one sentence (plain LCS).
  const auto one = scorer.score("a b c d", "d c b a").at("rougeLsum");
  EXPECT_DOUBLE_EQ(one.fmeasure, 0.25);
  // Empty lines are dropped; a text of only newlines has no sentences.
  EXPECT_EQ(scorer.score("\n\n", "a").at("rougeLsum").fmeasure, 0.0);
}

TEST(RougeScorer, BadTypes) {
  EXPECT_ERROR_CONTAINS(RougeScorer({"rouge0"}), "invalid rouge type 'rouge0'");
  EXPECT_ERROR_CONTAINS(RougeScorer({"rougeLSum"}), "invalid rouge type 'rougeLSum'");
  EXPECT_ERROR_CONTAINS(RougeScorer({}), "no rouge types");
  EXPECT_EQ(RougeScorer({"rouge9"}).score("a b c d e f g h i", "a b c d e f g h i")
                .at("rouge9").fmeasure,
            1.0);
}

TEST(FMeasure, ZeroWhenBothZero) {
  EXPECT_EQ(FMeasure(0, 0), 0.0);
  EXPECT_DOUBLE_EQ(FMeasure(0.5, 1.0), 2 * 0.5 * 1.0 / 1.5);
}

}  // namespace
}  // namespace t5xx::seqio::rouge_scorer
