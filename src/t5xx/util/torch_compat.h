// The one place where libtorch version differences live.
//
// t5xx builds against Debian's libtorch 1.13 (CPU) and against libtorch 2.x
// (CPU or CUDA) given with CMAKE_PREFIX_PATH. Any call whose spelling differs
// between those versions goes through a helper here; nothing else in the tree
// tests TORCH_VERSION_*. Build-level differences (string ABI, CUDA/NVTX) are
// handled in the one block after find_package(Torch) in CMakeLists.txt.
// Verified: Debian's 1.13, and PyPI's 2.5.1, 2.7.1 and 2.15.0 (CUDA builds,
// on CPU).
#pragma once

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/version.h>

#include <stdexcept>

namespace t5xx::compat {

inline constexpr int kTorchMajor = TORCH_VERSION_MAJOR;
inline constexpr int kTorchMinor = TORCH_VERSION_MINOR;
// "1.13.0", "2.15.0": the libtorch this binary was built against (the
// matmul peak cache keys on it, trainer/matmul_peak.h).
inline constexpr const char* kTorchVersion = TORCH_VERSION;

// GELU with the tanh approximation (flax.linen.gelu's default, which t5x's
// T5.1.1 MLP uses). The `approximate` string argument exists since 1.12.
inline at::Tensor GeluTanh(const at::Tensor& x) { return at::gelu(x, "tanh"); }

// A CPU generator seeded with `seed`, used for parameter initialisation.
inline at::Generator MakeCpuGenerator(uint64_t seed) {
  return at::detail::createCPUGenerator(seed);
}

// CUDA matmul precision (device::SetCudaMatmulPrecision): TF32 for float32
// matmuls and convolutions only when allowed; bfloat16 GEMMs with or
// without cuBLAS's reduced-precision split-K reductions (without: float32
// accumulation throughout, as XLA's dot). libtorch 1.13 has no switch for
// the latter (its default: allowed).
inline void SetCudaMatmulPrecision(bool allow_tf32, bool allow_bf16_reduction) {
  at::globalContext().setAllowTF32CuBLAS(allow_tf32);
  at::globalContext().setAllowTF32CuDNN(allow_tf32);
#if TORCH_VERSION_MAJOR >= 2
  at::globalContext().setAllowBF16ReductionCuBLAS(allow_bf16_reduction);
#else
  (void)allow_bf16_reduction;
#endif
}

// ---- Fused attention (at::scaled_dot_product_attention) ----
// Public in ATen since 2.0 as (query, key, value, attn_mask, dropout_p,
// is_causal); the keyword `scale` (default 1/sqrt(D)) was added in 2.1,
// `enable_gqa` in 2.5. 2.15's declaration (ATen/ops/
// scaled_dot_product_attention.h): (query, key, value, attn_mask = {},
// dropout_p = 0.0, is_causal = false, scale = nullopt, enable_gqa = false).
// 1.13 has only the private at::_scaled_dot_product_attention, without
// `scale`. T5 needs scale = 1 (no run-time scaling), hence 2.1.
inline constexpr bool kHasFusedAttention =
    TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1);

// softmax(q @ k^T * scale + bias) @ v through libtorch's fused kernels
// (flash / memory-efficient / cuDNN on CUDA, flash or the math fallback on
// the CPU; libtorch picks). q: [B, H, Lq, D], k: [B, H, Lk, D], v:
// [B, H, Lk, Dv], all one float dtype; bias: additive float mask of q's dtype
// broadcastable to [B, H, Lq, Lk], or undefined for none. No dropout, not
// causal (masks come in the bias). Returns [B, H, Lq, Dv] in q's dtype.
// Gradients flow to q, k, v and (where the kernel computes it) the bias.
// Throws std::logic_error when !kHasFusedAttention: callers check it first.
inline at::Tensor ScaledDotProductAttention(const at::Tensor& q, const at::Tensor& k,
                                            const at::Tensor& v, const at::Tensor& bias,
                                            double scale) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  // c10::optional: std::optional since 2.4, its own class in 2.1-2.3.
  c10::optional<at::Tensor> mask;
  if (bias.defined()) mask = bias;
  return at::scaled_dot_product_attention(q, k, v, mask, /*dropout_p=*/0.0,
                                          /*is_causal=*/false, scale);
#else
  (void)q, (void)k, (void)v, (void)bias, (void)scale;
  throw std::logic_error(
      "ScaledDotProductAttention needs libtorch >= 2.1 (check kHasFusedAttention)");
#endif
}

// Which kernel ScaledDotProductAttention would run for these inputs (and the
// current grad flags): "math" (libtorch's unfused fallback), "flash",
// "efficient", "cudnn", "overrideable", or "unknown" (libtorch < 2.5, whose
// private at::_fused_sdp_choice has another signature, or a new value). For
// tests and diagnostics; the numbering is SDPBackend's in ATen/native/
// transformers/sdp_utils_cpp.h (math 0, flash 1, efficient 2, cudnn 3,
// overrideable 4). Note: libtorch picks "math" whenever the float mask
// requires grad (check_attn_mask_shape) on the CPU.
inline const char* FusedAttentionBackend(const at::Tensor& q, const at::Tensor& k,
                                         const at::Tensor& v, const at::Tensor& bias,
                                         double scale) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
  c10::optional<at::Tensor> mask;
  if (bias.defined()) mask = bias;
  switch (at::_fused_sdp_choice(q, k, v, mask, 0.0, false, scale)) {
    case 0: return "math";
    case 1: return "flash";
    case 2: return "efficient";
    case 3: return "cudnn";
    case 4: return "overrideable";
    default: return "unknown";
  }
#else
  (void)q, (void)k, (void)v, (void)bias, (void)scale;
  return "unknown";
#endif
}

// Which of libtorch's attention kernels ScaledDotProductAttention may pick
// (Python's torch.backends.cuda.enable_{flash,mem_efficient,cudnn,math}_sdp):
// at::globalContext().setSDPUse{Flash,MemEfficient,CuDNN,Math}, all four in
// 2.4 and later (2.15's ATen/Context.h; earlier releases lack the cuDNN one
// or all of them, so 2.4 is taken). Returns false, changing nothing, on a
// libtorch without them.
inline bool SetSdpaBackends(bool flash, bool efficient, bool cudnn, bool math) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  at::globalContext().setSDPUseFlash(flash);
  at::globalContext().setSDPUseMemEfficient(efficient);
  at::globalContext().setSDPUseCuDNN(cudnn);
  at::globalContext().setSDPUseMath(math);
  return true;
#else
  (void)flash, (void)efficient, (void)cudnn, (void)math;
  return false;
#endif
}

// ---- Fused RMS normalisation (at::rms_norm) ----
// at::rms_norm(input, normalized_shape, weight = {}, eps = nullopt) is public
// since 2.4, first as a composite of pow/mean/rsqrt (the arithmetic t5xx does
// itself); since 2.8 (pytorch#153666) it dispatches CUDA tensors to one fused
// kernel, aten::_fused_rms_norm (present in 2.15's headers). Only the fused
// kernel is worth calling, hence 2.8. (The 2.8 boundary comes from the
// pull request's date, not from a 2.8 build.)
inline constexpr bool kHasFusedRmsNorm =
    TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 8);

// x * rsqrt(mean(x^2, -1) + eps) over the last axis, without a weight, in
// x's dtype (t5xx passes float32). x: [..., E]. Returns x's shape and dtype.
// Throws std::logic_error when !kHasFusedRmsNorm: callers check it first.
inline at::Tensor RmsNormalize(const at::Tensor& x, double epsilon) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 8)
  return at::rms_norm(x, {x.size(-1)}, c10::nullopt, epsilon);
#else
  (void)x, (void)epsilon;
  throw std::logic_error("RmsNormalize needs libtorch >= 2.8 (check kHasFusedRmsNorm)");
#endif
}

// ---- Multi-tensor copy (at::_foreach_copy_) ----
// dst[i].copy_(src[i]) for every i (equal shapes, any dtypes): libtorch's
// multi-tensor kernel -- on CUDA a launch per chunk of tensors instead of one
// per tensor -- where it exists (added by pytorch#107226, merged 2023-08, so
// 2.1 or 2.2; 2.2 is taken; present in 2.15's ATen/ops), else one copy_
// each. The same values either way (a copy).
inline void ForeachCopy(at::TensorList dst, at::TensorList src) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
  at::_foreach_copy_(dst, src);
#else
  for (size_t i = 0; i < dst.size(); ++i) dst[i].copy_(src[i]);
#endif
}

// ---- Gated GELU ----
// libtorch (checked: 2.15's ATen/ops) has no public fused gated-GELU op:
// at::glu gates with a sigmoid, and there is no geglu. T5.1.1's
// gelu(x @ wi_0) * (x @ wi_1) stays two matmuls, at::gelu and a multiply.

}  // namespace t5xx::compat

// c10::Allocator, which device/cpu_caching_allocator.cc implements: from 2.3
// allocate() is no longer const and copy_data() must be overridden (1.13:
// `DataPtr allocate(size_t) const`, no copy_data; 2.15: `DataPtr
// allocate(size_t)`, pure virtual copy_data). Macros, since they change a
// declaration.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define T5XX_ALLOCATOR_ALLOCATE_CONST
#define T5XX_ALLOCATOR_HAS_COPY_DATA 1
#else
#define T5XX_ALLOCATOR_ALLOCATE_CONST const
#define T5XX_ALLOCATOR_HAS_COPY_DATA 0
#endif
