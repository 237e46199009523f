// See cudnn_attention.h: the checks, the autograd function and the
// dispatch to kernels/cuda/cudnn_sdpa.cc (in a build that has it).
#include "t5xx/kernels/cudnn_attention.h"

#include <c10/util/StringUtil.h>
#include <torch/csrc/autograd/custom_function.h>

#include "t5xx/util/error.h"

#if T5XX_WITH_CUDNN_FRONTEND
#include "t5xx/kernels/cuda/cudnn_sdpa.h"
#endif

namespace t5xx::kernels {
namespace {

// The argument rules of CudnnAttention (see the header).
void CheckArguments(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                    const at::Tensor& bias, const at::Tensor& q_lengths,
                    const at::Tensor& kv_lengths) {
  const std::string what = "CudnnAttention: ";
  T5XX_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4,
             what + "q, k, v must be [B, H, L, D]; got " + c10::str(q.sizes()) + ", " +
                 c10::str(k.sizes()) + ", " + c10::str(v.sizes()));
  T5XX_CHECK(q.is_cuda() && k.device() == q.device() && v.device() == q.device(),
             what + "q, k and v must be on one CUDA device");
  T5XX_CHECK((q.scalar_type() == at::kBFloat16 || q.scalar_type() == at::kHalf) &&
                 k.scalar_type() == q.scalar_type() && v.scalar_type() == q.scalar_type(),
             what + "q, k and v must all be bfloat16 or all float16");
  T5XX_CHECK(k.size(0) == q.size(0) && v.size(0) == q.size(0) && k.size(1) == q.size(1) &&
                 v.size(1) == q.size(1) && k.size(3) == q.size(3) && v.size(2) == k.size(2),
             what + "shapes disagree: q " + c10::str(q.sizes()) + ", k " + c10::str(k.sizes()) +
                 ", v " + c10::str(v.sizes()));
  T5XX_CHECK(q.stride(3) == 1 && k.stride(3) == 1 && v.stride(3) == 1,
             what + "the head dim must be contiguous");
  if (bias.defined()) {
    T5XX_CHECK(bias.dim() == 4 && bias.size(0) == 1 && bias.size(1) == q.size(1) &&
                   bias.size(2) == q.size(2) && bias.size(3) == k.size(2) &&
                   bias.scalar_type() == q.scalar_type() && bias.device() == q.device() &&
                   bias.stride(3) == 1,
               what + "bias must be [1, H, Lq, Lk] in q's dtype on q's device, last dim "
                      "contiguous; got " + c10::str(bias.sizes()));
  }
  T5XX_CHECK(q_lengths.defined() == kv_lengths.defined(),
             what + "give both q_lengths and kv_lengths, or neither");
  if (q_lengths.defined()) {
    for (const at::Tensor* t : {&q_lengths, &kv_lengths}) {
      T5XX_CHECK(t->dim() == 1 && t->size(0) == q.size(0) && t->scalar_type() == at::kInt &&
                     t->device() == q.device() && t->is_contiguous(),
                 what + "lengths must be int32 [B] on q's device; got " + c10::str(t->sizes()));
    }
  }
}

#if T5XX_WITH_CUDNN_FRONTEND
class CudnnAttentionFunction : public torch::autograd::Function<CudnnAttentionFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& q_in,
                            const at::Tensor& k_in, const at::Tensor& v_in,
                            const at::Tensor& bias, const at::Tensor& q_lengths,
                            const at::Tensor& kv_lengths, bool causal) {
    const at::Tensor q = q_in.contiguous(), k = k_in.contiguous(), v = v_in.contiguous();
    const cuda::SdpaForward fwd =
        cuda::CudnnSdpaForward(q, k, v, bias, q_lengths, kv_lengths, causal);
    ctx->save_for_backward({q, k, v, bias, q_lengths, kv_lengths, fwd.out, fwd.stats});
    ctx->saved_data["causal"] = causal;
    ctx->saved_data["dbias"] = bias.defined() && bias.requires_grad();
    return fwd.out;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto s = ctx->get_saved_variables();
    const cuda::SdpaGrads g = cuda::CudnnSdpaBackward(
        s[0], s[1], s[2], s[3], s[4], s[5], ctx->saved_data["causal"].toBool(), {s[6], s[7]},
        grad_out[0], ctx->saved_data["dbias"].toBool());
    return {g.dq, g.dk, g.dv, g.dbias, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};
#endif

}  // namespace

bool HaveCudnnAttention() {
#if T5XX_WITH_CUDNN_FRONTEND
  return true;
#else
  return false;
#endif
}

at::Tensor CudnnAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const at::Tensor& bias, const at::Tensor& q_lengths,
                          const at::Tensor& kv_lengths, bool causal) {
  T5XX_CHECK(HaveCudnnAttention(),
             "CudnnAttention: this t5xx was built without cuDNN's fused attention (it needs a "
             "CUDA libtorch and cudnn-frontend's headers: -DT5XX_CUDNN_FRONTEND_INCLUDE_DIR, "
             "docs/gpu.md)");
  CheckArguments(q, k, v, bias, q_lengths, kv_lengths);
#if T5XX_WITH_CUDNN_FRONTEND
  return CudnnAttentionFunction::apply(q, k, v, bias, q_lengths, kv_lengths, causal);
#else
  (void)causal;
  return at::Tensor();
#endif
}

}  // namespace t5xx::kernels
