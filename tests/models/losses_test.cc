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
  LossOutput out = ComputeWeightedCrossEntropy(logits, targets, weights, 0.0, 1e-4, {});
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
                                               0.1, 0.0, {});
  EXPECT_NEAR(out.loss.item<double>(), 1.0132082730, 1e-6);
}

TEST(LossTest, SumsOverTokensAndNormalizes) {
  // Two identical tokens, one weighted 0: the sum counts one token.
  at::Tensor logits = at::tensor({1.0f, 2.0f, 3.0f, 1.0f, 2.0f, 3.0f}).reshape({1, 2, 3});
  at::Tensor targets = at::tensor({2, 2}, at::kLong).reshape({1, 2});
  at::Tensor weights = at::tensor({1.0f, 0.0f}).reshape({1, 2});
  const double ce = 3.4076059644 - 3.0;
  LossOutput sum = ComputeWeightedCrossEntropy(logits, targets, weights, 0, 0, {});
  EXPECT_NEAR(sum.loss.item<double>(), ce, 1e-6);
  EXPECT_DOUBLE_EQ(sum.correct.item<double>(), 1.0);
  LossNormalizingFactor total = LossNormalizingFactor::Parse("NUM_TOTAL_TARGET_TOKENS", "x");
  EXPECT_NEAR(ComputeWeightedCrossEntropy(logits, targets, weights, 0, 0, total)
                  .loss.item<double>(), ce / 2, 1e-6);
  LossNormalizingFactor c = LossNormalizingFactor::Parse("233472", "x");
  EXPECT_NEAR(ComputeWeightedCrossEntropy(logits, targets, weights, 0, 0, c)
                  .loss.item<double>(), ce / 233472, 1e-10);
}

TEST(LossTest, GradientIncludesZLoss) {
  at::Tensor logits = at::tensor({1.0f, 2.0f, 3.0f}).reshape({1, 1, 3}).set_requires_grad(true);
  at::Tensor targets = at::tensor({0}, at::kLong).reshape({1, 1});
  ComputeWeightedCrossEntropy(logits, targets, at::ones({1, 1}), 0.0, 0.5, {}).loss.backward();
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
