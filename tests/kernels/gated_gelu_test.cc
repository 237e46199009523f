// Tests GatedGelu (gated_gelu.h): values and gradients of gelu_tanh(a0) * a1
// against the tanh formula of jax.nn.gelu(approximate=True) evaluated in
// float64 (0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) times a1, and its
// autograd gradients), thread-count independence, and the ATen fallback for
// other dtypes.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>

#include "t5xx/kernels/gated_gelu.h"

namespace t5xx::models {
namespace {

at::Tensor GeluTanh64(const at::Tensor& x) {
  return 0.5 * x * (1.0 + at::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x.pow(3))));
}

TEST(GatedGelu, ValuesAndGradientsMatchTheTanhFormula) {
  at::manual_seed(31);
  // Typical activations, plus the tails (very negative x, where 1 + tanh
  // cancels, and large x) and exact zero. 40000 elements: several chunks.
  at::Tensor x = at::randn({100, 400}) * 3.0;
  x.index_put_({0, at::indexing::Slice(0, 5)},
               at::tensor({-12.0f, -6.0f, 0.0f, 8.0f, 30.0f}));
  const at::Tensor y = at::randn({100, 400});
  const at::Tensor a0 = x.clone().requires_grad_(true), a1 = y.clone().requires_grad_(true);
  ASSERT_TRUE(GatedGeluFused(a0, a1));
  const at::Tensor h = GatedGelu(a0, a1);
  const at::Tensor g = at::randn({100, 400});
  const auto grads = torch::autograd::grad({(h * g).sum()}, {a0, a1});

  const at::Tensor x64 = x.to(at::kDouble).requires_grad_(true);
  const at::Tensor y64 = y.to(at::kDouble).requires_grad_(true);
  const at::Tensor h64 = GeluTanh64(x64) * y64;
  const auto grads64 = torch::autograd::grad({(h64 * g.to(at::kDouble)).sum()}, {x64, y64});

  // float32 rounding of a few operations and ExpApprox: ~1e-6 relative.
  EXPECT_TRUE(at::allclose(h, h64.to(at::kFloat), 2e-6, 1e-7));
  EXPECT_TRUE(at::allclose(grads[0], grads64[0].to(at::kFloat), 5e-6, 1e-7));
  EXPECT_TRUE(at::allclose(grads[1], grads64[1].to(at::kFloat), 2e-6, 1e-7));
  // The tails: gelu(-12) is about -1e-32 times y, gelu(30) = 30.
  EXPECT_EQ(h[0][2].item<float>(), 0.0f);
  EXPECT_NEAR(h[0][4].item<float>(), 30.0f * y[0][4].item<float>(), 1e-5);
  EXPECT_LT(std::fabs(h[0][0].item<float>()), 1e-30f);
  // And the fused values agree with ATen's own gelu.
  EXPECT_TRUE(at::allclose(h, at::gelu(x, "tanh") * y, 1e-5, 1e-6));
}

TEST(GatedGelu, ResultDoesNotDependOnTheThreadCount) {
  const at::Tensor x = at::randn({70000}), y = at::randn({70000});
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const at::Tensor one = GatedGelu(x, y);
  at::set_num_threads(2);
  const at::Tensor two = GatedGelu(x, y);
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one, two));
}

TEST(GatedGelu, OtherDtypesUseAten) {
  const at::Tensor x = at::randn({4, 8}).to(at::kBFloat16), y = at::randn({4, 8}).to(at::kBFloat16);
  EXPECT_FALSE(GatedGeluFused(x, y));
  EXPECT_TRUE(at::equal(GatedGelu(x, y), at::gelu(x, "tanh") * y));
}

}  // namespace
}  // namespace t5xx::models
