// BeamSearch against searches worked out by hand on first-order Markov
// models (tests/decoding/toy_models.h): logits = log P(next | cur_token), so
// log_softmax gives back log P. Token 1 is EOS; token 0 never has
// probability. Brevity penalty bp(len) = ((5 + len) / 6)^alpha; the early
// stop compares the best live log-prob / bp(max_decode_len + 1) with the
// worst finished score. -1e7 is t5x's NEG_INF (its float32 sums with small
// log-probs round to -1e7 - 1 or so, below every real score).
#include <gtest/gtest.h>

#include <cmath>

#include "decoding/toy_models.h"
#include "t5xx/decoding/decoding.h"
#include "t5xx/util/error.h"

namespace t5xx::decoding {
namespace {

using testing::Longs;
using testing::MarkovModel;

double Bp(double alpha, int len) { return std::pow((5.0 + len) / 6.0, alpha); }

void ExpectScores(const at::Tensor& scores, std::vector<double> want) {
  ASSERT_EQ(scores.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(scores.view(-1)[i].item<double>(), want[i], 2e-5) << "score " << i;
  }
}

// From BOS: EOS .5, 2 .45, 3 .05. After 2: EOS .9, 2 .05, 3 .05. After 3:
// EOS .6, 2 .2, 3 .2.
MarkovModel BrevityModel() {
  return MarkovModel({{0, 0.5, 0.45, 0.05},
                      {0.25, 0.25, 0.25, 0.25},
                      {0, 0.9, 0.05, 0.05},
                      {0, 0.6, 0.2, 0.2}});
}

// 2 beams, length 4 (bp bound uses len 5).
// Step 0: candidates (top 4 of beam 0, then the dead beam 1):
//   EOS ln.5 = -0.6931, 2 ln.45 = -0.7985, 3 ln.05 = -2.9957, dead EOS.
//   Live: [3, 2] (ascending). Finished: "1" with -0.6931 / bp(1) = -0.6931
//   (bp(1) = 1 for every alpha) and an empty slot.
// Step 1 (the empty slot keeps the search going):
//   from 2 (-0.7985): 2 EOS -0.7985 + ln.9 = -0.9039, 2 2 / 2 3 -3.7942;
//   from 3 (-2.9957): 3 EOS -3.5066, 3 2 / 3 3 -4.6052.
//   Live: [2 3, 2 2] at -3.7942. New finished: "2 1" (len 2) -0.9039 and
//   "3 1" -3.5066, each / bp(2) = (7/6)^alpha.
// Step 2: best live -3.7942 / bp(5) is below the worst finished for
//   alpha 0, 0.6 and 2 -> stop after 2 calls of the 4 allowed.
// The brevity penalty decides between "1" (-0.6931) and "2 1" (-0.9039):
//   alpha 0:   -0.9039 < -0.6931 -> "1" best.
//   alpha 0.6: -0.9039 / 1.0969 = -0.8241 < -0.6931 -> "1" best.
//   alpha 2:   -0.9039 / 1.3611 = -0.6641 > -0.6931 -> "2 1" best.
TEST(BeamSearch, BrevityPenaltyDecidesAndEarlyStop) {
  const double short_lp = std::log(0.5), long_lp = std::log(0.45 * 0.9);
  for (double alpha : {0.0, 0.6}) {
    SCOPED_TRACE(alpha);
    MarkovModel model = BrevityModel();
    BeamSearchOptions o;
    o.num_decodes = 2;
    o.alpha = alpha;
    DecodeResult r = BeamSearch(at::zeros({1, 4}, at::kLong), model.MakeCache(1, 5), model.Fn(), 1, o);
    EXPECT_TRUE(r.sequences.equal(Longs({2, 1, 0, 0, 1, 0, 0, 0}, {1, 2, 4}))) << r.sequences;
    ExpectScores(r.scores, {long_lp / Bp(alpha, 2), short_lp});
    EXPECT_EQ(model.calls, 2);
  }
  MarkovModel model = BrevityModel();
  BeamSearchOptions o;
  o.num_decodes = 2;
  o.alpha = 2.0;
  DecodeResult r = BeamSearch(at::zeros({1, 4}, at::kLong), model.MakeCache(1, 5), model.Fn(), 1, o);
  EXPECT_TRUE(r.sequences.equal(Longs({1, 0, 0, 0, 2, 1, 0, 0}, {1, 2, 4}))) << r.sequences;
  ExpectScores(r.scores, {short_lp, long_lp / Bp(2.0, 2)});
  EXPECT_EQ(model.calls, 2);
}

TEST(BeamSearch, LargerBoundKeepsSearching) {
  // Length 20 and alpha 2: the bound divides the best live log-prob
  // (-3.7942 at step 2) by ((5 + 21) / 6)^2 = 18.78 -> -0.2021, above the
  // worst finished (-0.6931): the search goes on. With alpha 0 it stops at
  // step 2 as above.
  MarkovModel a = BrevityModel(), b = BrevityModel();
  BeamSearchOptions o;
  o.num_decodes = 2;
  o.alpha = 0.0;
  BeamSearch(at::zeros({1, 20}, at::kLong), a.MakeCache(1, 21), a.Fn(), 1, o);
  EXPECT_EQ(a.calls, 2);
  o.alpha = 2.0;
  BeamSearch(at::zeros({1, 20}, at::kLong), b.MakeCache(1, 21), b.Fn(), 1, o);
  EXPECT_GT(b.calls, 2);
}

// No EOS ever. From BOS: 2 .7, 3 .3. After 2: 2 .6, 3 .4. After 3: .5/.5.
MarkovModel NoEosModel() {
  return MarkovModel({{0, 0, 0.7, 0.3},
                      {0, 0, 0.5, 0.5},
                      {0, 0, 0.6, 0.4},
                      {0, 0, 0.5, 0.5}});
}

TEST(BeamSearch, NothingFinishedReturnsLiveBeams) {
  // Step 0: live [3 (-1.2040), 2 (-0.3567)].
  // Step 1: 2 2 -0.8675, 2 3 -1.2730, 3 2 / 3 3 -1.8971 -> live [2 3, 2 2].
  // Step 2: 2 2 2 -1.3783, 2 2 3 -1.7838, 2 3 x -1.9661 -> [2 2 3, 2 2 2].
  MarkovModel model = NoEosModel();
  BeamSearchOptions o;
  o.num_decodes = 2;
  DecodeResult r = BeamSearch(at::zeros({1, 3}, at::kLong), model.MakeCache(1, 4), model.Fn(), 1, o);
  EXPECT_TRUE(r.sequences.equal(Longs({2, 2, 3, 2, 2, 2}, {1, 2, 3}))) << r.sequences;
  ExpectScores(r.scores, {std::log(0.7 * 0.6 * 0.4), std::log(0.7 * 0.6 * 0.6)});
  EXPECT_EQ(model.calls, 3);
}

TEST(BeamSearch, MinLogProbAndMaxDecodeStepStopEarly) {
  // Length 5; the best live log-probs are -0.3567, -0.8675, -1.3783 after
  // steps 0, 1, 2: min_log_prob -1 stops the search before step 3.
  MarkovModel model = NoEosModel();
  BeamSearchOptions o;
  o.num_decodes = 2;
  o.alpha = 0.0;
  o.min_log_prob = -1.0;
  DecodeResult r = BeamSearch(at::zeros({1, 5}, at::kLong), model.MakeCache(1, 6), model.Fn(), 1, o);
  EXPECT_EQ(model.calls, 3);
  EXPECT_TRUE(r.sequences.equal(Longs({2, 2, 3, 0, 0, 2, 2, 2, 0, 0}, {1, 2, 5}))) << r.sequences;
  // max_decode_step 1: one step, live [3, 2].
  MarkovModel one = NoEosModel();
  o = {};
  o.num_decodes = 2;
  o.max_decode_step = 1;
  r = BeamSearch(at::zeros({1, 5}, at::kLong), one.MakeCache(1, 6), one.Fn(), 1, o);
  EXPECT_EQ(one.calls, 1);
  EXPECT_TRUE(r.sequences.equal(Longs({3, 0, 0, 0, 0, 2, 0, 0, 0, 0}, {1, 2, 5}))) << r.sequences;
  ExpectScores(r.scores, {std::log(0.3), std::log(0.7)});
}

TEST(BeamSearch, ForcedInputsKeepOneBeamAndAddNothing) {
  // inputs [0, 3, 0, 0]: output position 0 is forced to 3 and scored 0
  // (t5x keeps only the top candidate alive inside a prompt). Alpha 0.
  // Step 1 from 3 (lp 0): 3 EOS -0.5108, 3 2 / 3 3 -1.6094 -> finished
  //   "3 1", live [3 3, 3 2].
  // Step 2: 3 2 EOS -1.6094 + ln.9 = -1.7148, 3 3 EOS -2.1203, 3 3 x -3.2189
  //   -> finished [3 2 1, 3 1]; step 3's bound -3.2189 < -1.7148: stop.
  MarkovModel model = BrevityModel();
  BeamSearchOptions o;
  o.num_decodes = 2;
  o.alpha = 0.0;
  DecodeResult r = BeamSearch(Longs({0, 3, 0, 0}, {1, 4}), model.MakeCache(1, 5), model.Fn(), 1, o);
  EXPECT_TRUE(r.sequences.equal(Longs({3, 2, 1, 0, 3, 1, 0, 0}, {1, 2, 4}))) << r.sequences;
  ExpectScores(r.scores, {std::log(0.2 * 0.9), std::log(0.6)});
  EXPECT_EQ(model.calls, 3);
}

TEST(BeamSearch, PrefilledPromptIsCopiedToTheOutput) {
  // inputs [0, 5, 2, 0, 0, 0], initial_index 2: decoding starts from the
  // prompt's last token 2 at loop step 0 and the output is prompt +
  // continuation. After 2: EOS .9, 2 .05, 3 .05; after 3: EOS .6, .2, .2.
  // Step 0: "2 1" finished (-0.1054, length 2 + 1 = 3), live [2 3, 2 2].
  // Step 1: 2 2 EOS -2.9957 - 0.1054 = -3.1011 (length 4), 2 3 EOS -3.5066,
  //   2 3 x -4.6052 -> finished [2 2 1, 2 1]; the bound stops step 2.
  for (double alpha : {0.0, 0.6}) {
    SCOPED_TRACE(alpha);
    MarkovModel model({{0, 0.5, 0.5, 0, 0, 0},
                       {0, 1, 0, 0, 0, 0},
                       {0, 0.9, 0.05, 0.05, 0, 0},
                       {0, 0.6, 0.2, 0.2, 0, 0},
                       {0, 1, 0, 0, 0, 0},
                       {0, 1, 0, 0, 0, 0}});
    BeamSearchOptions o;
    o.num_decodes = 2;
    o.alpha = alpha;
    o.initial_index = Longs({2}, {1});
    DecodeResult r =
        BeamSearch(Longs({0, 5, 2, 0, 0, 0}, {1, 6}), model.MakeCache(1, 7), model.Fn(), 1, o);
    EXPECT_TRUE(r.sequences.equal(Longs({5, 2, 2, 1, 0, 0, 5, 2, 1, 0, 0, 0}, {1, 2, 6})))
        << r.sequences;
    ExpectScores(r.scores, {std::log(0.05 * 0.9) / Bp(alpha, 4), std::log(0.9) / Bp(alpha, 3)});
    ASSERT_EQ(model.calls, 2);
    EXPECT_TRUE(model.cur_tokens[0].equal(Longs({2, 2}, {2})));
    EXPECT_TRUE(model.cur_indices[0].equal(Longs({0, 0}, {2})));
    EXPECT_TRUE(model.cur_indices[1].equal(Longs({1, 1}, {2})));
  }
}

TEST(BeamSearch, CacheFollowsTheBeamsAcrossABatch) {
  // Two examples, 3 beams, a denser model: MarkovModel checks at every call
  // that each row's cache ("fed") holds the tokens of that row's sequence.
  MarkovModel model({{0, 0.1, 0.3, 0.2, 0.4},
                     {0.2, 0.2, 0.2, 0.2, 0.2},
                     {0, 0.2, 0.1, 0.4, 0.3},
                     {0, 0.1, 0.5, 0.1, 0.3},
                     {0, 0.3, 0.3, 0.2, 0.2}});
  BeamSearchOptions o;
  o.num_decodes = 3;
  DecodeResult r = BeamSearch(Longs({0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0}, {2, 6}),
                              model.MakeCache(2, 7), model.Fn(), 1, o);
  EXPECT_EQ(r.sequences.sizes(), (std::vector<int64_t>{2, 3, 6}));
  // Ascending scores; example 1's output starts with its forced 4.
  EXPECT_TRUE((r.scores.select(1, 1) >= r.scores.select(1, 0)).all().item<bool>());
  EXPECT_TRUE((r.scores.select(1, 2) >= r.scores.select(1, 1)).all().item<bool>());
  EXPECT_TRUE(r.sequences[1].select(1, 0).eq(4).all().item<bool>());
}

TEST(BeamSearch, UserErrors) {
  MarkovModel model = NoEosModel();
  BeamSearchOptions o;
  o.num_decodes = 0;
  EXPECT_THROW(BeamSearch(at::zeros({1, 3}, at::kLong), model.MakeCache(1, 4), model.Fn(), 1, o), Error);
  o.num_decodes = 2;
  o.initial_index = Longs({1, 1}, {2});
  EXPECT_THROW(BeamSearch(at::zeros({1, 3}, at::kLong), model.MakeCache(1, 4), model.Fn(), 1, o), Error);
}

}  // namespace
}  // namespace t5xx::decoding
