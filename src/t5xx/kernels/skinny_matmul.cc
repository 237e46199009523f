// See skinny_matmul.h.
#include "t5xx/kernels/skinny_matmul.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "t5xx/kernels/cpu/cpu_vector_math.h"
#include "t5xx/kernels/cpu/intra_op_parallel.h"
#include "t5xx/kernels/cpu/tensor_offsets.h"

namespace t5xx::models {
namespace {

// Partial sums per block (rows x kSumLanes x columns floats): a block's
// columns are as many as fit, in multiples of 64, one block per thread when
// the columns allow it. (The blocks do not change the results: each output
// sums over k alone.)
constexpr int64_t kSkinnyLaneFloats = 8192;
// Multiply-adds below which one thread does it all.
constexpr int64_t kSkinnyParallelWork = 1 << 16;

// out[m, c0..c1) = sum_k x[m, k] w[k, c0..c1), w row-major [K, N], in the
// order of DotLanes (cpu_vector_math.h) over a column: the products of
// k = j mod kSumLanes go to lane j in increasing k, then the lanes are added
// in order. That is the order TransposedBlock sums in, so both layouts give
// the same bits (StoreKernelsTransposed changes no result). `lanes` holds
// rows * kSumLanes * (c1 - c0) floats; w's rows stream through them once
// for all rows of x.
T5XX_CPU_CLONES
void RowMajorBlock(const float* __restrict x, int64_t rows, int64_t k_dim,
                   const float* __restrict w, int64_t n_dim, int64_t c0, int64_t c1,
                   float* __restrict lanes, float* __restrict out) {
  constexpr int64_t kLanes = device::kSumLanes;
  // A lane's next kPerLane products (rows kLanes apart) are added in a
  // register before its partial sums go back to memory: one load and store
  // of them per kPerLane multiply-adds, in the order DotLanes adds them.
  constexpr int64_t kPerLane = 8;
  const int64_t width = c1 - c0;
  const int64_t per_row = kLanes * width;
  for (int64_t i = 0; i < rows * per_row; ++i) lanes[i] = 0.0f;
  for (int64_t k0 = 0; k0 < k_dim; k0 += kLanes * kPerLane) {
    for (int64_t j = 0; j < kLanes && k0 + j < k_dim; ++j) {
      // This lane's rows in the block: k0 + j + kLanes t < k_dim.
      const int64_t count = std::min<int64_t>(kPerLane, (k_dim - (k0 + j) + kLanes - 1) / kLanes);
      const float* wr[kPerLane];
      for (int64_t t = 0; t < count; ++t) wr[t] = w + (k0 + j + kLanes * t) * n_dim + c0;
      for (int64_t m = 0; m < rows; ++m) {
        const float* xm = x + m * k_dim + k0 + j;
        float* __restrict acc = lanes + m * per_row + j * width;
        if (count == kPerLane) {
          const float a0 = xm[0], a1 = xm[kLanes], a2 = xm[2 * kLanes], a3 = xm[3 * kLanes];
          const float a4 = xm[4 * kLanes], a5 = xm[5 * kLanes], a6 = xm[6 * kLanes];
          const float a7 = xm[7 * kLanes];
          const float* __restrict w0 = wr[0];
          const float* __restrict w1 = wr[1];
          const float* __restrict w2 = wr[2];
          const float* __restrict w3 = wr[3];
          const float* __restrict w4 = wr[4];
          const float* __restrict w5 = wr[5];
          const float* __restrict w6 = wr[6];
          const float* __restrict w7 = wr[7];
          for (int64_t c = 0; c < width; ++c) {
            float sum = acc[c];
            sum += a0 * w0[c];
            sum += a1 * w1[c];
            sum += a2 * w2[c];
            sum += a3 * w3[c];
            sum += a4 * w4[c];
            sum += a5 * w5[c];
            sum += a6 * w6[c];
            sum += a7 * w7[c];
            acc[c] = sum;
          }
        } else {
          for (int64_t t = 0; t < count; ++t) {
            const float a = xm[kLanes * t];
            const float* __restrict wt = wr[t];
            for (int64_t c = 0; c < width; ++c) acc[c] += a * wt[c];
          }
        }
      }
    }
  }
  for (int64_t m = 0; m < rows; ++m) {
    float* __restrict o = out + m * n_dim + c0;
    for (int64_t c = 0; c < width; ++c) o[c] = 0.0f;
    for (int64_t j = 0; j < kLanes; ++j) {
      const float* __restrict acc = lanes + m * per_row + j * width;
      for (int64_t c = 0; c < width; ++c) o[c] += acc[c];
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

}  // namespace

SkinnyLayout SkinnyLayoutOf(const at::Tensor& w) {
  if (!device::IsFloat32CpuStrided(w) || w.dim() != 2) return SkinnyLayout::kNeither;
  if (w.stride(1) == 1 && w.stride(0) == w.size(1)) return SkinnyLayout::kRowMajor;
  if (w.stride(0) == 1 && w.stride(1) == w.size(0)) return SkinnyLayout::kTransposed;
  return SkinnyLayout::kNeither;
}

bool SkinnyMatmulFused(const at::Tensor& x, const at::Tensor& w) {
  if (!device::IsFloat32CpuStrided(x) || x.dim() < 1) return false;
  if (SkinnyLayoutOf(w) == SkinnyLayout::kNeither) return false;
  const int64_t k = w.size(0), n = w.size(1);
  if (x.size(-1) != k || k == 0 || n == 0) return false;
  const int64_t rows = x.numel() / k;
  if (rows < 1 || rows > kSkinnyMatmulMaxRows) return false;
  return !(at::GradMode::is_enabled() && (x.requires_grad() || w.requires_grad()));
}

at::Tensor SkinnyMatmul(const at::Tensor& x, const at::Tensor& w) {
  if (!SkinnyMatmulFused(x, w)) {
    throw std::invalid_argument(
        "SkinnyMatmul: needs float32 CPU x [..., K] of at most 8 rows and w [K, N] (row-major "
        "or a row-major [N, K] transposed)");
  }
  const int64_t k = w.size(0), n = w.size(1), rows = x.numel() / k;
  const at::Tensor xr = x.reshape({rows, k}).contiguous();
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = n;
  at::Tensor out = at::empty(shape, x.options());
  SkinnyMatmulInto(xr.data_ptr<float>(), rows, k, w.data_ptr<float>(), n,
                   SkinnyLayoutOf(w) == SkinnyLayout::kTransposed, out.data_ptr<float>());
  return out;
}

void SkinnyMatmulInto(const float* px, int64_t rows, int64_t k, const float* pw, int64_t n,
                      bool w_transposed, float* po) {
  if (rows < 1 || rows > kSkinnyMatmulMaxRows) {
    throw std::invalid_argument("SkinnyMatmulInto: " + std::to_string(rows) +
                                " rows (1 to 8 taken)");
  }
  RECORD_USER_SCOPE("t5xx::skinny_matmul");  // a row in bench/step_profile's per-op profile
  const int64_t threads = std::max<int64_t>(1, at::get_num_threads());
  const int64_t width = std::max<int64_t>(
      64, std::min((n + threads - 1) / threads,
                   kSkinnyLaneFloats / (rows * device::kSumLanes)) / 64 * 64);
  const int64_t blocks = (n + width - 1) / width;
  auto run = [&](int64_t first, int64_t last) {
    std::vector<float> lanes(w_transposed ? 0 : rows * device::kSumLanes * width);
    for (int64_t b = first; b < last; ++b) {
      const int64_t c0 = b * width, c1 = std::min(n, c0 + width);
      if (w_transposed) {
        TransposedBlock(px, rows, k, pw, n, c0, c1, po);
      } else {
        RowMajorBlock(px, rows, k, pw, n, c0, c1, lanes.data(), po);
      }
    }
  };
  device::IntraOpParallelForIfWorth(blocks, rows * k * n, kSkinnyParallelWork, run);
}

}  // namespace t5xx::models
