// t5x's RMS LayerNorm (layers.py LayerNorm: x * rsqrt(mean(x^2) + eps) *
// scale) as one pass forward and one backward over float32 CPU rows.
//
// Why (issue 16): as ATen ops (pow, mean, add, rsqrt, two muls, and in the
// backward their gradients plus autograd's accumulation of x's two uses) each
// of T5.1.1 small's 42 norms per step read and wrote [B, L, E] about ten
// times: ~25 ms of a 670 ms step on 2 cores.
//
// Backward (r = rsqrt(mean(x^2) + eps), x^ = x r, gs = g * scale):
//   dx = r (gs - x^ mean(gs x^)),  dscale = sum over rows of g x^.
// Sums run in 16 interleaved float32 partial sums added in a fixed order,
// and dscale adds fixed blocks of rows in order, so results do not depend
// on the thread count (they may differ in the last bits between CPUs with
// and without FMA).
#pragma once

#include <ATen/core/Tensor.h>

namespace t5xx::models {

// Whether FusedRmsNorm applies: x float32 on the CPU with >= 1 dimension,
// scale a float32 CPU vector of x's last size.
bool FusedRmsNormApplies(const at::Tensor& x, const at::Tensor& scale);

// (x * rsqrt(mean(x^2, -1) + epsilon)) * scale with autograd for x and
// scale (no double backward). x: [..., E] float32, scale: [E] float32;
// returns [..., E] float32. Agrees with the ATen formula to float32
// rounding. Throws t5xx::Error where FusedRmsNormApplies is false.
at::Tensor FusedRmsNorm(const at::Tensor& x, const at::Tensor& scale, double epsilon);

// FusedRmsNorm's forward on raw float32 data, on the calling thread (the
// same bits): y [rows, e] from x [rows, e] and scale [e], all contiguous.
// For a caller holding a few rows (a fused decode step, few_row_decoder.h).
void RmsNormRowsInto(const float* x, int64_t rows, int64_t e, const float* scale,
                     double epsilon, float* y);

}  // namespace t5xx::models
