// sacrebleu's tokenizers and corpus BLEU (sacrebleu.h,
// sacrebleu_tokenizers.h) on hand-worked cases; metrics_golden_test and
// metrics_live_test.py compare many more with sacrebleu itself.
#include "t5xx/metrics/sacrebleu.h"

#include <cmath>

#include <gtest/gtest.h>

#include "test_util.h"

namespace t5xx::seqio::sacrebleu {
namespace {

TEST(Tokenize13a, SplitsAsciiPunctuationKeepsNumbersWhole) {
  EXPECT_EQ(Tokenize13a("Hello, world!"), "Hello , world !");
  // '$' splits; ',' and '.' between digits stay; the final '.' splits
  // because 13a pads the line with spaces.
  EXPECT_EQ(Tokenize13a("It costs $1,000.50."), "It costs $ 1,000.50 .");
  // '-' splits only after a digit; the apostrophe never splits.
  EXPECT_EQ(Tokenize13a("well-known 10-20 O'Neil"), "well-known 10 - 20 O'Neil");
  // Entities are unescaped only when the line has an '&', in this order.
  EXPECT_EQ(Tokenize13a("&quot;hi&quot; &amp; bye"), "\" hi \" & bye");
  EXPECT_EQ(Tokenize13a("&amp;quot;"), "& quot ;");
  // <skipped> goes, "-\n" joins, "\n" becomes a space.
  EXPECT_EQ(Tokenize13a("a<skipped>b c-\nd e\nf"), "ab cd e f");
  // Non-ASCII punctuation is not split by 13a.
  EXPECT_EQ(Tokenize13a("\xE2\x80\x9CHi\xE2\x80\x9D"), "\xE2\x80\x9CHi\xE2\x80\x9D");
  // After a match the scan resumes past both characters: "a.," -> the ','
  // is only split by the third rule ([.,][^0-9]), ". ," stays apart.
  EXPECT_EQ(Tokenize13a("a.,b"), "a . , b");
  EXPECT_EQ(Tokenize13a("   "), "");
}

TEST(TokenizeIntl, SplitsUnicodePunctuationAndSymbols) {
  EXPECT_EQ(TokenizeIntl("Hello, world!"), "Hello , world !");
  // '%' (Po) after a number stays on its right side only; "3.5" and the
  // number-final "2019." stay whole (mteval-v14's known quirk).
  EXPECT_EQ(TokenizeIntl("3.5% in 2019."), "3.5 % in 2019.");
  // U+20AC EURO SIGN is a symbol: always split.
  EXPECT_EQ(TokenizeIntl("\xE2\x82\xAC" "5"), "\xE2\x82\xAC 5");
  // Curly quotes (Pi, Pf) split.
  EXPECT_EQ(TokenizeIntl("\xE2\x80\x9CHi\xE2\x80\x9D"), "\xE2\x80\x9C Hi \xE2\x80\x9D");
  // No entity unescaping and no padding: "&quot;" splits into & quot ;
  EXPECT_EQ(TokenizeIntl("&quot;"), "& quot ;");
  // U+3000 IDEOGRAPHIC SPACE is Python whitespace; U+3002 is punctuation.
  EXPECT_EQ(TokenizeIntl("\xE6\x96\x87\xE3\x80\x80\xE6\x96\x87\xE3\x80\x82"),
            "\xE6\x96\x87 \xE6\x96\x87 \xE3\x80\x82");
}

TEST(Tokenizers, NamesAndErrors) {
  EXPECT_EQ(TokenizerFromName("intl"), Tokenizer::kIntl);
  EXPECT_EQ(TokenizerFromName("13a"), Tokenizer::k13a);
  EXPECT_EQ(Tokenize(TokenizerFromName("none"), "a,b "), "a,b ");
  EXPECT_EQ(TokenizerName(Tokenizer::k13a), "13a");
  EXPECT_ERROR_CONTAINS(TokenizerFromName("zh"), "unknown tokenizer 'zh'");
}

TEST(CorpusBleu, HandWorkedSentence) {
  // hyp "the cat sat on the mat", ref "the cat is on the mat" (6 tokens each).
  // matches: 1-grams the,the,cat,on,mat 5/6; 2-grams the cat, on the,
  // the mat 3/5; 3-grams on the mat 1/4; 4-grams 0/3 -> exp smoothing
  // 100 / (2 * 3). BLEU = 100 * (5/6 * 3/5 * 1/4 * 1/6)^(1/4) = 100 / 48^(1/4).
  const BleuScore s = CorpusBleu({"the cat sat on the mat"}, {{"the cat is on the mat"}});
  EXPECT_NEAR(s.score, 100.0 / std::pow(48.0, 0.25), 1e-12);
  EXPECT_EQ(s.counts, (std::vector<double>{5, 3, 1, 0}));
  EXPECT_EQ(s.totals, (std::vector<double>{6, 5, 4, 3}));
  EXPECT_NEAR(s.precisions[3], 100.0 / 6, 1e-12);
  EXPECT_EQ(s.bp, 1.0);
  EXPECT_EQ(s.sys_len, 6);
  EXPECT_EQ(s.ref_len, 6);
}

TEST(CorpusBleu, ClippingOverTheCorpusAndBrevityPenalty) {
  // Segment 1: hyp "the the the" vs ref "the cat": 1-gram "the" clipped to
  // 1 of 3. Segment 2: identical "a b c d e". Corpus: 1-grams (1+5)/(3+5),
  // 2-grams (0+4)/(2+4), 3-grams (0+3)/(1+3), 4-grams (0+2)/(0+2).
  // sys_len 8 >= ref_len 2 + 5 = 7 -> bp 1.
  const BleuScore s =
      CorpusBleu({"the the the", "a b c d e"}, {{"the cat", "a b c d e"}});
  EXPECT_EQ(s.counts, (std::vector<double>{6, 4, 3, 2}));
  EXPECT_EQ(s.totals, (std::vector<double>{8, 6, 4, 2}));
  const double expected = 100 * std::pow(6.0 / 8 * 4.0 / 6 * 3.0 / 4 * 2.0 / 2, 0.25);
  EXPECT_NEAR(s.score, expected, 1e-12);
  // A short hypothesis: "a b c" vs "a b c d e f": bp = exp(1 - 6/3), and
  // no 4-gram at all (total 0) makes the precision 0 -> log floor -> 0.
  const BleuScore shortened = CorpusBleu({"a b c"}, {{"a b c d e f"}});
  EXPECT_NEAR(shortened.bp, std::exp(-1.0), 1e-15);
  EXPECT_EQ(shortened.score, 0.0);
  // use_effective_order averages the orders that have n-grams: 1..3, each
  // 100% -> bp * 100.
  BleuOptions eff;
  eff.use_effective_order = true;
  EXPECT_NEAR(CorpusBleu({"a b c"}, {{"a b c d e f"}}, eff).score, 100 * std::exp(-1.0), 1e-12);
}

TEST(CorpusBleu, ClosestReferenceLengthPrefersTheShorterOnTies) {
  // hyp of 4 tokens, refs of 3 and 5: both 1 away -> 3.
  const BleuScore s = CorpusBleu({"a b c d"}, {{"a b c"}, {"a b c d e"}});
  EXPECT_EQ(s.ref_len, 3);
  // Reference n-gram counts are the maximum over the references: "x x"
  // clipped by max(1, 2) = 2.
  const BleuScore t = CorpusBleu({"x x"}, {{"x"}, {"x x"}});
  EXPECT_EQ(t.counts[0], 2.0);
}

TEST(CorpusBleu, SmoothingMethodsAndErrors) {
  // 1-grams 2/2, 2-grams 0/1: 'floor' gives 100 * 0.1 / 1 for the 2-grams;
  // orders 3 and 4 have no n-gram (break) -> score 0 without effective order.
  BleuOptions floor;
  floor.smooth_method = "floor";
  floor.use_effective_order = true;
  const BleuScore f = CorpusBleu({"a b"}, {{"a c b"}}, floor);
  EXPECT_NEAR(f.precisions[1], 10.0, 1e-12);
  // 'add-k' adds 1 to orders >= 2: 2-grams (0+1)/(1+1).
  BleuOptions addk;
  addk.smooth_method = "add-k";
  addk.use_effective_order = true;
  EXPECT_NEAR(CorpusBleu({"a b"}, {{"a c b"}}, addk).precisions[1], 50.0, 1e-12);
  // Nothing matched at all: 0 without smoothing.
  EXPECT_EQ(CorpusBleu({"p q r s"}, {{"a b c d"}}).score, 0.0);
  // Only the first min(#hyps, #refs per stream) segments count (zip).
  EXPECT_EQ(CorpusBleu({"a b c d", "zzz"}, {{"a b c d"}}).sys_len, 4);
  BleuOptions bad;
  bad.smooth_method = "linear";
  EXPECT_ERROR_CONTAINS(CorpusBleu({"a"}, {{"a"}}, bad), "unknown smooth_method 'linear'");
  EXPECT_ERROR_CONTAINS(CorpusBleu({}, {{"a"}}), "no hypotheses");
  EXPECT_ERROR_CONTAINS(CorpusBleu({"a"}, {}), "no references");
  EXPECT_ERROR_CONTAINS(CorpusBleu({"a"}, {{"a"}, {}}), "a reference stream is empty");
}

}  // namespace
}  // namespace t5xx::seqio::sacrebleu
