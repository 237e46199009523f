// What t5xx's own CPU loops over raw data can read, and where each matrix
// or row of a strided tensor starts (cpu_batched_gemm.h's batch entries,
// the softmax kernel's bias rows).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace t5xx::device {

// Whether t is a defined float32 CPU tensor with strides (not sparse): data
// a raw float loop can read through t.data_ptr<float>() and t's strides.
inline bool IsFloat32CpuStrided(const at::Tensor& t) {
  return t.defined() && t.is_cpu() && t.scalar_type() == at::kFloat && t.layout() == at::kStrided;
}

// The element offsets (from t's data pointer, in elements, through t's
// strides, so broadcast dimensions of stride 0 repeat an offset) of every
// index over t's leading t.dim() - trailing_dims dimensions, in row-major
// order of that index: one offset for a tensor with no leading dimensions.
// Requires 0 <= trailing_dims <= t.dim().
std::vector<int64_t> LeadingOffsets(const at::Tensor& t, int64_t trailing_dims);

}  // namespace t5xx::device
