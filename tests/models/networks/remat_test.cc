// Remat (activation checkpointing) must not change values or gradients: the
// reference is the same computation without Remat, run through autograd.
#include "t5xx/models/networks/remat.h"

#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "t5xx/models/networks/decoder_only_network.h"
#include "t5xx/models/networks/layers.h"
#include "t5xx/models/networks/t5_config.h"
#include "t5xx/util/error.h"
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

// save_dots (remat_policy 'minimal'): the weight matmuls run once, in the
// forward call, and their kept outputs serve the recomputation; the
// gradients are plain autograd's.
TEST(RematTest, SaveDotsComputesEachWeightMatmulOnce) {
  at::Generator init = compat::MakeCpuGenerator(3);
  at::Tensor w1 = at::randn({8, 16}, init).set_requires_grad(true);
  at::Tensor w2 = at::randn({16, 8}, init).set_requires_grad(true);
  at::Tensor x0 = at::randn({2, 4, 8}, init).set_requires_grad(true);
  int matmuls = 0;
  auto dot = [&](const at::Tensor& a, const at::Tensor& b) {
    return SavedDot(a, b, [&] {
      ++matmuls;
      return at::matmul(a, b);
    });
  };
  auto block = [&](const at::Tensor& x) { return x + dot(at::gelu(dot(x * 2, w1)), w2); };
  at::Tensor ref = block(block(x0));
  ref.pow(2).sum().backward();
  EXPECT_EQ(matmuls, 4);
  const at::Tensor gw1 = w1.grad().clone(), gw2 = w2.grad().clone(), gx = x0.grad().clone();
  w1.mutable_grad().zero_();
  w2.mutable_grad().zero_();
  x0.mutable_grad().zero_();
  for (const bool save_dots : {true, false}) {
    SCOPED_TRACE(save_dots);
    matmuls = 0;
    auto rematted = [&](const at::Tensor& x) {
      return Remat([&](const std::vector<at::Tensor>& in) { return block(in[0]); }, {x}, nullptr,
                   save_dots);
    };
    at::Tensor out = rematted(rematted(x0));
    EXPECT_TRUE(at::equal(out.detach(), ref.detach()));
    out.pow(2).sum().backward();
    // 4 in the forward calls; the recomputations add none (kept) or 4.
    EXPECT_EQ(matmuls, save_dots ? 4 : 8);
    EXPECT_TRUE(at::allclose(w1.grad(), gw1, 1e-6, 1e-6));
    EXPECT_TRUE(at::allclose(w2.grad(), gw2, 1e-6, 1e-6));
    EXPECT_TRUE(at::allclose(x0.grad(), gx, 1e-6, 1e-6));
    w1.mutable_grad().zero_();
    w2.mutable_grad().zero_();
    x0.mutable_grad().zero_();
  }
}

// A policy t5x does not have is refused naming the three it has.
TEST(RematTest, UnknownPolicyIsRefusedNamingT5xsPolicies) {
  T5Config t5;
  t5.remat_policy = "dots_saveable";
  DecoderOnlyConfig lm;
  lm.remat_policy = "Full";
  for (const std::function<void()>& validate :
       std::vector<std::function<void()>>{[&] { t5.Validate(); }, [&] { lm.Validate(); }}) {
    try {
      validate();
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("remat_policy"), std::string::npos) << m;
      EXPECT_NE(m.find("'none', 'minimal'"), std::string::npos) << m;
      EXPECT_NE(m.find("'full'"), std::string::npos) << m;
    }
  }
  t5.remat_policy = "minimal";
  lm.remat_policy = "minimal";
  EXPECT_NO_THROW(t5.Validate());
  EXPECT_NO_THROW(lm.Validate());
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
