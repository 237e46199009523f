#include "t5xx/models/losses.h"

#include <gtest/gtest.h>

#include "t5xx/util/error.h"

namespace t5xx::models {
namespace {

// logits (1, 2, 3), target 1:
// lse = 3 + ln(1 + e^-1 + e^-2) = 3.4076059644; ce = lse - 2 = 1.4076059644
// z = 1e-4 * lse^2 = 0.0011611778
TEST(LossTest, CrossEntropyWithZLossByHand) {
  at::Tensor logits = at::tensor({1.0f, 2.0f, 3.0f}).reshape({1, 1, 3});
  at::Tensor targets = at::tensor({1}, at::kLong).reshape({1, 1});
  at::Tensor weights = at::ones({1, 1});
  LossOutput out = ComputeWeightedCrossEntropy(logits, targets, weights, 0.0, 1e-4, LossNormalizingFactor{});
  EXPECT_NEAR(out.loss.item<double>(), 1.4076059644 + 0.0011611778, 1e-6);
  EXPECT_NEAR(out.z_loss.item<double>(), 0.0011611778, 1e-8);
  EXPECT_NEAR(out.cross_ent_loss.item<double>(), 1.4076059644, 1e-6);
  EXPECT_DOUBLE_EQ(out.correct.item<double>(), 0.0);
}

// Label smoothing 0.1 over V=3: soft targets (0.05, 0.9, 0.05); loss =
// -sum q log_softmax - normalizing_constant with
// nc = -(0.9 ln 0.9 + 2 * 0.05 ln 0.05) = 0.3943847; result 1.0132082730.
TEST(LossTest, LabelSmoothingByHand) {
  at::Tensor logits = at::tensor({1.0f, 2.0f, 3.0f}).reshape({1, 1, 3});
  at::Tensor targets = at::tensor({1}, at::kLong).reshape({1, 1});
  LossOutput out = ComputeWeightedCrossEntropy(logits, targets, at::ones({1, 1}),
                                               0.1, 0.0, LossNormalizingFactor{});
  EXPECT_NEAR(out.loss.item<double>(), 1.0132082730, 1e-6);
}

TEST(LossTest, SumsOverTokensAndNormalizes) {
  // Two identical tokens, one weighted 0: the sum counts one token.
  at::Tensor logits = at::tensor({1.0f, 2.0f, 3.0f, 1.0f, 2.0f, 3.0f}).reshape({1, 2, 3});
  at::Tensor targets = at::tensor({2, 2}, at::kLong).reshape({1, 2});
  at::Tensor weights = at::tensor({1.0f, 0.0f}).reshape({1, 2});
  const double ce = 3.4076059644 - 3.0;
  LossOutput sum = ComputeWeightedCrossEntropy(logits, targets, weights, 0, 0, LossNormalizingFactor{});
  EXPECT_NEAR(sum.loss.item<double>(), ce, 1e-6);
  EXPECT_DOUBLE_EQ(sum.correct.item<double>(), 1.0);
  LossNormalizingFactor total = LossNormalizingFactor::Parse("NUM_TOTAL_TARGET_TOKENS", "x");
  EXPECT_NEAR(ComputeWeightedCrossEntropy(logits, targets, weights, 0, 0, total)
                  .loss.item<double>(), ce / 2, 1e-6);
  LossNormalizingFactor c = LossNormalizingFactor::Parse("233472", "x");
  EXPECT_NEAR(ComputeWeightedCrossEntropy(logits, targets, weights, 0, 0, c)
                  .loss.item<double>(), ce / 233472, 1e-10);
}

// GetLossNormalizingFactorAndWeights against the cases of t5x's
// t5x/losses_test.py (inputs and expected values as written there).
TEST(LossTest, NormalizingFactorAndWeightsAsT5x) {
  at::Tensor targets = at::tensor({1, 2, 3, 4, 0, 5, 6, 0, 0, 0}, at::kLong).reshape({2, 5});
  auto lnf = [](const char* s) { return LossNormalizingFactor::Parse(s, "test"); };
  // NUM_REAL_TARGET_TOKENS without weights: targets > 0 -> 6 tokens.
  NormalizedLossWeights w = GetLossNormalizingFactorAndWeights(lnf("NUM_REAL_TARGET_TOKENS"),
                                                               targets, at::Tensor());
  EXPECT_DOUBLE_EQ(w.factor, 6.0);
  // NUM_TOTAL_TARGET_TOKENS: 2 x 5.
  w = GetLossNormalizingFactorAndWeights(lnf("NUM_TOTAL_TARGET_TOKENS"), targets, at::Tensor());
  EXPECT_DOUBLE_EQ(w.factor, 10.0);
  EXPECT_TRUE(at::equal(w.weights, at::tensor({1.f, 1.f, 1.f, 1.f, 0.f, 1.f, 1.f, 0.f, 0.f, 0.f}).reshape({2, 5})));
  // test_average_per_sequence: factor 2, rows scaled to sum 1.
  w = GetLossNormalizingFactorAndWeights(lnf("AVERAGE_PER_SEQUENCE"), targets, at::Tensor());
  EXPECT_NEAR(w.factor, 2.0, 1e-6);
  EXPECT_TRUE(at::allclose(
      w.weights, at::tensor({.25f, .25f, .25f, .25f, 0.f, .5f, .5f, 0.f, 0.f, 0.f}).reshape({2, 5})));
  // test_average_per_sequence_with_weights.
  at::Tensor weights = at::tensor({0.5f, 1.0f, 0.25f, 2.0f, 0.f, 1.f, 1.f, 0.f, 0.f, 0.f})
                           .reshape({2, 5});
  w = GetLossNormalizingFactorAndWeights(lnf("AVERAGE_PER_SEQUENCE"), targets, weights);
  EXPECT_NEAR(w.factor, 2.0, 1e-6);
  EXPECT_TRUE(at::allclose(w.weights, at::tensor({0.5f / 3.75f, 1.0f / 3.75f, 0.25f / 3.75f,
                                                  2.0f / 3.75f, 0.f, .5f, .5f, 0.f, 0.f, 0.f})
                                          .reshape({2, 5})));
  // test_average_per_sequence_with_weights_with_packing: per segment; the
  // padding position (segment 0) gets weight 0 although its input weight is 5.
  at::Tensor packed_targets =
      at::tensor({1, 2, 3, 4, 5, 5, 6, 7, 8, 0}, at::kLong).reshape({2, 5});
  at::Tensor packed_weights = at::tensor({0.5f, 1.0f, 0.25f, 2.0f, 1.5f, 1.f, 2.f, 3.f, 4.f, 5.f})
                                  .reshape({2, 5});
  at::Tensor segments = at::tensor({1, 1, 1, 2, 3, 1, 2, 2, 3, 0}, at::kLong).reshape({2, 5});
  w = GetLossNormalizingFactorAndWeights(lnf("AVERAGE_PER_SEQUENCE"), packed_targets,
                                         packed_weights, segments);
  EXPECT_NEAR(w.factor, 6.0, 1e-6);
  EXPECT_TRUE(at::allclose(
      w.weights, at::tensor({0.5f / 1.75f, 1.0f / 1.75f, 0.25f / 1.75f, 1.f, 1.f, 1.f, 0.4f, 0.6f,
                             1.f, 0.f})
                     .reshape({2, 5})));
  EXPECT_EQ(lnf("AVERAGE_PER_SEQUENCE").ToString(), "AVERAGE_PER_SEQUENCE");
  // None: factor 1, weights as given.
  w = GetLossNormalizingFactorAndWeights(LossNormalizingFactor{}, targets, weights);
  EXPECT_DOUBLE_EQ(w.factor, 1.0);
  EXPECT_TRUE(at::equal(w.weights, weights));
}

// The loss under AVERAGE_PER_SEQUENCE is the mean over sequences of each
// sequence's mean token loss. Uniform logits over V=4: every token's
// cross-entropy is ln 4, so the loss is ln 4 whatever the lengths.
TEST(LossTest, AveragePerSequenceLossIsMeanOfSequenceMeans) {
  at::Tensor targets = at::tensor({1, 2, 3, 0, 1, 0, 0, 0}, at::kLong).reshape({2, 4});
  at::Tensor logits = at::zeros({2, 4, 4});
  LossOutput out = ComputeWeightedCrossEntropy(
      logits, targets, at::Tensor(), 0.0, 0.0, LossNormalizingFactor::Parse("AVERAGE_PER_SEQUENCE", "t"));
  EXPECT_NEAR(out.loss.item<double>(), std::log(4.0), 1e-6);
}

TEST(LossTest, GradientIncludesZLoss) {
  at::Tensor logits = at::tensor({1.0f, 2.0f, 3.0f}).reshape({1, 1, 3}).set_requires_grad(true);
  at::Tensor targets = at::tensor({0}, at::kLong).reshape({1, 1});
  ComputeWeightedCrossEntropy(logits, targets, at::ones({1, 1}), 0.0, 0.5, LossNormalizingFactor{}).loss.backward();
  // d/dl (lse - l_0 + 0.5 lse^2) = softmax * (1 + lse) - onehot_0
  at::Tensor sm = at::softmax(logits.detach(), -1);
  const double lse = 3.4076059644;
  at::Tensor expected = sm * (1 + lse);
  expected[0][0][0] -= 1.0;
  EXPECT_TRUE(at::allclose(logits.grad(), expected, 1e-5, 1e-6));
}

TEST(LossTest, BadNormalizingFactorIsAClearError) {
  try {
    LossNormalizingFactor::Parse("'HALF'", "models.EncoderDecoderModel.loss_normalizing_factor");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("got ''HALF''"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace t5xx::models
