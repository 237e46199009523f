// Tests AttentionSoftmax (attention_softmax.h): softmax(logits + bias) and
// its gradients for logits and for biases broadcast over batch or heads,
// against the same graph in float64 through ATen's autograd; masked keys
// (t5x's -1e10 bias) get probability exactly 0 as with ATen's softmax;
// results do not depend on the thread count.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include "t5xx/kernels/attention_softmax.h"

namespace t5xx::models {
namespace {

void CheckAgainstFloat64(const std::vector<int64_t>& bias_shape) {
  at::manual_seed(61);
  const int64_t b = 2, h = 3, lq = 5, lk = 37;  // lk: 2 full lanes + 5
  const at::Tensor logits = at::randn({b, h, lq, lk}) * 4.0;
  const at::Tensor bias = at::randn(bias_shape) * 2.0;
  const at::Tensor g = at::randn({b, h, lq, lk});
  const at::Tensor lv = logits.clone().requires_grad_(true);
  const at::Tensor bv = bias.clone().requires_grad_(true);
  ASSERT_TRUE(AttentionSoftmaxFused(lv, bv));
  const at::Tensor p = AttentionSoftmax(lv, bv);
  const auto grads = torch::autograd::grad({(p * g).sum()}, {lv, bv});
  const at::Tensor l64 = logits.to(at::kDouble).requires_grad_(true);
  const at::Tensor b64 = bias.to(at::kDouble).requires_grad_(true);
  const at::Tensor p64 = at::softmax(l64 + b64, -1);
  const auto grads64 = torch::autograd::grad({(p64 * g.to(at::kDouble)).sum()}, {l64, b64});
  EXPECT_TRUE(at::allclose(p, p64.to(at::kFloat), 2e-6, 1e-7));
  EXPECT_TRUE(at::allclose(grads[0], grads64[0].to(at::kFloat), 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(grads[1], grads64[1].to(at::kFloat), 1e-5, 1e-6));
  EXPECT_EQ(grads[1].sizes(), bias.sizes());
  EXPECT_GT(grads[0].abs().sum().item<double>(), 0.1);
}

TEST(AttentionSoftmax, ValuesAndGradientsMatchFloat64) {
  CheckAgainstFloat64({2, 3, 5, 37});  // combined mask and position bias
  CheckAgainstFloat64({1, 3, 5, 37});  // position bias, shared over the batch
  CheckAgainstFloat64({2, 1, 5, 37});  // mask bias, shared over heads
  CheckAgainstFloat64({5, 37});        // fewer dimensions
}

TEST(AttentionSoftmax, MaskedKeysGetExactlyZero) {
  const at::Tensor logits = at::randn({1, 2, 4, 20});
  at::Tensor mask = at::ones({1, 1, 4, 20}, at::kBool);
  mask.index_put_({at::indexing::Ellipsis, at::indexing::Slice(15, 20)}, false);
  const at::Tensor bias = at::zeros({1, 1, 4, 20}).masked_fill(at::logical_not(mask), -1e10);
  const at::Tensor p = AttentionSoftmax(logits, bias);
  EXPECT_TRUE(at::all(p.index({at::indexing::Ellipsis, at::indexing::Slice(15, 20)}) == 0)
                  .item<bool>());
  EXPECT_TRUE(at::allclose(p, at::softmax(logits + bias, -1), 1e-6, 1e-7));
  EXPECT_TRUE(at::allclose(p.sum(-1), at::ones({1, 2, 4}), 1e-6, 0));
}

TEST(AttentionSoftmax, ResultDoesNotDependOnTheThreadCount) {
  const at::Tensor logits = at::randn({4, 6, 64, 64}).requires_grad_(true);
  const at::Tensor bias = at::randn({1, 6, 64, 64}).requires_grad_(true);
  const at::Tensor g = at::randn({4, 6, 64, 64});
  const int threads = at::get_num_threads();
  std::vector<std::vector<at::Tensor>> runs;
  for (int t : {1, 2}) {
    at::set_num_threads(t);
    const at::Tensor p = AttentionSoftmax(logits, bias);
    auto grads = torch::autograd::grad({(p * g).sum()}, {logits, bias});
    runs.push_back({p.detach(), grads[0], grads[1]});
  }
  at::set_num_threads(threads);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(at::equal(runs[0][i], runs[1][i])) << i;
}

TEST(AttentionSoftmax, WithoutBias) {
  const at::Tensor logits = (at::randn({2, 3, 4, 21}) * 3.0).requires_grad_(true);
  const at::Tensor g = at::randn({2, 3, 4, 21});
  const at::Tensor p = AttentionSoftmax(logits, at::Tensor());
  const at::Tensor grad = torch::autograd::grad({(p * g).sum()}, {logits})[0];
  const at::Tensor l64 = logits.detach().to(at::kDouble).requires_grad_(true);
  const at::Tensor p64 = at::softmax(l64, -1);
  const at::Tensor grad64 = torch::autograd::grad({(p64 * g.to(at::kDouble)).sum()}, {l64})[0];
  EXPECT_TRUE(at::allclose(p, p64.to(at::kFloat), 2e-6, 1e-7));
  EXPECT_TRUE(at::allclose(grad, grad64.to(at::kFloat), 1e-5, 1e-6));
}

TEST(AttentionSoftmax, OtherInputsUseAten) {
  const at::Tensor logits = at::randn({2, 3, 4, 5});
  const at::Tensor key_broadcast = at::randn({2, 3, 4, 1});
  EXPECT_FALSE(AttentionSoftmaxFused(logits, key_broadcast));
  EXPECT_TRUE(at::equal(AttentionSoftmax(logits, key_broadcast),
                        at::softmax(logits + key_broadcast, -1)));
  EXPECT_FALSE(AttentionSoftmaxFused(logits.to(at::kDouble), at::Tensor()));
}

}  // namespace
}  // namespace t5xx::models
