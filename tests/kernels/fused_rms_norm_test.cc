// Tests FusedRmsNorm (fused_rms_norm.h): values and gradients of t5x's
// LayerNorm, x * rsqrt(mean(x^2) + eps) * scale, against the formula in
// float64 through ATen's autograd; thread-count independence; odd widths
// (not a multiple of the 16 partial sums) and row counts (not a multiple of
// the 32-row blocks).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include "t5xx/kernels/fused_rms_norm.h"
#include "t5xx/util/error.h"

namespace t5xx::models {
namespace {

void CheckAgainstFormula(const std::vector<int64_t>& shape, double eps) {
  at::manual_seed(41);
  const at::Tensor x = at::randn(shape) * 2.0 + 0.5;
  const at::Tensor scale = at::rand({shape.back()}) + 0.5;
  const at::Tensor g = at::randn(shape);
  const at::Tensor xv = x.clone().requires_grad_(true), sv = scale.clone().requires_grad_(true);
  const at::Tensor y = FusedRmsNorm(xv, sv, eps);
  const auto grads = torch::autograd::grad({(y * g).sum()}, {xv, sv});

  const at::Tensor x64 = x.to(at::kDouble).requires_grad_(true);
  const at::Tensor s64 = scale.to(at::kDouble).requires_grad_(true);
  const at::Tensor y64 = x64 * at::rsqrt(x64.pow(2).mean({-1}, true) + eps) * s64;
  const auto grads64 = torch::autograd::grad({(y64 * g.to(at::kDouble)).sum()}, {x64, s64});

  EXPECT_TRUE(at::allclose(y, y64.to(at::kFloat), 2e-6, 1e-6));
  EXPECT_TRUE(at::allclose(grads[0], grads64[0].to(at::kFloat), 1e-5, 1e-5));
  // dscale sums over all rows: float32 error grows with their number.
  EXPECT_TRUE(at::allclose(grads[1], grads64[1].to(at::kFloat), 1e-5, 1e-4));
  EXPECT_GT(grads[1].abs().sum().item<double>(), 1.0);
}

TEST(FusedRmsNorm, ValuesAndGradientsMatchTheFormula) {
  CheckAgainstFormula({4, 50, 64}, 1e-6);   // 200 rows: 7 blocks, the last partial
  CheckAgainstFormula({3, 37}, 1e-6);       // width 37: 2 full lanes + 5
  CheckAgainstFormula({130, 7}, 1e-2);      // narrower than the lanes; a large eps
}

TEST(FusedRmsNorm, ResultDoesNotDependOnTheThreadCount) {
  const at::Tensor x = at::randn({300, 96}).requires_grad_(true);
  const at::Tensor scale = at::rand({96}).requires_grad_(true);
  const at::Tensor g = at::randn({300, 96});
  const int threads = at::get_num_threads();
  std::vector<std::vector<at::Tensor>> runs;
  for (int t : {1, 2}) {
    at::set_num_threads(t);
    const at::Tensor y = FusedRmsNorm(x, scale, 1e-6);
    auto grads = torch::autograd::grad({(y * g).sum()}, {x, scale});
    runs.push_back({y.detach(), grads[0], grads[1]});
  }
  at::set_num_threads(threads);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(at::equal(runs[0][i], runs[1][i])) << i;
}

TEST(FusedRmsNorm, OtherInputsAreRefused) {
  EXPECT_FALSE(FusedRmsNormApplies(at::randn({2, 4}).to(at::kBFloat16), at::ones({4})));
  EXPECT_FALSE(FusedRmsNormApplies(at::randn({2, 4}), at::ones({5})));
  EXPECT_THROW(FusedRmsNorm(at::randn({2, 4}), at::ones({5}), 1e-6), Error);
}

}  // namespace
}  // namespace t5xx::models
