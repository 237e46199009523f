// See decode_attention.h.
#include "t5xx/kernels/decode_attention.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <ATen/record_function.h>

#include <stdexcept>
#include <vector>

#include "t5xx/kernels/cpu/cpu_row_max.h"
#include "t5xx/kernels/cpu/cpu_vector_math.h"
#include "t5xx/kernels/cpu/intra_op_parallel.h"

namespace t5xx::models {
namespace {

// (rows x heads) x keys x head dim below which one thread does it all: an
// OpenMP region costs more than the work.
constexpr int64_t kDecodeAttentionParallelWork = 1 << 16;

// Strides (in floats) of one [B, H, X, D] operand, D contiguous.
struct DecodeOperand {
  const float* data;
  int64_t b, h, j;
};

DecodeOperand HeadStrides(const at::Tensor& t) {
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

// One (row, head): out[0..d) = softmax(q . k_j + bias_j) v over n keys;
// `scratch` holds n floats.
T5XX_CPU_CLONES
void DecodeOneHead(const float* q, const float* k, int64_t k_step, const float* v,
                   int64_t v_step, const float* bias, int64_t bias_step, int64_t n, int64_t d,
                   float* scratch, float* out) {
  for (int64_t j = 0; j < n; ++j) {
    scratch[j] = DotTree(q, k + j * k_step, d) + (bias ? bias[j * bias_step] : 0.0f);
  }
  const float sum = device::ExpShiftedSum(scratch, n, device::RowMax(scratch, n));
  for (int64_t i = 0; i < d; ++i) out[i] = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    const float p = scratch[j];
    const float* vj = v + j * v_step;
    for (int64_t i = 0; i < d; ++i) out[i] += p * vj[i];
  }
  const float inv = 1.0f / sum;
  for (int64_t i = 0; i < d; ++i) out[i] *= inv;
}

bool IsFloat32Cpu(const at::Tensor& t) {
  return t.defined() && t.is_cpu() && t.scalar_type() == at::kFloat && t.layout() == at::kStrided;
}

}  // namespace

bool DecodeAttentionFused(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const at::Tensor& bias) {
  if (!IsFloat32Cpu(q) || !IsFloat32Cpu(k) || !IsFloat32Cpu(v)) return false;
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
  if (!IsFloat32Cpu(bias) || bias.dim() > 4 || bias.size(-1) != k.size(2)) return false;
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
        "DecodeAttention: needs float32 CPU q [B, H, 1, D], k and v [B, H, N, D] (D "
        "contiguous) and a bias broadcastable to [B, H, 1, N]");
  }
  RECORD_USER_SCOPE("t5xx::decode_attention");  // a row in bench/step_profile's per-op profile
  const int64_t rows = q.size(0), heads = q.size(1), n = k.size(2), d = q.size(3);
  const int64_t group = rows / k.size(0);  // q's rows per row of k and v
  at::Tensor out = at::empty({rows, 1, heads, d}, q.options());
  const DecodeOperand qo = HeadStrides(q), ko = HeadStrides(k), vo = HeadStrides(v);
  at::Tensor b;
  DecodeOperand bo{nullptr, 0, 0, 0};
  if (bias.defined()) {
    b = bias.expand({k.size(0), heads, 1, n});
    bo = {b.data_ptr<float>(), b.stride(0), b.stride(1), b.stride(3)};
  }
  float* po = out.data_ptr<float>();
  auto run = [&](int64_t first, int64_t last) {
    std::vector<float> scratch(static_cast<size_t>(n));
    for (int64_t i = first; i < last; ++i) {
      const int64_t r = i / heads, h = i % heads, e = r / group;
      DecodeOneHead(qo.data + r * qo.b + h * qo.h, ko.data + e * ko.b + h * ko.h, ko.j,
                    vo.data + e * vo.b + h * vo.h, vo.j,
                    bo.data ? bo.data + e * bo.b + h * bo.h : nullptr, bo.j, n, d,
                    scratch.data(), po + i * d);
    }
  };
  if (rows * heads * n * d >= kDecodeAttentionParallelWork) {
    device::IntraOpParallelFor(rows * heads, run);
  } else {
    run(0, rows * heads);
  }
  return out;
}

}  // namespace t5xx::models
