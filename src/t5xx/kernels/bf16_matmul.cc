// See bf16_matmul.h.
#include "t5xx/kernels/bf16_matmul.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <utility>
#include <vector>

#include "t5xx/kernels/cpu/cpu_info.h"
#include "t5xx/util/error.h"

namespace t5xx::models {

Bf16MatmulMode ParseBf16MatmulMode(const std::string& value, const std::string& what) {
  if (value.empty() || value == "auto") return Bf16MatmulMode::kAuto;
  if (value == "emulated") return Bf16MatmulMode::kEmulated;
  if (value == "native") return Bf16MatmulMode::kNative;
  throw Error(what + " = '" + value +
              "' is not a bfloat16 matmul mode: use auto (the default: native where the CPU "
              "has bfloat16 instructions and the native matmul accumulates in float32), "
              "emulated or native");
}

const char* Bf16MatmulModeName(Bf16MatmulMode mode) {
  switch (mode) {
    case Bf16MatmulMode::kEmulated:
      return "emulated";
    case Bf16MatmulMode::kNative:
      return "native";
    case Bf16MatmulMode::kAuto:
      break;
  }
  return "auto";
}

Bf16MatmulMode Bf16MatmulModeFromEnvironment() {
  const char* v = std::getenv("T5XX_BF16_MATMUL");
  return ParseBf16MatmulMode(v ? v : "", "environment variable T5XX_BF16_MATMUL");
}

namespace {

// Whether every layout of one size accumulates in float32. The case: a is
// [m, k] of ones except a[i][i % k] = 256, b is [k, n] of ones, so every
// entry of a @ b is 256 + (k - 1) * 1: 272 for k = 17, 384 for k = 129.
// Accumulated in float32 the sums are exact at every step (integers below
// 2^24), and 272 = 1.0001b x 2^8 and 384 = 1.1b x 2^8 are bfloat16 values:
// the result is 256 + (k - 1). Accumulated in bfloat16 (8 significant bits:
// between 256 and 512 the values are 2 apart), row 0 in order gives 256 + 1
// = 257, halfway between 256 and 258, rounded to even: 256; every further
// + 1 stays 256, so that row ends at 256. (Checked with numpy + ml_dtypes'
// bfloat16: functools.reduce(lambda s, x: bf16(s + x), [256.] + [1.] * 128)
// -> 256; the float32 sum -> 384, and bf16(384.) == 384.)
bool SizeAccumulatesInFloat32(int64_t m, int64_t k, int64_t n, Bf16MatmulProbe* probe) {
  const double expected = 256.0 + static_cast<double>(k - 1);
  at::Tensor a = at::ones({m, k});
  for (int64_t i = 0; i < m; ++i) a[i][i % k] = 256.0;
  a = a.to(at::kBFloat16);
  const at::Tensor b = at::ones({k, n}, at::kBFloat16);
  const at::Tensor b_rows = at::ones({n, k}, at::kBFloat16);  // b^T stored row-major
  const at::Tensor a_cols = a.t().contiguous();               // a^T stored row-major
  const at::Tensor a2 = at::stack({a, a});
  const std::vector<std::pair<std::string, at::Tensor>> layouts = {
      {"a @ b", at::matmul(a, b)},
      {"a @ b^T (the backward pass's g @ w^T)", at::matmul(a, b_rows.t())},
      {"a^T @ b (the backward pass's x^T @ g)", at::matmul(a_cols.t(), b)},
      {"[2, m, k] @ [k, n]", at::matmul(a2, b)},
      {"[2, m, k] @ [2, k, n] (attention)", at::matmul(a2, at::stack({b, b}))},
  };
  for (const auto& [name, c] : layouts) {
    const at::Tensor wrong = c.to(at::kFloat).ne(expected);
    if (wrong.any().item<bool>()) {
      if (probe->failed_layout.empty()) {
        probe->failed_layout = name + " at " + std::to_string(m) + " x " + std::to_string(k) +
                               " x " + std::to_string(n);
        probe->failed_value = c.to(at::kFloat).masked_select(wrong)[0].item<double>();
      }
      return false;
    }
  }
  return true;
}

}  // namespace

Bf16MatmulProbe ProbeNativeCpuBf16Matmul() {
  // Largest first: min_float32_multiply_adds is where the run of passing
  // sizes, from the largest down, ends.
  struct Size {
    int64_t m, k, n;
  };
  Bf16MatmulProbe probe;
  for (const Size& s : {Size{64, 129, 64}, Size{16, 17, 16}, Size{1, 17, 1}}) {
    if (!SizeAccumulatesInFloat32(s.m, s.k, s.n, &probe)) break;
    probe.accumulates_in_float32 = true;
    probe.min_float32_multiply_adds = s.m * s.k * s.n;
  }
  return probe;
}

std::string Bf16MatmulChoice::Describe() const {
  std::ostringstream out;
  std::string accumulation;
  if (!probe.accumulates_in_float32) {
    accumulation = "libtorch's native bfloat16 matmul accumulates in bfloat16 here";
  } else if (probe.min_float32_multiply_adds > 17) {
    accumulation = "libtorch's native bfloat16 matmul accumulates in float32 here from " +
                   std::to_string(probe.min_float32_multiply_adds) +
                   " multiply-adds per product, in bfloat16 below";
  } else {
    accumulation = "libtorch's native bfloat16 matmul accumulates in float32 here";
  }
  const std::string features =
      cpu_has_bf16 ? "the CPU has bfloat16 instructions" : "the CPU lacks avx512_bf16 and amx_bf16";
  if (native) {
    // Every size it runs natively was found to accumulate in float32.
    const bool verified =
        probe.accumulates_in_float32 &&
        probe.min_float32_multiply_adds <= std::max<int64_t>(min_native_multiply_adds, 17);
    out << "native (at::matmul on bfloat16 operands";
    if (min_native_multiply_adds > 17) {
      out << " for products of >= " << min_native_multiply_adds << " multiply-adds, emulated below";
    }
    out << "; ";
    if (mode == Bf16MatmulMode::kNative) out << "T5XX_BF16_MATMUL=native; ";
    out << features << "; "
        << (verified ? "the probe verified float32 accumulation"
                     : accumulation + ": results differ from t5x's")
        << ")";
  } else {
    out << "emulated: float32 matmul on widened operands (";
    if (mode == Bf16MatmulMode::kEmulated) out << "T5XX_BF16_MATMUL=emulated; ";
    out << features << "; " << accumulation << ")";
  }
  return out.str();
}

Bf16MatmulChoice ChooseBf16Matmul(Bf16MatmulMode mode, bool cpu_has_bf16,
                                  const Bf16MatmulProbe& probe) {
  Bf16MatmulChoice c;
  c.mode = mode;
  c.cpu_has_bf16 = cpu_has_bf16;
  c.probe = probe;
  switch (mode) {
    case Bf16MatmulMode::kEmulated:
      c.native = false;
      break;
    case Bf16MatmulMode::kNative:
      c.native = true;
      c.min_native_multiply_adds = 0;
      break;
    case Bf16MatmulMode::kAuto:
      c.native = cpu_has_bf16 && probe.accumulates_in_float32;
      c.min_native_multiply_adds = c.native ? probe.min_float32_multiply_adds : 0;
      break;
  }
  return c;
}

namespace {

std::mutex g_mutex;
std::optional<Bf16MatmulChoice> g_choice;  // guarded by g_mutex
std::optional<Bf16MatmulProbe> g_probe;    // guarded by g_mutex
std::atomic<int> g_native{-1};             // -1 undecided, else g_choice->native
std::atomic<int64_t> g_min_native{0};      // g_choice->min_native_multiply_adds

// Decides with `mode` (g_mutex held).
void DecideLocked(Bf16MatmulMode mode) {
  if (!g_probe) g_probe = ProbeNativeCpuBf16Matmul();
  g_choice = ChooseBf16Matmul(mode, device::HostCpuInfo().HasNativeBf16(), *g_probe);
  g_min_native.store(g_choice->min_native_multiply_adds, std::memory_order_relaxed);
  g_native.store(g_choice->native ? 1 : 0, std::memory_order_release);
}

}  // namespace

Bf16MatmulChoice CpuBf16Matmul() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_choice) DecideLocked(Bf16MatmulModeFromEnvironment());
  return *g_choice;
}

bool NativeCpuBf16Matmul() {
  const int v = g_native.load(std::memory_order_acquire);
  if (v >= 0) return v == 1;
  return CpuBf16Matmul().native;
}

bool NativeCpuBf16MatmulFor(const at::Tensor& a, const at::Tensor& b) {
  if (!NativeCpuBf16Matmul()) return false;
  const int64_t min = g_min_native.load(std::memory_order_relaxed);
  if (min <= 0 || a.dim() < 2 || b.dim() < 2) return true;
  // batch x M x K x N: a's elements times N, or b's times M, whichever
  // batch (a's or b's, broadcast) is larger.
  const int64_t macs = std::max(a.numel() * b.size(-1), b.numel() * a.size(-2));
  return macs >= min;
}

void SetCpuBf16MatmulMode(Bf16MatmulMode mode) {
  std::lock_guard<std::mutex> lock(g_mutex);
  DecideLocked(mode);
}

}  // namespace t5xx::models
