// x @ w with w in int8 (one float32 scale per output column) and x
// quantized to 8 bits per row as it comes: dynamic int8 inference matmuls
// on the CPU (`t5xx infer|eval --int8_weights`, issue 54).
//
// Why: decoding reads every weight once per step; at small batches that
// read is the step's cost, and int8 weights are a quarter of float32's
// bytes. At larger batches the integer dot products (AVX512-VNNI's
// vpdpbusd: 64 multiply-adds per instruction) do four times float32's
// multiply-adds per instruction. CTranslate2's int8 (its default on CPUs)
// is the same scheme: symmetric per-output-channel weight scales computed
// once, activations quantized per row at run time.
//
// Arithmetic (all exact but the two roundings to 8 bits and the final
// float products):
//   weights:     s_w[n] = max_k |w[k, n]| / 127, q_w[n, k] = round(w[k, n] /
//   s_w[n]) activations: s_x[m] = max_k |x[m, k]| / 127, q_x[m, k] = round(x[m,
//   k] / s_x[m]) out[m, n] = s_x[m] * s_w[n] * sum_k q_x[m, k] q_w[n, k]
// (round: to nearest, ties to even; an all-zero row or column has scale 0
// and gives 0; one holding a NaN or infinity gives NaN). The integer sums are
// exact (int32; |sum| <= 255 * 127 * K, K < 65536), so the result does not
// depend on the thread count or the instruction set. With AVX512-VNNI the
// activations go in as unsigned bytes q_x + 128 and 128 * sum_k q_w[n, k] is
// taken off again.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace t5xx::models {

// A float32 [K, N] kernel quantized per output column, laid out for
// vpdpbusd: columns in blocks of 16, K in groups of 4 bytes; block b's
// group j is 64 bytes, q_w[16 b + c, 4 j + t] at byte 4 c + t (zeros beyond
// K and N).
struct Int8Weight {
  at::Tensor packed;     // int8 [n_padded / 16, k_padded / 4, 16, 4]
  at::Tensor scale;      // float32 [n_padded]: s_w (0 beyond N)
  at::Tensor q_sums;     // int32 [n_padded]: sum_k q_w[n, k]
  int64_t k = 0;         // K
  int64_t k_padded = 0;  // K rounded up to a multiple of 64
  int64_t n = 0;         // N
  int64_t n_padded = 0;  // N rounded up to a multiple of 16
};

// w: float32 CPU [K, N], any strides (a kernel, or an embedding [N, K]
// transposed for the logits), K in [1, 65535]. Throws std::invalid_argument
// otherwise. Does not keep w.
Int8Weight QuantizeInt8Weight(const at::Tensor& w);

// Which integer kernel: the best this CPU has (AVX512-VNNI's where it has
// it), or the portable C++ one (for tests: both give the same bits).
enum class Int8Kernel { kBest, kPortable };

// x @ w as float32 [..., N] (x's leading shape), contiguous: x float32 CPU
// [..., K] (any strides). No autograd (inference only); throws
// std::invalid_argument when x is not float32 on the CPU or its last size
// is not w.k.
at::Tensor Int8Matmul(const at::Tensor& x, const Int8Weight& w,
                      Int8Kernel kernel = Int8Kernel::kBest);

// q_w as int8 [N, K] (row n: column n of w), unpacked: for tests.
at::Tensor Int8WeightRows(const Int8Weight& w);

// The float32 [K, N] that w stands for (s_w[n] * q_w[n, k]): for tests and
// for measuring the quantization error.
at::Tensor DequantizeInt8Weight(const Int8Weight& w);

}  // namespace t5xx::models
