// See skinny_matmul.h.
#include "t5xx/kernels/skinny_matmul.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <stdexcept>

#include "t5xx/kernels/cpu/cpu_vector_math.h"
#include "t5xx/kernels/cpu/intra_op_parallel.h"

namespace t5xx::models {
namespace {

// Output columns per block: one block per thread where the rows x block
// accumulators fit in L1 (kSkinnyAccumulators floats) while w's rows stream
// through, in multiples of 64. (The blocks do not change the results: each
// output sums over k alone.)
constexpr int64_t kSkinnyAccumulators = 8192;
// Multiply-adds below which one thread does it all.
constexpr int64_t kSkinnyParallelWork = 1 << 16;

// out[m, c0..c1) = sum_k x[m, k] w[k, c0..c1), w row-major [K, N]: eight
// rows of w per pass over the block (one load and store of the
// accumulators per eight multiply-adds), then the rest one by one.
T5XX_CPU_CLONES
void RowMajorBlock(const float* __restrict x, int64_t rows, int64_t k_dim,
                   const float* __restrict w, int64_t n_dim, int64_t c0, int64_t c1,
                   float* __restrict out) {
  const int64_t width = c1 - c0;
  for (int64_t m = 0; m < rows; ++m) {
    float* __restrict o = out + m * n_dim + c0;
    for (int64_t c = 0; c < width; ++c) o[c] = 0.0f;
  }
  int64_t k = 0;
  for (; k + 8 <= k_dim; k += 8) {
    const float* __restrict w0 = w + k * n_dim + c0;
    const float* __restrict w1 = w0 + n_dim;
    const float* __restrict w2 = w1 + n_dim;
    const float* __restrict w3 = w2 + n_dim;
    const float* __restrict w4 = w3 + n_dim;
    const float* __restrict w5 = w4 + n_dim;
    const float* __restrict w6 = w5 + n_dim;
    const float* __restrict w7 = w6 + n_dim;
    for (int64_t m = 0; m < rows; ++m) {
      const float* a = x + m * k_dim + k;
      float* __restrict o = out + m * n_dim + c0;
      for (int64_t c = 0; c < width; ++c) {
        o[c] += ((a[0] * w0[c] + a[1] * w1[c]) + (a[2] * w2[c] + a[3] * w3[c])) +
                ((a[4] * w4[c] + a[5] * w5[c]) + (a[6] * w6[c] + a[7] * w7[c]));
      }
    }
  }
  for (; k < k_dim; ++k) {
    const float* __restrict wk = w + k * n_dim + c0;
    for (int64_t m = 0; m < rows; ++m) {
      const float a = x[m * k_dim + k];
      float* __restrict o = out + m * n_dim + c0;
      for (int64_t c = 0; c < width; ++c) o[c] += a * wk[c];
    }
  }
}

// out[m, c0..c1) = dot(x[m], wt[c]), wt row-major [N, K] (w's transpose).
T5XX_CPU_CLONES
void TransposedBlock(const float* x, int64_t rows, int64_t k_dim, const float* wt, int64_t n_dim,
                     int64_t c0, int64_t c1, float* out) {
  for (int64_t c = c0; c < c1; ++c) {
    for (int64_t m = 0; m < rows; ++m) {
      out[m * n_dim + c] = device::DotLanes(x + m * k_dim, wt + c * k_dim, k_dim);
    }
  }
}

bool IsCpuFloat(const at::Tensor& t) {
  return t.defined() && t.is_cpu() && t.scalar_type() == at::kFloat && t.layout() == at::kStrided;
}

}  // namespace

bool SkinnyMatmulFused(const at::Tensor& x, const at::Tensor& w) {
  if (!IsCpuFloat(x) || !IsCpuFloat(w) || x.dim() < 1 || w.dim() != 2) return false;
  const int64_t k = w.size(0), n = w.size(1);
  if (x.size(-1) != k || k == 0 || n == 0) return false;
  const int64_t rows = x.numel() / k;
  if (rows < 1 || rows > kSkinnyMatmulMaxRows) return false;
  const bool row_major = w.stride(1) == 1 && w.stride(0) == n;
  const bool transposed = w.stride(0) == 1 && w.stride(1) == k;
  if (!row_major && !transposed) return false;
  return !(at::GradMode::is_enabled() && (x.requires_grad() || w.requires_grad()));
}

at::Tensor SkinnyMatmul(const at::Tensor& x, const at::Tensor& w) {
  if (!SkinnyMatmulFused(x, w)) {
    throw std::invalid_argument(
        "SkinnyMatmul: needs float32 CPU x [..., K] of at most 8 rows and w [K, N] (row-major "
        "or a row-major [N, K] transposed)");
  }
  RECORD_USER_SCOPE("t5xx::skinny_matmul");  // a row in bench/step_profile's per-op profile
  const int64_t k = w.size(0), n = w.size(1), rows = x.numel() / k;
  const at::Tensor xr = x.reshape({rows, k}).contiguous();
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = n;
  at::Tensor out = at::empty(shape, x.options());
  const float* px = xr.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  float* po = out.data_ptr<float>();
  const bool row_major = w.stride(1) == 1 && w.stride(0) == n;
  const int64_t threads = std::max<int64_t>(1, at::get_num_threads());
  const int64_t width = std::max<int64_t>(
      64, std::min((n + threads - 1) / threads, kSkinnyAccumulators / rows) / 64 * 64);
  const int64_t blocks = (n + width - 1) / width;
  auto run = [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b) {
      const int64_t c0 = b * width, c1 = std::min(n, c0 + width);
      if (row_major) {
        RowMajorBlock(px, rows, k, pw, n, c0, c1, po);
      } else {
        TransposedBlock(px, rows, k, pw, n, c0, c1, po);
      }
    }
  };
  device::IntraOpParallelForIfWorth(blocks, rows * k * n, kSkinnyParallelWork, run);
  return out;
}

}  // namespace t5xx::models
