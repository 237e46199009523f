// TemperatureSample against hand-worked cases: the greedy path, t5x's
// prompt examples (decoding.py's docstring examples 3 and 4), teacher
// forcing, EOS, max_decode_steps, and the sampling filters (topk, topp,
// temperature) checked statistically. Sampling at temperature > 0 cannot
// reproduce JAX's PRNG; it is checked by its distribution and its
// reproducibility for a generator state.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>

#include "decoding/toy_models.h"
#include "t5xx/decoding/decoding.h"
#include "t5xx/util/error.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::decoding {
namespace {

using testing::ChainModel;
using testing::Longs;
using testing::MarkovModel;

// One step's distribution over vocab 5: P = [0.1, 0.4, 0.3, 0.15, 0.05]
// whatever the token. Sorted: 0.4 (1), 0.3 (2), 0.15 (3), 0.1 (0), 0.05 (4);
// cumulative 0.4, 0.7, 0.85, 0.95, 1.0.
MarkovModel FixedDistribution() {
  std::vector<double> p = {0.1, 0.4, 0.3, 0.15, 0.05};
  return MarkovModel({p, p, p, p, p});
}

// `samples` one-token decodes of one example: the counts of each token and
// the (token -> score) pairs seen.
struct Draw {
  std::map<int64_t, int64_t> counts;
  std::map<int64_t, double> score_of;
};

Draw DrawOneToken(TemperatureSampleOptions o, int64_t samples, uint64_t seed) {
  MarkovModel model = FixedDistribution();
  o.num_decodes = samples;
  at::Generator gen = compat::MakeCpuGenerator(seed);
  DecodeResult r =
      TemperatureSample(at::zeros({1, 1}, at::kLong), model.MakeCache(1, 1), model.Fn(), 99, o, &gen);
  EXPECT_EQ(model.calls, 1);
  Draw d;
  for (int64_t j = 0; j < samples; ++j) {
    const int64_t token = r.sequences[0][j][0].item<int64_t>();
    const double score = r.scores[0][j].item<double>();
    ++d.counts[token];
    if (d.score_of.count(token)) {
      EXPECT_NEAR(d.score_of[token], score, 1e-5);
    }
    d.score_of[token] = score;
    if (j > 0) {
      EXPECT_LE(r.scores[0][j - 1].item<double>(), score) << "not ascending";
    }
  }
  return d;
}

double Frequency(const Draw& d, int64_t token, int64_t samples) {
  auto it = d.counts.find(token);
  return it == d.counts.end() ? 0.0 : static_cast<double>(it->second) / samples;
}

TEST(TemperatureSample, GreedyFollowsTheArgmax) {
  // Markov model over vocab 4, EOS = 1. Argmax path from BOS 0:
  // 0 -> 2 (0.5) -> 3 (0.6) -> 2 (0.7) -> 3 ... ; no EOS is the argmax.
  MarkovModel model({{0.0, 0.2, 0.5, 0.3},
                     {0.25, 0.25, 0.25, 0.25},
                     {0.0, 0.1, 0.3, 0.6},
                     {0.0, 0.1, 0.7, 0.2}});
  TemperatureSampleOptions o;  // topk = 1, temperature = 1: t5x's greedy
  o.rescale_log_probs = false;
  DecodeResult r = TemperatureSample(at::zeros({2, 5}, at::kLong), model.MakeCache(2, 5),
                                     model.Fn(), 1, o);
  EXPECT_TRUE(r.sequences.equal(Longs({2, 3, 2, 3, 2, 2, 3, 2, 3, 2}, {2, 1, 5})));
  // log(0.5 * 0.6 * 0.7 * 0.6 * 0.7)
  const double want = std::log(0.5 * 0.6 * 0.7 * 0.6 * 0.7);
  EXPECT_NEAR(r.scores[0][0].item<double>(), want, 1e-5);
  EXPECT_EQ(model.calls, 5);
  // Rescaled (the default), a greedy path has probability 1.
  MarkovModel again = model;
  again.calls = 0;
  o.rescale_log_probs = true;
  r = TemperatureSample(at::zeros({2, 5}, at::kLong), again.MakeCache(2, 5), again.Fn(), 1, o);
  EXPECT_NEAR(r.scores[1][0].item<double>(), 0.0, 1e-6);
  // Temperature below 1e-4 is the argmax too, whatever topk.
  o.temperature = 0.0;
  o.topk = 0;
  r = TemperatureSample(at::zeros({2, 5}, at::kLong), again.MakeCache(2, 5), again.Fn(), 1, o);
  EXPECT_TRUE(r.sequences.equal(Longs({2, 3, 2, 3, 2, 2, 3, 2, 3, 2}, {2, 1, 5})));
  EXPECT_NEAR(r.scores[1][0].item<double>(), 0.0, 1e-6);
}

TEST(TemperatureSample, EosEndsARowAndZerosTheRest) {
  // Chain 0->4->8->3->7->2->6->1(EOS). Row 1's forced 6 makes EOS its second
  // token; row 2's prompt holds an EOS, which does not end it (t5x counts
  // EOS beyond the prompt's).
  ChainModel model;
  at::Tensor inputs = Longs({0, 0, 0, 0, 0, 0, 0, 0,
                             0, 6, 0, 0, 0, 0, 0, 0,
                             0, 1, 5, 0, 0, 0, 0, 0}, {3, 8});
  TemperatureSampleOptions o;
  DecodeResult r = TemperatureSample(inputs, {}, model.Fn(), 1, o);
  EXPECT_TRUE(r.sequences.equal(Longs({4, 8, 3, 7, 2, 6, 1, 0,
                                       6, 1, 0, 0, 0, 0, 0, 0,
                                       1, 5, 9, 4, 8, 3, 7, 2}, {3, 1, 8})))
      << r.sequences;
  // Row 2 runs to the end: 8 steps. Row 1 wrote EOS at step 1, is fed it at
  // step 2 and 0s after.
  EXPECT_EQ(model.calls, 8);
  EXPECT_EQ(model.cur_tokens[2][1].item<int64_t>(), 1);
  for (int step = 3; step < 8; ++step) EXPECT_EQ(model.cur_tokens[step][1].item<int64_t>(), 0);
}

TEST(TemperatureSample, AllRowsEndedStopsEarly) {
  ChainModel model;
  TemperatureSampleOptions o;
  // 0->4->8->3->7->2->6->1: EOS as the 7th token, so 7 calls for length 12.
  DecodeResult r = TemperatureSample(at::zeros({2, 12}, at::kLong), {}, model.Fn(), 1, o);
  EXPECT_EQ(model.calls, 7);
  EXPECT_TRUE(r.sequences[1][0].equal(Longs({4, 8, 3, 7, 2, 6, 1, 0, 0, 0, 0, 0}, {12})));
}

TEST(TemperatureSample, TeacherForcedPositionsAddNoLogProb) {
  // inputs [0, 7, 0, 0]: position 1 is forced to 7 (the model says 4 there);
  // then 7->2->6->1. Only the three sampled tokens add log-probabilities.
  MarkovModel model = FixedDistribution();  // argmax is 1 everywhere
  TemperatureSampleOptions o;
  o.rescale_log_probs = false;
  DecodeResult r = TemperatureSample(Longs({0, 3, 0, 2}, {1, 4}), model.MakeCache(1, 4),
                                     model.Fn(), 99, o);
  // Positions: out 0 forced 3, out 1 sampled (1), out 2 forced 2, out 3 sampled (1).
  EXPECT_TRUE(r.sequences.equal(Longs({3, 1, 2, 1}, {1, 1, 4}))) << r.sequences;
  EXPECT_NEAR(r.scores[0][0].item<double>(), 2 * std::log(0.4), 1e-5);
}

TEST(TemperatureSample, PrefilledPromptsOfDifferentLengths) {
  // t5x decoding.py docstring example 3: inputs [[0,5,2,6,1,0],[0,8,1,0,0,0]],
  // initial_index [4, 2]. Chain: next(1)=5, next(5)=9, next(9)=4, next(4)=8.
  // Row 0 fills positions 5, 6 (a=5, c=9), then keeps overwriting the extra
  // slot; row 1 fills 3..6 (b=5, d=9, e=4, f=8). The loop index t5x passes
  // is [4,2], [5,3], [6,4], [7,5] (row 0 clamped to 6, plus one).
  ChainModel model;
  TemperatureSampleOptions o;
  o.initial_index = Longs({4, 2}, {2});
  DecodeResult r = TemperatureSample(Longs({0, 5, 2, 6, 1, 0, 0, 8, 1, 0, 0, 0}, {2, 6}), {},
                                     model.Fn(), 99, o);
  EXPECT_TRUE(r.sequences.equal(Longs({5, 2, 6, 1, 5, 9, 8, 1, 5, 9, 4, 8}, {2, 1, 6})))
      << r.sequences;
  ASSERT_EQ(model.calls, 4);
  EXPECT_TRUE(model.cur_indices[0].equal(Longs({4, 2}, {2})));
  EXPECT_TRUE(model.cur_indices[1].equal(Longs({5, 3}, {2})));
  EXPECT_TRUE(model.cur_indices[2].equal(Longs({6, 4}, {2})));
  EXPECT_TRUE(model.cur_indices[3].equal(Longs({7, 5}, {2})));
  // The first token fed is the one at initial_index: the prompts' last.
  EXPECT_TRUE(model.cur_tokens[0].equal(Longs({1, 1}, {2})));
}

TEST(TemperatureSample, PrefillWithMaxDecodeSteps) {
  // t5x docstring example 4: inputs [[0,2,0..],[0,3,4,0..]] (length 8),
  // initial_index [1, 2], max_decode_steps 2: the rows end at [3, 4]
  // tokens. Chain: next(2)=6, next(6)=1; next(4)=8, next(8)=3.
  ChainModel model;
  TemperatureSampleOptions o;
  o.initial_index = Longs({1, 2}, {2});
  o.max_decode_steps = 2;
  o.num_decodes = 2;
  DecodeResult r = TemperatureSample(
      Longs({0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 4, 0, 0, 0, 0, 0}, {2, 8}), {}, model.Fn(), 99, o);
  at::Tensor want = Longs({2, 6, 1, 0, 0, 0, 0, 0, 3, 4, 8, 3, 0, 0, 0, 0}, {2, 1, 8});
  EXPECT_TRUE(r.sequences.equal(want.expand({2, 2, 8}))) << r.sequences;
  EXPECT_EQ(model.calls, 2);
  // num_decodes expands rows b0, b0, b1, b1.
  EXPECT_TRUE(model.cur_indices[0].equal(Longs({1, 1, 2, 2}, {4})));
}

TEST(TemperatureSample, MaxDecodeStepsWithoutPrompt) {
  ChainModel model;
  TemperatureSampleOptions o;
  o.max_decode_steps = 2;
  DecodeResult r = TemperatureSample(at::zeros({1, 6}, at::kLong), {}, model.Fn(), 99, o);
  EXPECT_TRUE(r.sequences.equal(Longs({4, 8, 0, 0, 0, 0}, {1, 1, 6})));
  EXPECT_EQ(model.calls, 2);
}

TEST(TemperatureSample, TopkNeverSamplesBelowTheKth) {
  TemperatureSampleOptions o;
  o.topk = 2;  // keeps 0.4 (1) and 0.3 (2)
  const int64_t n = 4000;
  Draw d = DrawOneToken(o, n, 7);
  EXPECT_EQ(d.counts.size(), 2u);
  EXPECT_NEAR(Frequency(d, 1, n), 0.4 / 0.7, 0.03);
  EXPECT_NEAR(Frequency(d, 2, n), 0.3 / 0.7, 0.03);
  // Rescaled log-probabilities: within the kept set.
  EXPECT_NEAR(d.score_of[1], std::log(0.4 / 0.7), 1e-5);
  EXPECT_NEAR(d.score_of[2], std::log(0.3 / 0.7), 1e-5);
  o.rescale_log_probs = false;
  d = DrawOneToken(o, n, 7);
  EXPECT_NEAR(d.score_of[1], std::log(0.4), 1e-5);
  EXPECT_NEAR(d.score_of[2], std::log(0.3), 1e-5);
}

TEST(TemperatureSample, ToppKeepsTheSmallestSetReachingP) {
  TemperatureSampleOptions o;
  o.topk = 0;
  const int64_t n = 4000;
  // Cumulative 0.4, 0.7, 0.85, ...: topp 0.75 first reaches at 0.85 -> {1,2,3}.
  o.topp = 0.75;
  Draw d = DrawOneToken(o, n, 3);
  EXPECT_EQ(d.counts.size(), 3u);
  EXPECT_EQ(d.counts.count(0), 0u);
  EXPECT_EQ(d.counts.count(4), 0u);
  EXPECT_NEAR(Frequency(d, 1, n), 0.4 / 0.85, 0.03);
  EXPECT_NEAR(Frequency(d, 3, n), 0.15 / 0.85, 0.03);
  EXPECT_NEAR(d.score_of[3], std::log(0.15 / 0.85), 1e-5);
  // 0.65 is reached at 0.7 -> {1, 2}; 0.3 at 0.4 -> {1}.
  o.topp = 0.65;
  d = DrawOneToken(o, n, 3);
  EXPECT_EQ(d.counts.size(), 2u);
  EXPECT_EQ(d.counts.count(3), 0u);
  o.topp = 0.3;
  d = DrawOneToken(o, n, 3);
  EXPECT_EQ(d.counts.size(), 1u);
  EXPECT_NEAR(d.score_of[1], 0.0, 1e-6);
}

TEST(TemperatureSample, TopkKeepsTiesAtTheCut) {
  // P = [.3, .3, .3, .1]: the 2nd largest ties with the 3rd, so t5x's
  // topk_mask keeps three tokens (each 1/3), not two.
  std::vector<double> p = {0.3, 0.3, 0.3, 0.1};
  MarkovModel model({p, p, p, p});
  TemperatureSampleOptions o;
  o.topk = 2;
  o.num_decodes = 3000;
  at::Generator gen = compat::MakeCpuGenerator(4);
  DecodeResult r = TemperatureSample(at::zeros({1, 1}, at::kLong), model.MakeCache(1, 1),
                                     model.Fn(), 99, o, &gen);
  for (int64_t t = 0; t < 3; ++t) {
    EXPECT_NEAR(r.sequences.eq(t).sum().item<double>() / 3000, 1.0 / 3, 0.04) << t;
  }
  EXPECT_EQ(r.sequences.eq(3).sum().item<int64_t>(), 0);
  EXPECT_TRUE(r.scores.sub(std::log(1.0 / 3)).abs().lt(1e-5).all().item<bool>());
}

TEST(TemperatureSample, ToppOverALargeVocabulary) {
  // Vocab 300 (more than the 256-token prefix the cut looks at first):
  // tokens 5, 7, 9 have .5, .2, .2; the other 297 share .1 by distinct
  // weights. topp .85 is reached at token 9 -> {5, 7, 9}; topp .999 needs
  // more than 256 tokens -> nearly all tokens can appear.
  std::vector<double> p(300);
  double rest = 0;
  for (int i = 0; i < 300; ++i) rest += (i == 5 || i == 7 || i == 9) ? 0 : 1 + 0.01 * i;
  for (int i = 0; i < 300; ++i) p[i] = 0.1 * (1 + 0.01 * i) / rest;
  p[5] = 0.5;
  p[7] = 0.2;
  p[9] = 0.2;
  MarkovModel model(std::vector<std::vector<double>>(300, p));
  TemperatureSampleOptions o;
  o.topk = 0;
  o.topp = 0.85;
  o.num_decodes = 4000;
  at::Generator gen = compat::MakeCpuGenerator(8);
  DecodeResult r = TemperatureSample(at::zeros({1, 1}, at::kLong), model.MakeCache(1, 1),
                                     model.Fn(), 999, o, &gen);
  EXPECT_EQ(r.sequences.eq(5).sum().item<int64_t>() + r.sequences.eq(7).sum().item<int64_t>() +
                r.sequences.eq(9).sum().item<int64_t>(),
            4000);
  EXPECT_NEAR(r.sequences.eq(5).sum().item<double>() / 4000, 0.5 / 0.9, 0.03);
  o.topp = 0.999;
  o.num_decodes = 20000;
  r = TemperatureSample(at::zeros({1, 1}, at::kLong), model.MakeCache(1, 1), model.Fn(), 999, o,
                        &gen);
  EXPECT_GT(std::get<0>(at::_unique(r.sequences)).numel(), 256);
}

TEST(TemperatureSample, FullDistributionAndTemperature) {
  TemperatureSampleOptions o;
  o.topk = 0;
  const int64_t n = 8000;
  Draw d = DrawOneToken(o, n, 11);
  EXPECT_EQ(d.counts.size(), 5u);
  EXPECT_NEAR(Frequency(d, 0, n), 0.1, 0.02);
  EXPECT_NEAR(Frequency(d, 4, n), 0.05, 0.015);
  // Temperature 2: p^(1/2) normalised. sqrt: .3162 .6325 .5477 .3873 .2236
  // (sum 2.1073) -> token 4: 0.1061, token 1: 0.3001.
  o.temperature = 2.0;
  d = DrawOneToken(o, n, 11);
  EXPECT_NEAR(Frequency(d, 4, n), 0.2236 / 2.1073, 0.02);
  EXPECT_NEAR(Frequency(d, 1, n), 0.6325 / 2.1073, 0.02);
  EXPECT_NEAR(d.score_of[4], std::log(0.2236 / 2.1073), 1e-3);
}

TEST(TemperatureSample, PerExampleTemperature) {
  // Example 0 at temperature 0 (argmax 1, score 0), example 1 at 1 (all five
  // tokens), each with 2000 decodes.
  MarkovModel model = FixedDistribution();
  TemperatureSampleOptions o;
  o.topk = 0;
  o.num_decodes = 2000;
  o.temperatures = at::tensor({0.0f, 1.0f});
  at::Generator gen = compat::MakeCpuGenerator(5);
  DecodeResult r = TemperatureSample(at::zeros({2, 1}, at::kLong), model.MakeCache(2, 1),
                                     model.Fn(), 99, o, &gen);
  EXPECT_TRUE(r.sequences[0].eq(1).all().item<bool>());
  EXPECT_TRUE(r.scores[0].eq(0).all().item<bool>());
  EXPECT_EQ(std::get<0>(at::_unique(r.sequences[1])).numel(), 5);
  // A temperatures tensor of the wrong size is a user error.
  o.temperatures = at::tensor({0.0f, 1.0f, 2.0f});
  EXPECT_THROW(TemperatureSample(at::zeros({2, 1}, at::kLong), model.MakeCache(2, 1), model.Fn(),
                                 99, o, &gen),
               Error);
}

TEST(TemperatureSample, SameGeneratorStateSameSamples) {
  TemperatureSampleOptions o;
  o.topk = 0;
  o.num_decodes = 64;
  auto run = [&](uint64_t seed) {
    MarkovModel model({{0.1, 0.2, 0.3, 0.4}, {0.4, 0.3, 0.2, 0.1},
                       {0.25, 0.25, 0.25, 0.25}, {0.1, 0.6, 0.1, 0.2}});
    at::Generator gen = compat::MakeCpuGenerator(seed);
    return TemperatureSample(at::zeros({2, 6}, at::kLong), model.MakeCache(2, 6), model.Fn(), 99,
                             o, &gen);
  };
  DecodeResult a = run(1), b = run(1), c = run(2);
  EXPECT_TRUE(a.sequences.equal(b.sequences));
  EXPECT_TRUE(a.scores.equal(b.scores));
  EXPECT_FALSE(a.sequences.equal(c.sequences));
}

TEST(TemperatureSample, NumDecodesExpandsCacheAndSortsByLogProb) {
  // The cache's "id" row tells each row's example: b0, b0, b0, b1, b1, b1.
  TemperatureSampleOptions o;
  o.topk = 0;
  o.num_decodes = 3;
  o.rescale_log_probs = false;
  int calls = 0;
  TokensToLogits fn = [&calls](DecodingState& s) {
    if (calls++ == 0) {
      EXPECT_TRUE(s.cache->at("id").equal(Longs({10, 10, 10, 11, 11, 11}, {6})));
    }
    EXPECT_EQ(s.cache->at("scalar").dim(), 0);  // 0-dim entries stay as they are
    return at::zeros({s.cur_token.size(0), 6}, at::kFloat);
  };
  Cache cache{{"id", Longs({10, 11}, {2})}, {"scalar", at::scalar_tensor(3, at::kLong)}};
  at::Generator gen = compat::MakeCpuGenerator(0);
  DecodeResult r = TemperatureSample(at::zeros({2, 4}, at::kLong), cache, fn, 99, o, &gen);
  EXPECT_EQ(r.sequences.sizes(), (std::vector<int64_t>{2, 3, 4}));
  // Uniform over 6 for 4 steps: every decode has log(1/6^4).
  EXPECT_TRUE(r.scores.sub(4 * std::log(1.0 / 6)).abs().lt(1e-4).all().item<bool>());
}

TEST(TemperatureSample, UserErrors) {
  ChainModel model;
  TemperatureSampleOptions o;
  o.topp = 0.9;  // with the default topk = 1
  EXPECT_THROW(TemperatureSample(at::zeros({1, 3}, at::kLong), {}, model.Fn(), 1, o), Error);
  o = {};
  o.num_decodes = 0;
  EXPECT_THROW(TemperatureSample(at::zeros({1, 3}, at::kLong), {}, model.Fn(), 1, o), Error);
  o = {};
  o.max_decode_steps = 4;
  EXPECT_THROW(TemperatureSample(at::zeros({1, 3}, at::kLong), {}, model.Fn(), 1, o), Error);
  // A cache tensor whose dim 0 is not the batch breaks the cache contract.
  o = {};
  Cache bad{{"bias", at::zeros({1, 4})}};
  EXPECT_THROW(TemperatureSample(at::zeros({2, 3}, at::kLong), bad, model.Fn(), 1, o),
               std::invalid_argument);
}

TEST(Decode, DispatchesWithTheCallersNumDecodes) {
  // The chain reaches EOS (1) as its 7th token: 4 8 3 7 2 6 1.
  ChainModel model;
  at::Tensor best = Longs({4, 8, 3, 7, 2, 6, 1, 0}, {8});
  DecodeFnConfig config;
  config.kind = DecodeFnConfig::Kind::kBeamSearch;
  config.beam_search.num_decodes = 4;
  DecodeResult r = Decode(config, at::zeros({1, 8}, at::kLong), {}, model.Fn(), 1, 2);
  EXPECT_EQ(r.sequences.sizes(), (std::vector<int64_t>{1, 2, 8}));
  EXPECT_TRUE(r.sequences[0][1].equal(best)) << r.sequences;
  config.kind = DecodeFnConfig::Kind::kTemperatureSample;
  r = Decode(config, at::zeros({1, 8}, at::kLong), {}, model.Fn(), 1, 3);
  EXPECT_EQ(r.sequences.sizes(), (std::vector<int64_t>{1, 3, 8}));
  EXPECT_TRUE(r.sequences[0][2].equal(best)) << r.sequences;
}

}  // namespace
}  // namespace t5xx::decoding
