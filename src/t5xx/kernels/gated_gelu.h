// T5.1.1's gated-GELU MLP activation, gelu(a0) * a1 (t5x MlpBlock with
// activations=('gelu', 'linear'); jax.nn.gelu's default tanh approximation),
// as one pass over memory forward and one backward on float32 CPU tensors.
//
// Why (issue 16): as separate ATen ops (gelu, mul, and in the backward
// gelu_backward and two muls) it cost T5.1.1 small about 31 ms of a 670 ms
// step on 2 cores: five passes over [B, L, mlp_dim] forward and backward,
// and ATen's tanh is a slow vector routine.
//
// Formula: gelu_tanh(x) = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715
// x^3), written as x * sigmoid(2u) = x / (1 + exp(-2u)) (the same function:
// 1 + tanh(u) = 2 sigmoid(2u)), which also keeps relative accuracy for very
// negative x where 1 + tanh(u) cancels. exp is device::ExpApprox. The
// derivative is sigmoid(2u) + x s (1 - s) 2 u'(x), s = sigmoid(2u),
// u'(x) = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
#pragma once

#include <ATen/core/Tensor.h>

namespace t5xx::models {

// Whether GatedGelu takes its fused path: a0 and a1 float32 CPU tensors of
// the same shape. Otherwise GatedGelu computes with ATen ops.
bool GatedGeluFused(const at::Tensor& a0, const at::Tensor& a1);

// gelu_tanh(a0) * a1 with autograd (no double backward). a0, a1: [...]
// any float dtype, same shape; returns the same shape and dtype. Fused
// values agree with at::gelu(a0, "tanh") * a1 to about 1e-6 relative
// (float32 rounding and ExpApprox), independent of the thread count.
at::Tensor GatedGelu(const at::Tensor& a0, const at::Tensor& a1);

// GatedGelu's forward on raw float32 data, on the calling thread (the same
// bits): h[i] = gelu_tanh(a0[i]) * a1[i] for i < n.
void GatedGeluInto(const float* a0, const float* a1, float* h, int64_t n);

}  // namespace t5xx::models
