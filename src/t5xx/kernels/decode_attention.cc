// See decode_attention.h.
#include "t5xx/kernels/decode_attention.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "t5xx/kernels/cpu/cpu_row_max.h"
#include "t5xx/kernels/cpu/cpu_vector_math.h"
#include "t5xx/kernels/cpu/intra_op_parallel.h"
#include "t5xx/kernels/cpu/tensor_offsets.h"

namespace t5xx::models {
namespace {

// (rows x heads) x keys x head dim below which one thread does it all: an
// OpenMP region costs more than the work.
constexpr int64_t kDecodeAttentionParallelWork = 1 << 14;

DecodeAttentionOperand HeadStrides(const at::Tensor& t) {
  return {t.data_ptr<float>(), t.stride(0), t.stride(1), t.stride(2)};
}

// sum of a[i] b[i] over n in kSumLanes interleaved partial sums, combined by
// halves (a fixed order the vector units do in a few steps: a dot product of
// one head's 64 values is otherwise mostly its 16-term scalar reduction).
inline float DotTree(const float* a, const float* b, int64_t n) {
  float acc[device::kSumLanes] = {};
  int64_t i = 0;
  for (; i + device::kSumLanes <= n; i += device::kSumLanes) {
    for (int l = 0; l < device::kSumLanes; ++l) acc[l] += a[i + l] * b[i + l];
  }
  for (int l = 0; i < n; ++i, ++l) acc[l] += a[i] * b[i];
  for (int w = device::kSumLanes / 2; w >= 1; w /= 2) {
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  }
  return acc[0];
}

// A key whose bias is at most this is masked out (t5x's mask bias is
// -1e10): its probability is exactly 0 whatever q . k_j is (for |q . k_j|
// below ~1e8, i.e. always), so its key and value are not read.
constexpr float kMaskedBias = -1e9f;

// Heads h0..h1 of one row: out_h[0..d) = softmax(q_h . k_jh + bias_hj) v_h
// over n keys. The keys are visited in order with the heads inside, so that
// a cache laid out [L, H, D] is read as one stream; masked keys are skipped
// (their exp is 0 either way: the same bits as computing them). `scratch`
// holds (h1 - h0) * n floats.
T5XX_CPU_CLONES
void DecodeHeads(const float* q, int64_t q_h, const float* k, int64_t k_h, int64_t k_j,
                 const float* v, int64_t v_h, int64_t v_j, const float* bias, int64_t bias_h,
                 int64_t bias_j, int64_t h0, int64_t h1, int64_t n, int64_t d, float* scratch,
                 float* out) {
  const int64_t hs = h1 - h0;
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t h = h0; h < h1; ++h) {
      const float b = bias ? bias[h * bias_h + j * bias_j] : 0.0f;
      scratch[(h - h0) * n + j] =
          b <= kMaskedBias ? b : DotTree(q + h * q_h, k + j * k_j + h * k_h, d) + b;
    }
  }
  float inv[64];  // per head 1 / sum (heads in blocks of 64)
  for (int64_t h0b = 0; h0b < hs; h0b += 64) {
    const int64_t h1b = std::min(hs, h0b + 64);
    for (int64_t h = h0b; h < h1b; ++h) {
      float* row = scratch + h * n;
      inv[h - h0b] = 1.0f / device::ExpShiftedSum(row, n, device::RowMax(row, n));
    }
    for (int64_t i = h0b * d; i < h1b * d; ++i) out[i] = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t h = h0b; h < h1b; ++h) {
        const float p = scratch[h * n + j];
        if (p == 0.0f) continue;  // adds +-0: nothing
        const float* __restrict vj = v + j * v_j + (h + h0) * v_h;
        float* __restrict o = out + h * d;
        for (int64_t i = 0; i < d; ++i) o[i] += p * vj[i];
      }
    }
    for (int64_t h = h0b; h < h1b; ++h) {
      for (int64_t i = 0; i < d; ++i) out[h * d + i] *= inv[h - h0b];
    }
  }
}

}  // namespace

bool DecodeAttentionFused(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const at::Tensor& bias) {
  using device::IsFloat32CpuStrided;
  if (!IsFloat32CpuStrided(q) || !IsFloat32CpuStrided(k) || !IsFloat32CpuStrided(v)) return false;
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4 || q.size(2) != 1) return false;
  for (int d : {1, 3}) {
    if (k.size(d) != q.size(d) || v.size(d) != q.size(d)) return false;
  }
  if (v.size(0) != k.size(0) || k.size(0) == 0 || q.size(0) % k.size(0) != 0) return false;
  if (v.size(2) != k.size(2) || k.size(2) == 0) return false;
  if (q.stride(3) != 1 || k.stride(3) != 1 || v.stride(3) != 1) return false;
  if (at::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad() ||
                                     (bias.defined() && bias.requires_grad()))) {
    return false;
  }
  if (!bias.defined()) return true;
  if (!IsFloat32CpuStrided(bias) || bias.dim() > 4 || bias.size(-1) != k.size(2)) return false;
  const std::vector<int64_t> want = {k.size(0), q.size(1), 1, k.size(2)};
  for (int64_t i = 1; i <= bias.dim(); ++i) {
    const int64_t s = bias.size(-i);
    if (s != 1 && s != want[4 - i]) return false;
  }
  return true;
}

at::Tensor DecodeAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           const at::Tensor& bias) {
  if (!DecodeAttentionFused(q, k, v, bias)) {
    throw std::invalid_argument(
        "DecodeAttention: needs float32 CPU q [B, H, 1, D], k and v [B, H, N, "
        "D] (D "
        "contiguous) and a bias broadcastable to [B, H, 1, N]");
  }
  const int64_t rows = q.size(0), heads = q.size(1), n = k.size(2), d = q.size(3);
  at::Tensor out = at::empty({rows, 1, heads, d}, q.options());
  if (out.numel() == 0) return out;
  at::Tensor b;
  DecodeAttentionOperand bo;
  if (bias.defined()) {
    b = bias.expand({k.size(0), heads, 1, n});
    bo = {b.data_ptr<float>(), b.stride(0), b.stride(1), b.stride(3)};
  }
  DecodeAttentionInto(HeadStrides(q), HeadStrides(k), HeadStrides(v), bo, rows,
                      rows / k.size(0), heads, n, d, out.data_ptr<float>());
  return out;
}

void DecodeAttentionInto(const DecodeAttentionOperand& qo, const DecodeAttentionOperand& ko,
                         const DecodeAttentionOperand& vo, const DecodeAttentionOperand& bo,
                         int64_t rows, int64_t group, int64_t heads, int64_t n, int64_t d,
                         float* po) {
  if (rows * heads * d == 0) return;
  RECORD_USER_SCOPE("t5xx::decode_attention");  // a row in bench/step_profile's per-op profile
  // One piece per row (all its heads), or per head when there is one row.
  const int64_t per_piece = rows == 1 ? 1 : heads;
  const int64_t pieces = rows * heads / per_piece;
  auto run = [&](int64_t first, int64_t last) {
    std::vector<float> scratch(static_cast<size_t>(per_piece * n));
    for (int64_t i = first; i < last; ++i) {
      const int64_t r = i * per_piece / heads, h0 = i * per_piece % heads, e = r / group;
      DecodeHeads(qo.data + r * qo.b, qo.h, ko.data + e * ko.b, ko.h, ko.j, vo.data + e * vo.b,
                  vo.h, vo.j, bo.data ? bo.data + e * bo.b : nullptr, bo.h, bo.j, h0,
                  h0 + per_piece, n, d, scratch.data(), po + (r * heads + h0) * d);
    }
  };
  device::IntraOpParallelForIfWorth(pieces, rows * heads * n * d, kDecodeAttentionParallelWork,
                                    run);
}

}  // namespace t5xx::models
