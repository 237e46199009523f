// Remat (activation checkpointing) must not change values or gradients: the
// reference is the same computation without Remat, run through autograd.
#include "t5xx/models/networks/remat.h"

#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

#include "t5xx/models/networks/layers.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::models {
namespace {

TEST(RematTest, SameOutputAndGradientsAsWithout) {
  at::Generator init = compat::MakeCpuGenerator(7);
  at::Tensor w1 = at::randn({8, 16}, init).set_requires_grad(true);
  at::Tensor w2 = at::randn({16, 8}, init).set_requires_grad(true);
  at::Tensor x0 = at::randn({4, 8}, init).set_requires_grad(true);
  auto block = [&](const at::Tensor& x, at::Generator* rng) {
    return x + at::matmul(Dropout(at::gelu(at::matmul(x, w1)), 0.3, true, rng), w2);
  };
  // Reference: plain autograd, dropout from a generator seeded 11.
  at::Generator g_ref = compat::MakeCpuGenerator(11);
  at::Tensor ref = block(block(x0, &g_ref), &g_ref);
  ref.pow(2).sum().backward();
  at::Tensor gw1 = w1.grad().clone(), gw2 = w2.grad().clone(), gx = x0.grad().clone();
  w1.mutable_grad().zero_();
  w2.mutable_grad().zero_();
  x0.mutable_grad().zero_();

  // Remat per block, same generator seed: identical masks in forward and in
  // the recomputation.
  at::Generator g = compat::MakeCpuGenerator(11);
  auto rematted = [&](const at::Tensor& x) {
    return Remat([&](const std::vector<at::Tensor>& in) { return block(in[0], &g); }, {x}, &g);
  };
  at::Tensor out = rematted(rematted(x0));
  EXPECT_TRUE(at::equal(out.detach(), ref.detach()));
  out.pow(2).sum().backward();
  EXPECT_TRUE(at::allclose(w1.grad(), gw1, 1e-6, 1e-6));
  EXPECT_TRUE(at::allclose(w2.grad(), gw2, 1e-6, 1e-6));
  EXPECT_TRUE(at::allclose(x0.grad(), gx, 1e-6, 1e-6));
  // The generator continues where the forward pass left it (the
  // recomputation restores its state afterwards).
  at::Generator g_after = compat::MakeCpuGenerator(11);
  block(block(x0.detach(), &g_after), &g_after);
  EXPECT_TRUE(at::equal(at::rand({3}, g), at::rand({3}, g_after)));
}

TEST(RematTest, WithoutGradModeIsThePlainCall) {
  at::NoGradGuard no_grad;
  at::Tensor x = at::ones({2});
  int calls = 0;
  at::Tensor y = Remat([&](const std::vector<at::Tensor>& in) { ++calls; return in[0] * 3; },
                       {x}, nullptr);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(at::equal(y, at::full({2}, 3.0)));
}

}  // namespace
}  // namespace t5xx::models
