// The device tests run their numerics on, and how far a GPU may move them
// from the goldens.
//
//   T5XX_TEST_DEVICE unset or "cpu"  the CPU: every test as it always was
//                                     (same code path, same tolerances)
//   T5XX_TEST_DEVICE=cuda | cuda:N    that GPU (scripts/gpu_check.sh sets it)
//
// Device-aware tests put parameters and batches on TestDevice() and bring
// results back to the CPU (ToHost) before comparing with the goldens, which
// are always CPU tensors.
#pragma once

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string>

#include "t5xx/device/device.h"

namespace t5xx::test_device {

// The device named by T5XX_TEST_DEVICE (see the top), resolved once per
// process with device::ResolveDevice (LOCAL_RANK 0) and made current; on a
// GPU, float32 matmuls stay in full float32 (device::SetCudaMatmulPrecision
// (false): no TF32, unlike a run's default, so that float32 results can be
// held to the float32 goldens; bfloat16 matmuls accumulate in float32). A value that names no usable device (a typo, "cuda" on a CPU
// build or a machine without a GPU) is a test failure naming the variable,
// never a silent fall-back to the CPU: the caller's ASSERT_NO_FATAL_FAILURE
// or the first comparison then stops the test.
inline at::Device TestDevice() {
  static const struct Resolved {
    at::Device device = at::kCPU;
    std::string error;
  } resolved = [] {
    Resolved r;
    const char* env = std::getenv("T5XX_TEST_DEVICE");
    const std::string spec = env ? env : "";
    if (spec.empty() || spec == "cpu") return r;
    try {
      r.device = device::ResolveDevice(spec, /*local_rank=*/0, "T5XX_TEST_DEVICE");
      device::SetCurrentDevice(r.device);
      device::SetCudaMatmulPrecision(/*allow_tf32=*/false);
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    return r;
  }();
  if (!resolved.error.empty()) {
    ADD_FAILURE() << "T5XX_TEST_DEVICE=" << std::getenv("T5XX_TEST_DEVICE")
                  << " names no usable device: " << resolved.error;
  }
  return resolved.device;
}

inline bool OnGpu() { return TestDevice().is_cuda(); }

// `t` on the CPU (a blocking copy from a GPU; `t` itself on the CPU), for
// comparing with the goldens.
inline at::Tensor ToHost(const at::Tensor& t) { return t.defined() ? t.detach().cpu() : t; }

// The bound on max|actual - golden| / max|golden| (or the relative error of
// a scalar) for float32 results computed on TestDevice() and compared with
// float32 goldens made on the CPU: `cpu_tol` on the CPU, unchanged, and
// max(cpu_tol, 1e-4) on a GPU. Why 1e-4, ten times parity_test's 1e-5:
// float32 keeps 24 bits (6e-8 per rounding) and TF32 stays off, so every
// product is exact to float32; what moves is the order of the additions --
// cuBLAS picks tiled and split-K reduction orders by shape, the fused
// attention kernels (scaled_dot_product_attention) take the softmax in
// float32 with a running maximum, blockwise, and recompute it in the
// backward pass, and gradients of gathered rows (embeddings, the relative
// position table) are summed with atomic adds in no fixed order. Each such
// reordering of an n-term float32 sum moves it by up to ~n * 6e-8 of its
// terms' magnitude, and a gradient whose entries are small next to the
// terms summed into them (cancellation) sees that relative to its own scale
// amplified 10-100x over the tiny networks' few layers. 1e-4 still fails
// on any real mistake: a lost mask, a missing 1/sqrt(d) or a wrong bias is
// off by 1e-2 or more.
inline double Float32Tol(double cpu_tol) {
  return OnGpu() ? std::max(cpu_tol, 1e-4) : cpu_tol;
}

// The same for bfloat16 results compared with float32 or bfloat16 goldens:
// `cpu_tol` on both devices. bfloat16 rounding (2^-9 relative per rounding,
// ~1-3% over a forward pass, bf16_test.cc) dwarfs any reordering of float32
// accumulations, and the GPU rounds at the same points -- cuBLAS's bf16
// GEMMs accumulate in float32 and round once (reduced-precision split-K
// reductions off), and fused attention takes its softmax in float32 and
// rounds the probabilities once, as XLA's fused softmax does -- so the
// bounds there already hold the GPU's differences with the same headroom.
// (On unscaled random inputs a bf16 SDPA output can differ from a float32-
// softmax reference by far more, 0.28 absolute on T5 base shapes (issue
// 14); the goldens' activations are O(1) and their logits small, where it
// stays within the bounds -- a GPU run that breaks them is a finding to
// report, not a tolerance to widen.)
inline double Bfloat16Tol(double cpu_tol) { return cpu_tol; }

}  // namespace t5xx::test_device
