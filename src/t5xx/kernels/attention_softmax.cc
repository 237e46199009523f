// See attention_softmax.h.
#include "t5xx/kernels/attention_softmax.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <vector>

#include "t5xx/kernels/cpu/cpu_row_max.h"
#include "t5xx/kernels/cpu/cpu_vector_math.h"
#include "t5xx/kernels/cpu/intra_op_parallel.h"
#include "t5xx/kernels/cpu/tensor_offsets.h"

namespace t5xx::models {
namespace {


// p = softmax(l + b) over one row of n (b may be null).
T5XX_CPU_CLONES
void ForwardRow(const float* l, const float* b, float* p, int64_t n) {
  // v = l + b into p; then the maximum.
  if (b != nullptr) {
    for (int64_t i = 0; i < n; ++i) p[i] = l[i] + b[i];
  } else {
    for (int64_t i = 0; i < n; ++i) p[i] = l[i];
  }
  // e = exp(v - max), summed in kSumLanes partial sums.
  const float sum = device::ExpShiftedSum(p, n, device::RowMax(p, n));
  const float inv = 1.0f / sum;
  for (int64_t k = 0; k < n; ++k) p[k] *= inv;
}

// dl = p (g - sum(g p)) over one row of n.
T5XX_CPU_CLONES
void BackwardRow(const float* p, const float* g, float* dl, int64_t n) {
  const float dot = device::DotLanes(g, p, n);
  for (int64_t k = 0; k < n; ++k) dl[k] = (g[k] - dot) * p[k];
}

class AttentionSoftmaxFunction : public torch::autograd::Function<AttentionSoftmaxFunction> {
 public:
  // has_bias false: bias_in is a placeholder (libtorch 1.13's apply does
  // not take undefined tensors).
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits_in,
                            const at::Tensor& bias_in, bool has_bias) {
    RECORD_USER_SCOPE("t5xx::attention_softmax");  // a row in bench/step_profile's per-op profile
    const at::Tensor logits = logits_in.contiguous();
    const int64_t n = logits.size(-1), rows = n == 0 ? 0 : logits.numel() / n;
    at::Tensor probs = at::empty(logits.sizes(), logits.options());
    const float* pl = logits.data_ptr<float>();
    float* pp = probs.data_ptr<float>();
    const float* pb = nullptr;
    std::vector<int64_t> bias_rows;
    at::Tensor bias;
    if (has_bias) {
      bias = bias_in.contiguous();
      bias_rows = device::LeadingOffsets(bias.expand(logits.sizes()), 1);
      pb = bias.data_ptr<float>();
      ctx->saved_data["bias_sizes"] = bias_in.sizes().vec();
    }
    device::IntraOpParallelFor(rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        ForwardRow(pl + r * n, pb == nullptr ? nullptr : pb + bias_rows[r], pp + r * n, n);
      }
    });
    ctx->save_for_backward({probs});
    return probs;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const at::Tensor probs = ctx->get_saved_variables()[0];
    const at::Tensor g = grad_out[0].contiguous();
    const int64_t n = probs.size(-1), rows = n == 0 ? 0 : probs.numel() / n;
    at::Tensor dlogits = at::empty(probs.sizes(), probs.options());
    const float* pp = probs.data_ptr<float>();
    const float* pg = g.data_ptr<float>();
    float* pd = dlogits.data_ptr<float>();
    device::IntraOpParallelFor(rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) BackwardRow(pp + r * n, pg + r * n, pd + r * n, n);
    });
    at::Tensor dbias;
    if (ctx->saved_data.count("bias_sizes") != 0 && ctx->needs_input_grad(1)) {
      dbias = dlogits.sum_to_size(ctx->saved_data["bias_sizes"].toIntVector());
    }
    return {dlogits, dbias, at::Tensor()};
  }
};

}  // namespace

bool AttentionSoftmaxFused(const at::Tensor& logits, const at::Tensor& bias) {
  if (!(logits.dim() >= 1 && logits.is_cpu() && logits.scalar_type() == at::kFloat)) return false;
  if (!bias.defined()) return true;
  if (!(bias.is_cpu() && bias.scalar_type() == at::kFloat && bias.dim() <= logits.dim() &&
        bias.dim() >= 1 && bias.size(-1) == logits.size(-1))) {
    return false;
  }
  for (int64_t d = 1; d <= bias.dim(); ++d) {
    const int64_t bs = bias.size(-d), ls = logits.size(-d);
    if (bs != ls && bs != 1) return false;
  }
  return true;
}

at::Tensor AttentionSoftmax(const at::Tensor& logits, const at::Tensor& bias) {
  if (!AttentionSoftmaxFused(logits, bias)) {
    return at::softmax(bias.defined() ? logits + bias : logits, -1);
  }
  if (!bias.defined()) {
    return AttentionSoftmaxFunction::apply(logits, at::empty({0}, logits.options()), false);
  }
  return AttentionSoftmaxFunction::apply(logits, bias, true);
}

}  // namespace t5xx::models
