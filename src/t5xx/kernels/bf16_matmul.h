// Which bfloat16 matmul MatmulIn (layers.h) runs on the CPU: libtorch's
// native one, or t5xx's emulation (operands widened to float32, a float32
// matmul, the result rounded once to bfloat16).
//
// t5x's bfloat16 dots accumulate in float32 (XLA's dot on the CPU and
// TPU). libtorch's native CPU bfloat16 matmul does so where it reaches
// oneDNN's bfloat16 GEMM (CPUs with AVX512-BF16 or AMX, where it can run at
// up to about twice the float32 rate; not yet measured by this project), but
// its fallback GEMM (libtorch 1.13 on CPUs without them, e.g. AVX2-only;
// also slow there: 5 against float32's 71 GFLOP/s at 1024^3 on a 2-core
// AMD EPYC, bench/train_bench.cc BM_MatmulPeak) accumulates in bfloat16:
// 256 + 1 stays 256.
// So the native path is taken only where it is both fast and right:
//   auto (default)  native when the CPU has avx512_bf16, amx_bf16 or
//                   (aarch64) bf16, and a probe finds float32 accumulation,
//                   for products at least as large as the probe found it
//                   from (smaller ones are emulated); else emulated;
//   emulated        always the emulation;
//   native          always libtorch's native matmul (for measuring it;
//                   results differ from t5x where it accumulates in bfloat16).
// The mode comes from the environment variable T5XX_BF16_MATMUL
// (auto|emulated|native; unset or empty = auto), read at the first bfloat16
// matmul; SetCpuBf16MatmulMode changes it later (tests, benchmarks).
// GPUs always use the native matmul (cuBLAS accumulates in float32).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <string>

namespace t5xx::models {

enum class Bf16MatmulMode { kAuto, kEmulated, kNative };

// "auto" (or ""), "emulated", "native". Throws t5xx::Error naming `what`
// (e.g. "T5XX_BF16_MATMUL") and the accepted values for anything else.
Bf16MatmulMode ParseBf16MatmulMode(const std::string& value, const std::string& what);
const char* Bf16MatmulModeName(Bf16MatmulMode mode);

// ParseBf16MatmulMode of $T5XX_BF16_MATMUL (kAuto when unset).
Bf16MatmulMode Bf16MatmulModeFromEnvironment();

// What the probe found: whether libtorch's native CPU bfloat16 matmul
// accumulates in float32, in every layout MatmulIn uses (a @ b, a @ b^T and
// a^T @ b as in the backward pass, [2, m, k] @ [k, n], and batched
// [2, m, k] @ [2, k, n] as attention), at three sizes: m x k x n = 1 x 17
// x 1, 16 x 17 x 16 and 64 x 129 x 64 multiply-adds per matrix (libtorch
// hands only products above 16^3 multiply-adds to oneDNN; smaller ones go to
// its fallback GEMM, which 1.13 accumulates in bfloat16).
struct Bf16MatmulProbe {
  bool accumulates_in_float32 = false;  // at the largest size
  // The smallest probed size (multiply-adds, m * k * n) from which every
  // larger probed size accumulates in float32; 0 when the largest does not.
  int64_t min_float32_multiply_adds = 0;
  std::string failed_layout;  // the first failure seen ("" when none)
  double failed_value = 0;    // the value it gave instead of 256 + (k - 1)
};
// Runs the probe (microseconds). See the .cc for the case and its arithmetic.
Bf16MatmulProbe ProbeNativeCpuBf16Matmul();

// The decision and why.
struct Bf16MatmulChoice {
  Bf16MatmulMode mode = Bf16MatmulMode::kAuto;
  // MatmulIn runs at::matmul on bfloat16 operands for products of at least
  // min_native_multiply_adds (smaller ones are emulated: the probe did not
  // find float32 accumulation there; 0 when forced native).
  bool native = false;
  int64_t min_native_multiply_adds = 0;
  bool cpu_has_bf16 = false;  // device::CpuInfo::HasNativeBf16
  Bf16MatmulProbe probe;      // what the probe found
  // One line for logs, e.g. "native (oneDNN; the CPU has avx512_bf16; the
  // probe verified float32 accumulation)" or "emulated: float32 matmul on
  // widened operands (the CPU lacks avx512_bf16 and amx_bf16; libtorch's
  // native bfloat16 matmul accumulates in bfloat16 here)".
  std::string Describe() const;
};

// The decision for a mode, the CPU's features and the probe's finding
// (pure): kEmulated -> emulated, kNative -> native for every size, kAuto ->
// native iff cpu_has_bf16 && probe.accumulates_in_float32, for products of
// at least probe.min_float32_multiply_adds.
Bf16MatmulChoice ChooseBf16Matmul(Bf16MatmulMode mode, bool cpu_has_bf16,
                                  const Bf16MatmulProbe& probe);

// This process's decision: at the first call, the mode from the environment,
// the host's CPU flags and the probe; afterwards the same (thread-safe).
// Throws t5xx::Error for a bad T5XX_BF16_MATMUL (then again at the next call).
Bf16MatmulChoice CpuBf16Matmul();
// CpuBf16Matmul().native, without copying.
bool NativeCpuBf16Matmul();
// Whether MatmulIn runs a @ b (bfloat16 operands on the CPU, a: [..., M, K],
// b: [..., K, N]) natively: the choice is native and the product has at
// least min_native_multiply_adds multiply-adds (batch x M x K x N).
bool NativeCpuBf16MatmulFor(const at::Tensor& a, const at::Tensor& b);
// Decides again with `mode` (the CPU flags and the probe as before).
void SetCpuBf16MatmulMode(Bf16MatmulMode mode);

}  // namespace t5xx::models
