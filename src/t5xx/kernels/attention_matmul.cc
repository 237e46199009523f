// See attention_matmul.h.
#include "t5xx/kernels/attention_matmul.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include "t5xx/kernels/cpu/cpu_batched_gemm.h"

namespace t5xx::models {
namespace {

class CpuBatchedMatmulFunction : public torch::autograd::Function<CpuBatchedMatmulFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& a,
                            const at::Tensor& b, bool heads_inner_out) {
    RECORD_USER_SCOPE("t5xx::attention_matmul");  // a row in bench/step_profile's per-op profile
    ctx->save_for_backward({a, b});
    const int64_t batch = a.size(0), heads = a.size(1), m = a.size(2), n = b.size(3);
    at::Tensor out = heads_inner_out
                         ? at::empty({batch, m, heads, n}, a.options()).transpose(1, 2)
                         : at::empty({batch, heads, m, n}, a.options());
    device::CpuBatchedMatmulInto(a, b, out);
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& a = saved[0];
    const at::Tensor& b = saved[1];
    const at::Tensor& g = grad_out[0];
    at::Tensor ga, gb;
    if (ctx->needs_input_grad(0)) {  // g @ b^T
      ga = at::empty_like(a, at::MemoryFormat::Preserve);
      device::CpuBatchedMatmulInto(g, b.transpose(-2, -1), ga);
    }
    if (ctx->needs_input_grad(1)) {  // a^T @ g
      gb = at::empty_like(b, at::MemoryFormat::Preserve);
      device::CpuBatchedMatmulInto(a.transpose(-2, -1), g, gb);
    }
    return {ga, gb, at::Tensor()};
  }
};

}  // namespace

bool AttentionMatmulFused(const at::Tensor& a, const at::Tensor& b) {
  return a.dim() == 4 && b.dim() == 4 && a.is_cpu() && b.is_cpu() &&
         a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat &&
         a.size(0) == b.size(0) && a.size(1) == b.size(1) && a.size(3) == b.size(2) &&
         device::CpuBatchedMatmulAvailable();
}

at::Tensor AttentionMatmul(const at::Tensor& a, const at::Tensor& b, bool heads_inner_out) {
  if (!AttentionMatmulFused(a, b)) return at::matmul(a, b);
  return CpuBatchedMatmulFunction::apply(a, b, heads_inner_out);
}

}  // namespace t5xx::models
