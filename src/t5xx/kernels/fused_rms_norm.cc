// See fused_rms_norm.h.
#include "t5xx/kernels/fused_rms_norm.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "t5xx/kernels/cpu/cpu_vector_math.h"
#include "t5xx/kernels/cpu/intra_op_parallel.h"
#include "t5xx/util/error.h"

namespace t5xx::models {
namespace {

// Rows per task; dscale's partial sums are per block, so the block size
// (not the thread count) fixes the order of its additions.
constexpr int64_t kRowsPerBlock = 32;

// Sum of a[i] * b[i] (device::DotLanes, compiled for the CPU at hand).
T5XX_CPU_CLONES
float Dot(const float* a, const float* b, int64_t n) { return device::DotLanes(a, b, n); }

// y = (x * r) * scale.
T5XX_CPU_CLONES
void ScaleRow(const float* x, float r, const float* scale, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] * r) * scale[i];
}

// One row's forward: y = (x * r) * scale with r = rsqrt(mean(x^2) + eps),
// each step rounded to float32 as t5x's; returns r.
inline float ForwardRow(const float* xr, int64_t e, const float* scale, float eps, float* yr) {
  const float mean2 = Dot(xr, xr, e) / static_cast<float>(e);
  const float r = 1.0f / std::sqrt(mean2 + eps);
  ScaleRow(xr, r, scale, yr, e);
  return r;
}

// gs = g * scale; dx = r (gs - x r c); dscale_part += g x r.
T5XX_CPU_CLONES
void BackwardRow(const float* x, const float* g, const float* scale, float r, float c,
                 float* dx, float* dscale_part, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float xhat = x[i] * r;
    dx[i] = r * (g[i] * scale[i] - xhat * c);
    dscale_part[i] += g[i] * xhat;
  }
}

// acc += part.
T5XX_CPU_CLONES
void AddInto(float* acc, const float* part, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] += part[i];
}

class FusedRmsNormFunction : public torch::autograd::Function<FusedRmsNormFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x_in,
                            const at::Tensor& scale_in, double epsilon) {
    RECORD_USER_SCOPE("t5xx::rms_norm");  // a row in bench/step_profile's per-op profile
    const at::Tensor x = x_in.contiguous(), scale = scale_in.contiguous();
    const int64_t e = x.size(-1), rows = e == 0 ? 0 : x.numel() / e;
    at::Tensor y = at::empty(x.sizes(), x.options());
    at::Tensor rstd = at::empty({rows}, x.options());
    const float* px = x.data_ptr<float>();
    const float* ps = scale.data_ptr<float>();
    float* py = y.data_ptr<float>();
    float* pr = rstd.data_ptr<float>();
    const float eps = static_cast<float>(epsilon);
    device::IntraOpParallelForChunks(rows, kRowsPerBlock, [&](int64_t, int64_t first, int64_t last) {
      for (int64_t row = first; row < last; ++row) {
        pr[row] = ForwardRow(px + row * e, e, ps, eps, py + row * e);
      }
    });
    ctx->save_for_backward({x, scale, rstd});
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& scale = saved[1];
    const at::Tensor& rstd = saved[2];
    const at::Tensor g = grad_out[0].contiguous();
    const int64_t e = x.size(-1), rows = rstd.size(0);
    const int64_t blocks = device::ChunkCount(rows, kRowsPerBlock);
    at::Tensor dx = at::empty(x.sizes(), x.options());
    at::Tensor parts = at::zeros({std::max<int64_t>(blocks, 1), e}, x.options());
    const float* px = x.data_ptr<float>();
    const float* ps = scale.data_ptr<float>();
    const float* pr = rstd.data_ptr<float>();
    const float* pg = g.data_ptr<float>();
    float* pdx = dx.data_ptr<float>();
    float* pparts = parts.data_ptr<float>();
    device::IntraOpParallelForChunks(rows, kRowsPerBlock, [&](int64_t block, int64_t first, int64_t last) {
      std::vector<float> gs_row(static_cast<size_t>(e));
      for (int64_t row = first; row < last; ++row) {
        const float* xr = px + row * e;
        const float* gr = pg + row * e;
        const float r = pr[row];
        // c = mean(gs * x^) = r * mean(g * scale * x).
        for (int64_t i = 0; i < e; ++i) gs_row[i] = gr[i] * ps[i];
        const float c = r * Dot(gs_row.data(), xr, e) / static_cast<float>(e);
        BackwardRow(xr, gr, ps, r, c, pdx + row * e, pparts + block * e, e);
      }
    });
    at::Tensor dscale = at::zeros({e}, x.options());
    float* pd = dscale.data_ptr<float>();
    for (int64_t block = 0; block < blocks; ++block) AddInto(pd, pparts + block * e, e);
    return {dx, dscale, at::Tensor()};
  }
};

}  // namespace

bool FusedRmsNormApplies(const at::Tensor& x, const at::Tensor& scale) {
  return x.dim() >= 1 && x.is_cpu() && scale.is_cpu() && x.scalar_type() == at::kFloat &&
         scale.scalar_type() == at::kFloat && scale.dim() == 1 && scale.size(0) == x.size(-1);
}

at::Tensor FusedRmsNorm(const at::Tensor& x, const at::Tensor& scale, double epsilon) {
  T5XX_CHECK(FusedRmsNormApplies(x, scale),
             "FusedRmsNorm takes a float32 CPU x [..., E] and a float32 CPU scale [E]");
  return FusedRmsNormFunction::apply(x, scale, epsilon);
}

void RmsNormRowsInto(const float* x, int64_t rows, int64_t e, const float* scale,
                     double epsilon, float* y) {
  const float eps = static_cast<float>(epsilon);
  for (int64_t row = 0; row < rows; ++row) ForwardRow(x + row * e, e, scale, eps, y + row * e);
}

}  // namespace t5xx::models
