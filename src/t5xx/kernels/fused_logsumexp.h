// The per-token pieces of t5x's cross-entropy over the vocabulary --
// logsumexp of the logits, the target's logit and the argmax -- as one read
// of float32 CPU logits forward and one write of their gradient backward.
//
// Why (issue 16): as ATen ops (logsumexp, gather, argmax; in the backward
// logsumexp's sub/exp/mul, gather's zero fill and scatter, and autograd's
// add of the two gradients) the [B, L, V] logits were read or written about
// ten times: ~40 ms of T5.1.1 tiny's 210 ms step on 2 cores (V = 32128).
//
// Forward per row: m = max, argmax = first index of m, lse = m + log(sum
// exp(x - m)) (exp is device::ExpApprox; sums in 16 interleaved partial
// sums added in a fixed order), target_logit = x[target]. Backward:
// dlogits = g_lse * exp(x - lse) + g_target * onehot(target), as the
// gradients of ATen's logsumexp and gather add up. Results do not depend on
// the thread count.
#pragma once

#include <ATen/core/Tensor.h>

namespace t5xx::models {

struct LogSumExpPieces {
  at::Tensor lse;           // [...] float32, differentiable in the logits
  at::Tensor target_logit;  // [...] float32, differentiable in the logits
  at::Tensor argmax;        // [...] int64, first index of the maximum
};

// Whether FusedLogSumExp applies: logits a float32 CPU tensor [..., V] with
// V >= 1 and targets an int64 CPU tensor of logits' leading shape.
bool FusedLogSumExpApplies(const at::Tensor& logits, const at::Tensor& targets);

// See the file comment. Agrees with at::logsumexp / gather / argmax to float32
// rounding (lse to about 1e-6 relative). Throws t5xx::Error where
// FusedLogSumExpApplies is false, or naming the first target outside
// [0, V) and V.
LogSumExpPieces FusedLogSumExp(const at::Tensor& logits, const at::Tensor& targets);

}  // namespace t5xx::models
