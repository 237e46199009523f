// See int8_matmul.h.
#include "t5xx/kernels/int8_matmul.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define T5XX_INT8_VNNI 1
#endif

#include "t5xx/kernels/cpu/cpu_vector_math.h"
#include "t5xx/kernels/cpu/intra_op_parallel.h"

namespace t5xx::models {
namespace {

constexpr int64_t kInt8KAlign = 64;       // one 512-bit load of bytes
constexpr int64_t kInt8ColumnBlock = 64;  // columns per parallel piece
// Multiply-adds below which one thread does it all (a parallel region costs
// a few microseconds; int8 dot products do ~100 multiply-adds a nanosecond).
constexpr int64_t kInt8ParallelWork = int64_t{1} << 17;
constexpr int32_t kActivationOffset = 128;  // q_x + 128 is an unsigned byte

int64_t PaddedK(int64_t k) { return (k + kInt8KAlign - 1) / kInt8KAlign * kInt8KAlign; }

// max_k |src[k]|'s bits (non-negative floats order as their bits do):
// >= 0x7f800000 when some src[k] is infinite or NaN. Integer max: it
// vectorises, as a float max reduction would not without fast-math flags.
T5XX_CPU_CLONES
uint32_t AbsMaxBits(const float* __restrict src, int64_t n) {
  uint32_t m = 0;
  for (int64_t k = 0; k < n; ++k) {
    uint32_t b;
    std::memcpy(&b, src + k, 4);
    b &= 0x7fffffffu;
    m = b > m ? b : m;
  }
  return m;
}

// v rounded to the nearest integer, ties to even, for |v| < 2^22 (adding
// 1.5 * 2^23 leaves no fraction bits; plain arithmetic, so it vectorises,
// unlike a call to nearbyint).
inline float RoundHalfEven(float v) {
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23
  return (v + kShift) - kShift;
}

inline int32_t QuantizeValue(float v, float inv) {
  const int32_t q = static_cast<int32_t>(RoundHalfEven(v * inv));
  return q < -127 ? -127 : (q > 127 ? 127 : q);
}

// src's scale (max |src| / 127; 0 for all zeros, NaN when some value is
// infinite or NaN, so that the outputs it enters are NaN as float32
// arithmetic would make them) and 127 / max |src|, or 0 when no value is to
// be quantized (all zeros, a NaN or infinity, or max |src| so small that
// its inverse overflows: below ~3.7e-37, where every quotient is taken as
// 0). Callers write zeros for a row whose inverse is 0, so that nothing
// non-finite reaches an integer conversion.
std::pair<float, float> RowScale(const float* src, int64_t n) {
  const uint32_t bits = AbsMaxBits(src, n);
  if (bits >= 0x7f800000u) return {std::nanf(""), 0.0f};
  float amax;
  std::memcpy(&amax, &bits, 4);
  if (amax == 0.0f) return {0.0f, 0.0f};
  const float inv = 127.0f / amax;
  return {amax / 127.0f, std::isfinite(inv) ? inv : 0.0f};
}

// dst[c] = q_x[c] + 128 for one activation row.
T5XX_CPU_CLONES
void QuantizeActivationRow(const float* __restrict src, int64_t n, float inv,
                           uint8_t* __restrict dst) {
  if (inv == 0.0f) {
    std::memset(dst, kActivationOffset, static_cast<size_t>(n));
    return;
  }
  for (int64_t c = 0; c < n; ++c) dst[c] = static_cast<uint8_t>(QuantizeValue(src[c], inv) + 128);
}

constexpr int64_t kInt8Lanes = 16;  // output columns per packed block

// Byte offset of q_w[n, k] in the packed layout (int8_matmul.h).
int64_t PackedOffset(int64_t n, int64_t k, int64_t k_padded) {
  return ((n / kInt8Lanes) * (k_padded / 4) + k / 4) * 64 + (n % kInt8Lanes) * 4 + k % 4;
}

// out[m, c0..c1) for every row m from the packed weight, plain C++ (CPUs
// without AVX512-VNNI): one column at a time.
T5XX_CPU_CLONES
void ColumnsGeneric(const uint8_t* __restrict a, int64_t rows, const int8_t* __restrict packed,
                    int64_t k_padded, int64_t c0, int64_t c1, int32_t* __restrict acc) {
  const int64_t groups = k_padded / 4;
  for (int64_t c = c0; c < c1; ++c) {
    const int8_t* __restrict block = packed + (c / kInt8Lanes) * groups * 64 + (c % kInt8Lanes) * 4;
    for (int64_t m = 0; m < rows; ++m) {
      const uint8_t* __restrict am = a + m * k_padded;
      int32_t s = 0;
      for (int64_t j = 0; j < groups; ++j) {
        for (int64_t t = 0; t < 4; ++t) {
          s += static_cast<int32_t>(am[4 * j + t]) * static_cast<int32_t>(block[j * 64 + t]);
        }
      }
      acc[m * (c1 - c0) + (c - c0)] = s;
    }
  }
}

#if T5XX_INT8_VNNI
bool HasVnni() {
  static const bool has =
      __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw");
  return has;
}

// acc[r, 16 b + c] = sum_k a[m0 + r, k] q_w[col0 + 16 b + c, k] for MR rows
// and NB blocks of 16 columns: MR x NB accumulators, each lane one output
// column; per group of 4 bytes of K one broadcast of each row's 4 bytes and
// one vpdpbusd per (row, block).
template <int MR, int NB>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void TileVnni(
    const uint8_t* a, int64_t k_padded, const int8_t* blocks, int32_t* acc, int64_t acc_stride) {
  const int64_t groups = k_padded / 4;
  __m512i s[MR][NB];
  for (int r = 0; r < MR; ++r) {
    for (int b = 0; b < NB; ++b) s[r][b] = _mm512_setzero_si512();
  }
  for (int64_t j = 0; j < groups; ++j) {
    __m512i w[NB];
    for (int b = 0; b < NB; ++b) w[b] = _mm512_loadu_si512(blocks + (b * groups + j) * 64);
    for (int r = 0; r < MR; ++r) {
      int32_t x4;
      std::memcpy(&x4, a + r * k_padded + 4 * j, 4);
      const __m512i x = _mm512_set1_epi32(x4);
      for (int b = 0; b < NB; ++b) s[r][b] = _mm512_dpbusd_epi32(s[r][b], x, w[b]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    for (int b = 0; b < NB; ++b) {
      _mm512_storeu_si512(acc + r * acc_stride + b * kInt8Lanes, s[r][b]);
    }
  }
}

template <int MR>
void RowsVnni(const uint8_t* a, int64_t k_padded, const int8_t* blocks, int64_t nb, int32_t* acc,
              int64_t acc_stride) {
  switch (nb) {
    case 4:
      return TileVnni<MR, 4>(a, k_padded, blocks, acc, acc_stride);
    case 3:
      return TileVnni<MR, 3>(a, k_padded, blocks, acc, acc_stride);
    case 2:
      return TileVnni<MR, 2>(a, k_padded, blocks, acc, acc_stride);
    default:
      return TileVnni<MR, 1>(a, k_padded, blocks, acc, acc_stride);
  }
}
#endif

// o[c] = (acc[c] - 128 q_sums[c]) * (s_x * s_w[c]) for c < width.
T5XX_CPU_CLONES
void ScaleRow(const int32_t* __restrict acc, const int32_t* __restrict q_sums,
              const float* __restrict w_scale, float sx, int64_t width, float* __restrict o) {
  for (int64_t c = 0; c < width; ++c) {
    o[c] = static_cast<float>(acc[c] - kActivationOffset * q_sums[c]) * (sx * w_scale[c]);
  }
}

// out[m, c0..c1) from the quantized rows (see int8_matmul.h); c0 a multiple
// of 16.
void ColumnBlock(const uint8_t* a, const float* a_scale, int64_t rows, const Int8Weight& w,
                 int64_t c0, int64_t c1, bool vnni, float* out) {
  const int8_t* packed = w.packed.data_ptr<int8_t>();
  const float* w_scale = w.scale.data_ptr<float>();
  const int32_t* q_sums = w.q_sums.data_ptr<int32_t>();
  const int64_t kp = w.k_padded, n_dim = w.n, groups = kp / 4;
  const int64_t width = (c1 - c0 + kInt8Lanes - 1) / kInt8Lanes * kInt8Lanes;
  std::vector<int32_t> acc(static_cast<size_t>(rows * width));
#if T5XX_INT8_VNNI
  if (vnni) {
    constexpr int64_t kRowTile = 4, kBlockTile = 4;
    for (int64_t c = c0; c < c0 + width; c += kBlockTile * kInt8Lanes) {
      const int64_t nb = std::min(kBlockTile, (c0 + width - c) / kInt8Lanes);
      const int8_t* blocks = packed + (c / kInt8Lanes) * groups * 64;
      for (int64_t m = 0; m < rows; m += kRowTile) {
        const uint8_t* am = a + m * kp;
        int32_t* accm = acc.data() + m * width + (c - c0);
        switch (std::min(kRowTile, rows - m)) {
          case 4:
            RowsVnni<4>(am, kp, blocks, nb, accm, width);
            break;
          case 3:
            RowsVnni<3>(am, kp, blocks, nb, accm, width);
            break;
          case 2:
            RowsVnni<2>(am, kp, blocks, nb, accm, width);
            break;
          default:
            RowsVnni<1>(am, kp, blocks, nb, accm, width);
            break;
        }
      }
    }
  } else
#endif
  {
    ColumnsGeneric(a, rows, packed, kp, c0, c0 + width, acc.data());
  }
  for (int64_t m = 0; m < rows; ++m) {
    ScaleRow(acc.data() + m * width, q_sums + c0, w_scale + c0, a_scale[m], c1 - c0,
             out + m * n_dim + c0);
  }
}

}  // namespace

Int8Weight QuantizeInt8Weight(const at::Tensor& w) {
  if (!w.defined() || !w.is_cpu() || w.scalar_type() != at::kFloat || w.dim() != 2 ||
      w.size(0) < 1 || w.size(0) > 65535 || w.size(1) < 1) {
    throw std::invalid_argument(
        "QuantizeInt8Weight: needs a float32 CPU [K, "
        "N] tensor with 1 <= K <= 65535 and N >= 1");
  }
  Int8Weight out;
  out.k = w.size(0);
  out.n = w.size(1);
  out.k_padded = PaddedK(out.k);
  out.n_padded = (out.n + kInt8Lanes - 1) / kInt8Lanes * kInt8Lanes;
  const at::Tensor wt = w.t().contiguous();  // [N, K]: column n of w as a row
  out.packed = at::zeros({out.n_padded / kInt8Lanes, out.k_padded / 4, kInt8Lanes, 4},
                         at::TensorOptions().dtype(at::kChar));
  out.scale = at::zeros({out.n_padded}, at::TensorOptions().dtype(at::kFloat));
  out.q_sums = at::zeros({out.n_padded}, at::TensorOptions().dtype(at::kInt));
  const float* src = wt.data_ptr<float>();
  int8_t* packed = out.packed.data_ptr<int8_t>();
  float* scale = out.scale.data_ptr<float>();
  int32_t* sums = out.q_sums.data_ptr<int32_t>();
  const int64_t k_dim = out.k, kp = out.k_padded;
  device::IntraOpParallelFor(out.n, [&](int64_t first, int64_t last) {
    for (int64_t n = first; n < last; ++n) {
      const float* row = src + n * k_dim;
      const auto [s, inv] = RowScale(row, k_dim);
      int32_t sum = 0;
      for (int64_t k = 0; k < k_dim; ++k) {
        const int32_t v = inv == 0.0f ? 0 : QuantizeValue(row[k], inv);
        packed[PackedOffset(n, k, kp)] = static_cast<int8_t>(v);
        sum += v;
      }
      scale[n] = s;
      sums[n] = sum;
    }
  });
  return out;
}

at::Tensor Int8WeightRows(const Int8Weight& w) {
  // [blocks, groups, 16, 4] -> [blocks, 16, groups, 4] -> [n_padded, k_padded].
  return w.packed.permute({0, 2, 1, 3})
      .reshape({w.n_padded, w.k_padded})
      .narrow(0, 0, w.n)
      .narrow(1, 0, w.k)
      .contiguous();
}

at::Tensor DequantizeInt8Weight(const Int8Weight& w) {
  return (Int8WeightRows(w).to(at::kFloat) * w.scale.narrow(0, 0, w.n).unsqueeze(1))
      .t()
      .contiguous();
}

at::Tensor Int8Matmul(const at::Tensor& x, const Int8Weight& w, Int8Kernel kernel) {
  if (!x.defined() || !x.is_cpu() || x.scalar_type() != at::kFloat || x.dim() < 1 ||
      x.size(-1) != w.k) {
    throw std::invalid_argument("Int8Matmul: needs float32 CPU x [..., " + std::to_string(w.k) +
                                "]");
  }
  RECORD_USER_SCOPE("t5xx::int8_matmul");  // a row in bench/step_profile's per-op profile
  const int64_t k = w.k, kp = w.k_padded, n = w.n, rows = x.numel() / std::max<int64_t>(k, 1);
  const at::Tensor xr = x.reshape({rows, k}).contiguous();
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = n;
  at::Tensor out = at::empty(shape, x.options());
  if (rows == 0) return out;
  // The activations' rows as unsigned bytes q_x + 128; padding holds 128 (0).
  std::vector<uint8_t> a(static_cast<size_t>(rows * kp), static_cast<uint8_t>(kActivationOffset));
  std::vector<float> a_scale(static_cast<size_t>(rows));
  const float* px = xr.data_ptr<float>();
  for (int64_t m = 0; m < rows; ++m) {
    const auto [scale, inv] = RowScale(px + m * k, k);
    a_scale[m] = scale;
    QuantizeActivationRow(px + m * k, k, inv, a.data() + m * kp);
  }
  float* po = out.data_ptr<float>();
#if T5XX_INT8_VNNI
  const bool vnni = kernel == Int8Kernel::kBest && HasVnni();
#else
  const bool vnni = false;
  (void)kernel;
#endif
  const int64_t blocks = device::ChunkCount(n, kInt8ColumnBlock);  // 64: a multiple of 16
  auto run = [&](int64_t first, int64_t last) {
    ColumnBlock(a.data(), a_scale.data(), rows, w, first * kInt8ColumnBlock,
                std::min(n, last * kInt8ColumnBlock), vnni, po);
  };
  device::IntraOpParallelForIfWorth(blocks, rows * k * n, kInt8ParallelWork, run);
  return out;
}

}  // namespace t5xx::models
