// Tests AttentionMatmul (attention_matmul.h): values and gradients equal
// at::matmul's (reference: the same graph in float64 through at::matmul's
// autograd, rounded to float32), the combine-heads reshape of a
// heads_inner_out result is a view, gradients keep the inputs' layouts, and
// operands it does not take (bfloat16, broadcast batches) go to at::matmul.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include "t5xx/kernels/attention_matmul.h"
#include "t5xx/kernels/cpu/cpu_batched_gemm.h"

namespace t5xx::models {
namespace {

// The [B, L, H*D] projection viewed as heads [B, H, L, D], as AttentionHeads does.
at::Tensor Heads(const at::Tensor& projected, int64_t heads) {
  const int64_t b = projected.size(0), l = projected.size(1), d = projected.size(2) / heads;
  return projected.view({b, l, heads, d}).transpose(1, 2);
}

TEST(AttentionMatmul, ValuesAndGradientsEqualMatmul) {
  if (!device::CpuBatchedMatmulAvailable()) GTEST_SKIP() << "built without oneDNN's sgemm";
  at::manual_seed(21);
  const int64_t b = 2, h = 3, lq = 5, lk = 7, d = 4;
  const at::Tensor q_in = at::randn({b, lq, h * d}).requires_grad_(true);
  const at::Tensor k_in = at::randn({b, lk, h * d}).requires_grad_(true);
  const at::Tensor v_in = at::randn({b, lk, h * d}).requires_grad_(true);
  const at::Tensor q = Heads(q_in, h), k = Heads(k_in, h), v = Heads(v_in, h);
  ASSERT_TRUE(AttentionMatmulFused(q, k.transpose(-2, -1)));
  const at::Tensor logits = AttentionMatmul(q, k.transpose(-2, -1), false);
  const at::Tensor probs = at::softmax(logits, -1);
  const at::Tensor mixed = AttentionMatmul(probs, v, /*heads_inner_out=*/true);
  // Combine heads: a view of the result's memory.
  EXPECT_TRUE(mixed.transpose(1, 2).is_contiguous());
  const at::Tensor out = mixed.transpose(1, 2).reshape({b, lq, h * d});
  const at::Tensor weights = at::randn({b, lq, h * d});
  const auto grads = torch::autograd::grad({(out * weights).sum()}, {q_in, k_in, v_in});

  // The same graph in float64 through at::matmul.
  const at::Tensor q64 = q_in.detach().to(at::kDouble).requires_grad_(true);
  const at::Tensor k64 = k_in.detach().to(at::kDouble).requires_grad_(true);
  const at::Tensor v64 = v_in.detach().to(at::kDouble).requires_grad_(true);
  const at::Tensor p64 =
      at::softmax(at::matmul(Heads(q64, h), Heads(k64, h).transpose(-2, -1)), -1);
  const at::Tensor out64 =
      at::matmul(p64, Heads(v64, h)).transpose(1, 2).reshape({b, lq, h * d});
  const auto grads64 =
      torch::autograd::grad({(out64 * weights.to(at::kDouble)).sum()}, {q64, k64, v64});

  EXPECT_TRUE(at::allclose(out, out64.to(at::kFloat), 1e-5, 1e-5));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(at::allclose(grads[i], grads64[i].to(at::kFloat), 1e-4, 1e-5)) << "input " << i;
    EXPECT_GT(grads[i].abs().sum().item<double>(), 0.1) << "input " << i;
  }
}

TEST(AttentionMatmul, GradientsKeepTheHeadViewsLayout) {
  if (!device::CpuBatchedMatmulAvailable()) GTEST_SKIP() << "built without oneDNN's sgemm";
  const at::Tensor q_in = at::randn({2, 6, 8}).requires_grad_(true);
  const at::Tensor q = Heads(q_in, 2);  // [2, 2, 6, 4] over [2, 6, 2, 4] memory
  at::Tensor q_grad;
  const at::Tensor x = at::randn({2, 2, 4, 6});
  const at::Tensor y = AttentionMatmul(q, x, false);
  // Capture the gradient reaching q itself (before the view's backward).
  q.register_hook([&](const at::Tensor& g) { q_grad = g; });
  y.sum().backward();
  ASSERT_TRUE(q_grad.defined());
  EXPECT_EQ(q_grad.strides(), q.strides());
}

TEST(AttentionMatmul, OtherOperandsGoToMatmul) {
  const at::Tensor a = at::randn({2, 3, 4, 5}).to(at::kBFloat16);
  const at::Tensor b = at::randn({2, 3, 5, 6}).to(at::kBFloat16);
  EXPECT_FALSE(AttentionMatmulFused(a, b));
  EXPECT_TRUE(at::equal(AttentionMatmul(a, b, true), at::matmul(a, b)));
  const at::Tensor af = at::randn({2, 3, 4, 5}), bcast = at::randn({1, 3, 5, 6});
  EXPECT_FALSE(AttentionMatmulFused(af, bcast));
  EXPECT_TRUE(at::equal(AttentionMatmul(af, bcast, false), at::matmul(af, bcast)));
}

}  // namespace
}  // namespace t5xx::models
