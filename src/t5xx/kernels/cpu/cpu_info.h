// The host CPU as Linux's /proc/cpuinfo describes it: its model name and the
// instruction-set flags that decide which matmul kernels libtorch runs.
// t5xx keys its cached matmul peak on them (trainer/matmul_peak.h) and
// chooses its bfloat16 matmul by them (kernels/bf16_matmul.h).
#pragma once

#include <set>
#include <string>

namespace t5xx::device {

struct CpuInfo {
  // "model name" of the first processor (x86), e.g. "AMD EPYC 7B13"; else
  // "" (e.g. aarch64 kernels, which print no model name).
  std::string model_name;
  // The first processor's "flags" (x86) or "Features" (aarch64) words.
  std::set<std::string> flags;

  bool Has(const std::string& flag) const { return flags.count(flag) > 0; }
  // Whether the CPU has bfloat16 dot-product instructions: x86's
  // avx512_bf16 (AVX512-BF16) or amx_bf16 (AMX), or aarch64's bf16
  // (Armv8.6 BF16). oneDNN's bfloat16 GEMM uses them when present.
  bool HasNativeBf16() const;
  // The flags among MatmulFlags() that this CPU has, in that order,
  // space-separated ("" when none), e.g. "avx2 fma avx512f".
  std::string MatmulFlagsString() const;
};

// The flags that change which GEMM kernel runs (in this order): avx2, fma,
// avx512f, avx512_bf16, amx_bf16, amx_tile, asimd, sve, bf16.
const std::set<std::string>& MatmulFlagSet();

// The CpuInfo of /proc/cpuinfo's text: the first "model name" and the first
// "flags" (or "Features") line; fields of later processors are ignored.
// Text without them gives empty fields.
CpuInfo ParseCpuInfo(const std::string& cpuinfo_text);

// ParseCpuInfo of this machine's /proc/cpuinfo, read once; empty fields
// where the file cannot be read (not Linux).
const CpuInfo& HostCpuInfo();

}  // namespace t5xx::device
