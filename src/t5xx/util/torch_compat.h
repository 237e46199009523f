// The one place where libtorch version differences live.
//
// t5xx builds against Debian's libtorch 1.13 (CPU) and against libtorch 2.x
// (CPU or CUDA) given with CMAKE_PREFIX_PATH. Any call whose spelling differs
// between those versions goes through a helper here; nothing else in the tree
// tests TORCH_VERSION_*. Build-level differences (string ABI, CUDA/NVTX) are
// handled in the one block after find_package(Torch) in CMakeLists.txt.
// Verified: Debian's 1.13, and PyPI's 2.5.1 and 2.7.1 (CUDA builds, on CPU).
#pragma once

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/version.h>

namespace t5xx::compat {

inline constexpr int kTorchMajor = TORCH_VERSION_MAJOR;
inline constexpr int kTorchMinor = TORCH_VERSION_MINOR;

// GELU with the tanh approximation (flax.linen.gelu's default, which t5x's
// T5.1.1 MLP uses). The `approximate` string argument exists since 1.12.
inline at::Tensor GeluTanh(const at::Tensor& x) { return at::gelu(x, "tanh"); }

// A CPU generator seeded with `seed`, used for parameter initialisation.
inline at::Generator MakeCpuGenerator(uint64_t seed) {
  return at::detail::createCPUGenerator(seed);
}

}  // namespace t5xx::compat
