// Elementwise float32 math that GCC and Clang vectorise inside t5xx's own
// CPU loops (kernels/cpu/intra_op_parallel.h), and a way to compile such loops
// for the CPU at hand.
//
// Why: t5xx is compiled for baseline x86-64 (SSE2) so one binary runs on
// every machine, and libm's expf is a scalar call that stops a loop from
// vectorising. T5XX_CPU_CLONES compiles a function three times (AVX-512,
// AVX2+FMA, baseline) and the dynamic loader picks the best one the CPU has
// (GCC/Clang target_clones, an ifunc); ExpApprox is plain arithmetic that
// each of those clones turns into vector instructions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
#define T5XX_CPU_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define T5XX_CPU_CLONES
#endif

namespace t5xx::device {

// exp(x) for float32 x, relative error below 2e-7 (about 2 ulp) for x in
// [-87.3, 88.3]; below it the result is 0 (float32's exp is subnormal
// there: flushed, as a masked attention logit of -1e10 needs), above it
// 2.0e38 (clamped, not inf); NaN gives an unspecified value. Method: Cody-Waite reduction x = n ln2 + r, |r| <=
// ln2/2, with ln2 in two parts, and Cephes' degree-6 minimax polynomial for
// exp(r) (S. L. Moshier, Cephes Math Library, expf.c), scaled by 2^n built in
// the exponent bits.
inline float ExpApprox(float x) {
  // Selects, not branches, so the loop around it vectorises.
  const bool underflow = x < -87.3f;
  // NaN goes through as NaN; the arithmetic below runs on 0 instead (a
  // NaN's integer conversion and the shift after it are undefined).
  const float in = x;
  const bool is_nan = x != x;
  x = is_nan ? 0.0f : x;
  x = std::max(x, -87.3f);
  x = std::min(x, 88.3f);
  // n = round(x / ln2): adding and subtracting 1.5 * 2^23 rounds to an
  // integer (float32 has 23 fraction bits), plain arithmetic that vectorises
  // without SSE4.1's round instruction.
  const float nf = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const int32_t n = static_cast<int32_t>(nf);
  float r = x - nf * 0.693359375f;
  r = r - nf * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  const uint32_t bits = static_cast<uint32_t>(n + 127) << 23;  // n + 127 in [1, 254]
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return is_nan ? in : (underflow ? 0.0f : y * scale);
}

// Lanes of the interleaved partial sums below: a multiple of every vector
// width (16 floats fill an AVX-512 register), so each clone vectorises them.
inline constexpr int kSumLanes = 16;

// sum of a[i] * b[i] over n, in kSumLanes interleaved float32 partial sums
// added in a fixed order: the same value on every thread count (and, up to
// FMA contraction, every instruction set). Inline, so a T5XX_CPU_CLONES
// caller compiles it for its own instruction set.
inline float DotLanes(const float* a, const float* b, int64_t n) {
  float acc[kSumLanes] = {};
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes) {
    for (int j = 0; j < kSumLanes; ++j) acc[j] += a[i + j] * b[i + j];
  }
  for (int j = 0; i < n; ++i, ++j) acc[j] += a[i] * b[i];
  float total = 0.0f;
  for (int j = 0; j < kSumLanes; ++j) total += acc[j];
  return total;
}

// x[i] = ExpApprox(x[i] - shift) for i < n, returning their sum in
// kSumLanes interleaved partial sums added in a fixed order (a softmax's
// numerators and denominator). Inline, so a T5XX_CPU_CLONES caller compiles
// it for its own instruction set.
inline float ExpShiftedSum(float* x, int64_t n, float shift) {
  float acc[kSumLanes] = {};
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes) {
    for (int j = 0; j < kSumLanes; ++j) {
      const float e = ExpApprox(x[i + j] - shift);
      x[i + j] = e;
      acc[j] += e;
    }
  }
  for (int j = 0; i < n; ++i, ++j) {
    const float e = ExpApprox(x[i] - shift);
    x[i] = e;
    acc[j] += e;
  }
  float sum = 0.0f;
  for (int j = 0; j < kSumLanes; ++j) sum += acc[j];
  return sum;
}

}  // namespace t5xx::device
