// cuDNN's fused attention with T5's bias gradient (kernels/cudnn_attention.h)
// against the same attention computed in float32 with libtorch's plain ops
// (matmul, masked softmax, matmul; autograd for the gradients) from the same
// bfloat16 inputs: output and the q, k, v and bias gradients within
// bfloat16 tolerance, for odd shapes, padding lengths, causal masking, with
// and without a bias. These run on a GPU (T5XX_TEST_DEVICE=cuda,
// scripts/gpu_perf_check.sh) in a build that has the kernel, and skip
// elsewhere saying why; everywhere the refusals are checked.
#include "t5xx/kernels/cudnn_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <string>

#include <torch/csrc/autograd/autograd.h>

#include "test_device.h"
#include "t5xx/util/error.h"

namespace t5xx::kernels {
namespace {

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no t5xx::Error>";
}

TEST(CudnnAttentionTest, RefusesWhatItCannotRun) {
  const at::Tensor cpu = at::zeros({1, 2, 4, 8}, at::kBFloat16);
  const std::string msg = ErrorOf([&] { CudnnAttention(cpu, cpu, cpu, {}, {}, {}, false); });
  if (!HaveCudnnAttention()) {
    EXPECT_NE(msg.find("built without cuDNN's fused attention"), std::string::npos) << msg;
  } else {
    EXPECT_NE(msg.find("one CUDA device"), std::string::npos) << msg;
  }
}

// The reference: float32 attention of the bf16 inputs (scale 1), keys at
// or past kv_len[b] and (causal) later keys masked, query rows at or past
// q_len[b] zero (cuDNN's padding semantics).
at::Tensor Reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     const at::Tensor& bias, const at::Tensor& q_len, const at::Tensor& kv_len,
                     bool causal) {
  const int64_t b = q.size(0), lq = q.size(2), lk = k.size(2);
  at::Tensor logits = at::matmul(q.to(at::kFloat), k.to(at::kFloat).transpose(-2, -1));
  if (bias.defined()) logits = logits + bias.to(at::kFloat);
  const auto opts = at::TensorOptions(q.device()).dtype(at::kLong);
  at::Tensor masked = at::zeros({b, 1, lq, lk}, q.options().dtype(at::kBool));
  const at::Tensor key = at::arange(lk, opts).view({1, 1, 1, lk});
  const at::Tensor query = at::arange(lq, opts).view({1, 1, lq, 1});
  if (kv_len.defined()) masked = masked | (key >= kv_len.to(at::kLong).view({b, 1, 1, 1}));
  if (causal) masked = masked | (key > query);
  logits = logits.masked_fill(masked, -std::numeric_limits<float>::infinity());
  at::Tensor out = at::matmul(at::softmax(logits, -1), v.to(at::kFloat));
  if (q_len.defined()) {
    out = out.masked_fill(query >= q_len.to(at::kLong).view({b, 1, 1, 1}), 0.0);
  }
  return out;
}

struct Case {
  int64_t b, h, lq, lk, d;
  bool bias, lengths, causal;
};

void ExpectMatchesReference(const Case& c) {
  if (!test_device::OnGpu()) GTEST_SKIP() << "needs T5XX_TEST_DEVICE=cuda";
  if (!HaveCudnnAttention()) GTEST_SKIP() << "this build has no cuDNN fused attention";
  const at::Device dev = test_device::TestDevice();
  at::manual_seed(7);
  const auto bf = at::TensorOptions(dev).dtype(at::kBFloat16);
  at::Tensor q = at::randn({c.b, c.h, c.lq, c.d}, bf).requires_grad_();
  at::Tensor k = at::randn({c.b, c.h, c.lk, c.d}, bf).requires_grad_();
  at::Tensor v = at::randn({c.b, c.h, c.lk, c.d}, bf).requires_grad_();
  at::Tensor bias;
  if (c.bias) bias = at::randn({1, c.h, c.lq, c.lk}, bf).requires_grad_();
  at::Tensor q_len, kv_len;
  if (c.lengths) {
    q_len = at::randint(1, c.lq + 1, {c.b}, at::TensorOptions(dev).dtype(at::kInt));
    kv_len = at::randint(1, c.lk + 1, {c.b}, at::TensorOptions(dev).dtype(at::kInt));
  }
  const at::Tensor dout = at::randn({c.b, c.h, c.lq, c.d}, bf);
  const at::Tensor out = CudnnAttention(q, k, v, bias, q_len, kv_len, c.causal);
  const at::Tensor ref = Reference(q, k, v, bias, q_len, kv_len, c.causal);
  auto grads = [&](const at::Tensor& o) {
    std::vector<at::Tensor> inputs = {q, k, v};
    if (c.bias) inputs.push_back(bias);
    return torch::autograd::grad({o}, inputs, {dout.to(o.scalar_type())}, true);
  };
  const auto g = grads(out), gr = grads(ref);
  auto expect_close = [](const at::Tensor& a, const at::Tensor& r, const char* what) {
    const at::Tensor x = a.to(at::kFloat).cpu(), y = r.to(at::kFloat).cpu();
    // bfloat16: 8 bits of mantissa; the output, then the gradients through it.
    const double tol = 2e-2 * std::max(1.0, y.abs().max().item<double>());
    EXPECT_LE((x - y).abs().max().item<double>(), tol) << what;
  };
  expect_close(out, ref, "out");
  const char* names[] = {"dq", "dk", "dv", "dbias"};
  for (size_t i = 0; i < g.size(); ++i) expect_close(g[i], gr[i], names[i]);
}

TEST(CudnnAttentionTest, EncoderSelfAttentionWithBiasAndPadding) {
  ExpectMatchesReference({3, 4, 37, 37, 64, true, true, false});
}
TEST(CudnnAttentionTest, DecoderSelfAttentionCausalWithBias) {
  ExpectMatchesReference({2, 3, 53, 53, 64, true, false, true});
}
TEST(CudnnAttentionTest, CrossAttentionWithoutBiasPaddedKeys) {
  ExpectMatchesReference({2, 4, 19, 61, 64, false, true, false});
}

}  // namespace
}  // namespace t5xx::kernels
