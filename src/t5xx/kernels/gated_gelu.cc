// See gated_gelu.h.
#include "t5xx/kernels/gated_gelu.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include "t5xx/kernels/cpu/cpu_vector_math.h"
#include "t5xx/kernels/cpu/intra_op_parallel.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::models {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;
// Elements per task handed to a thread (the split does not change values).
constexpr int64_t kChunk = 1 << 14;

// s = sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3): gelu_tanh(x) = x s.
inline float Gate(float x) {
  const float u2 = 2.0f * kSqrt2OverPi * (x + kCubic * x * x * x);
  return 1.0f / (1.0f + device::ExpApprox(-u2));
}

// h = x * s(x) * y.
T5XX_CPU_CLONES
void ForwardLoop(const float* x, const float* y, float* h, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float xi = x[i];
    h[i] = xi * Gate(xi) * y[i];
  }
}

// gx = g * y * gelu'(x), gy = g * gelu(x).
T5XX_CPU_CLONES
void BackwardLoop(const float* x, const float* y, const float* g, float* gx, float* gy,
                  int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float xi = x[i];
    const float du2 = 2.0f * kSqrt2OverPi * (1.0f + 3.0f * kCubic * xi * xi);
    const float s = Gate(xi);
    const float gi = g[i];
    gx[i] = gi * y[i] * (s + xi * s * (1.0f - s) * du2);
    gy[i] = gi * xi * s;
  }
}

class GatedGeluFunction : public torch::autograd::Function<GatedGeluFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& a0,
                            const at::Tensor& a1) {
    RECORD_USER_SCOPE("t5xx::gated_gelu");  // a row in bench/step_profile's per-op profile
    const at::Tensor x = a0.contiguous(), y = a1.contiguous();
    ctx->save_for_backward({x, y});
    at::Tensor h = at::empty(x.sizes(), x.options());
    const float* px = x.data_ptr<float>();
    const float* py = y.data_ptr<float>();
    float* ph = h.data_ptr<float>();
    device::IntraOpParallelForChunks(x.numel(), kChunk, [&](int64_t, int64_t from, int64_t to) {
      ForwardLoop(px + from, py + from, ph + from, to - from);
    });
    return h;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& y = saved[1];
    const at::Tensor g = grad_out[0].contiguous();
    at::Tensor gx = at::empty(x.sizes(), x.options());
    at::Tensor gy = at::empty(y.sizes(), y.options());
    const float* px = x.data_ptr<float>();
    const float* py = y.data_ptr<float>();
    const float* pg = g.data_ptr<float>();
    float* pgx = gx.data_ptr<float>();
    float* pgy = gy.data_ptr<float>();
    device::IntraOpParallelForChunks(x.numel(), kChunk, [&](int64_t, int64_t from, int64_t to) {
      BackwardLoop(px + from, py + from, pg + from, pgx + from, pgy + from, to - from);
    });
    return {gx, gy};
  }
};

}  // namespace

bool GatedGeluFused(const at::Tensor& a0, const at::Tensor& a1) {
  return a0.is_cpu() && a1.is_cpu() && a0.scalar_type() == at::kFloat &&
         a1.scalar_type() == at::kFloat && a0.sizes() == a1.sizes();
}

at::Tensor GatedGelu(const at::Tensor& a0, const at::Tensor& a1) {
  if (!GatedGeluFused(a0, a1)) return compat::GeluTanh(a0) * a1;
  return GatedGeluFunction::apply(a0, a1);
}

void GatedGeluInto(const float* a0, const float* a1, float* h, int64_t n) {
  ForwardLoop(a0, a1, h, n);
}

}  // namespace t5xx::models
