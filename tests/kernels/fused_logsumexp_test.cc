// Tests FusedLogSumExp (fused_logsumexp.h) against ATen's logsumexp, gather
// and argmax: values, the gradient of a loss using both lse and the target
// logit (reference: the same graph in float64 through ATen's autograd),
// argmax's first-index tie rule, NaN propagation (the train loop's NaN
// check relies on it), thread-count independence and bad targets.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <string>

#include "t5xx/kernels/fused_logsumexp.h"
#include "t5xx/util/error.h"

namespace t5xx::models {
namespace {

TEST(FusedLogSumExp, MatchesAtenValuesAndGradients) {
  at::manual_seed(71);
  // V = 1001: 62 full lanes + 9; logits spread like a trained model's.
  const at::Tensor logits = at::randn({3, 7, 1001}) * 5.0;
  const at::Tensor targets = at::randint(0, 1001, {3, 7}, at::kLong);
  const at::Tensor x = logits.clone().requires_grad_(true);
  const LogSumExpPieces p = FusedLogSumExp(x, targets);
  // A t5x-like per-token loss: lse - target + z * lse^2.
  const at::Tensor w = at::rand({3, 7});
  const auto grad =
      torch::autograd::grad({((p.lse - p.target_logit + 1e-4 * p.lse.pow(2)) * w).sum()}, {x})[0];

  const at::Tensor x64 = logits.to(at::kDouble).requires_grad_(true);
  const at::Tensor lse64 = at::logsumexp(x64, {-1});
  const at::Tensor t64 = x64.gather(-1, targets.unsqueeze(-1)).squeeze(-1);
  const auto grad64 = torch::autograd::grad(
      {((lse64 - t64 + 1e-4 * lse64.pow(2)) * w.to(at::kDouble)).sum()}, {x64})[0];

  EXPECT_TRUE(at::allclose(p.lse, lse64.to(at::kFloat), 1e-6, 1e-6));
  EXPECT_TRUE(at::equal(p.target_logit, logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)));
  EXPECT_TRUE(at::equal(p.argmax, logits.argmax(-1)));
  EXPECT_TRUE(at::allclose(grad, grad64.to(at::kFloat), 1e-5, 1e-7));
  EXPECT_GT(grad.abs().sum().item<double>(), 1.0);
}

TEST(FusedLogSumExp, ArgmaxTakesTheFirstMaximum) {
  at::Tensor logits = at::zeros({2, 40});
  logits[0][33] = 3.0;
  logits[0][17] = 3.0;  // same maximum in another lane, earlier
  logits[0][2] = 3.0;   // and earlier still, in a third lane
  logits[1][39] = 1.0;  // in the remainder past the full lanes
  const LogSumExpPieces p = FusedLogSumExp(logits, at::zeros({2}, at::kLong));
  EXPECT_EQ(p.argmax[0].item<int64_t>(), 2);
  EXPECT_EQ(p.argmax[1].item<int64_t>(), 39);
  EXPECT_TRUE(at::equal(p.argmax, logits.argmax(-1)));
}

TEST(FusedLogSumExp, NanPropagates) {
  at::Tensor logits = at::randn({2, 50});
  logits[1][7] = std::nanf("");
  const LogSumExpPieces p = FusedLogSumExp(logits, at::zeros({2}, at::kLong));
  EXPECT_TRUE(std::isfinite(p.lse[0].item<float>()));
  EXPECT_TRUE(std::isnan(p.lse[1].item<float>()));
}

TEST(FusedLogSumExp, ResultDoesNotDependOnTheThreadCount) {
  const at::Tensor logits = at::randn({64, 3000}).requires_grad_(true);
  const at::Tensor targets = at::randint(0, 3000, {64}, at::kLong);
  const int threads = at::get_num_threads();
  std::vector<at::Tensor> lse, grads;
  for (int t : {1, 2}) {
    at::set_num_threads(t);
    const LogSumExpPieces p = FusedLogSumExp(logits, targets);
    grads.push_back(torch::autograd::grad({(p.lse * 2 - p.target_logit).sum()}, {logits})[0]);
    lse.push_back(p.lse.detach());
  }
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(lse[0], lse[1]));
  EXPECT_TRUE(at::equal(grads[0], grads[1]));
}

TEST(FusedLogSumExp, TargetOutsideTheVocabularyIsNamed) {
  try {
    FusedLogSumExp(at::randn({2, 10}), at::tensor({3, 12}, at::kLong));
    FAIL() << "accepted target 12 of a 10-entry vocabulary";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("target 12"), std::string::npos) << what;
    EXPECT_NE(what.find("[0, 10)"), std::string::npos) << what;
  }
  EXPECT_FALSE(FusedLogSumExpApplies(at::randn({2, 10}).to(at::kDouble), at::zeros({2}, at::kLong)));
  EXPECT_FALSE(FusedLogSumExpApplies(at::randn({2, 10}), at::zeros({3}, at::kLong)));
}

}  // namespace
}  // namespace t5xx::models
