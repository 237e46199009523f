// Selecting tokens and beams as t5x does: lax.top_k's tie order and t5x's
// binary_search masks (topk_mask, topp_mask). Internal to t5xx_decoding
// (and its tests).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <utility>

namespace t5xx::decoding {

// t5x's NEG_INF: the "effective negative infinity" of masked logits and dead
// beams (finite, so that arithmetic on it stays finite).
inline constexpr double kNegInf = -1.0e7;

// The k largest entries of x [R, N] along dim 1 and their indices, in
// descending order, equal values by ascending index -- lax.top_k's order,
// which at::topk does not promise. k <= N.
std::pair<at::Tensor, at::Tensor> StableTopK(const at::Tensor& x, int64_t k);

// t5x binary_search.topk_mask: entries below the k-th largest of their row
// become replace_val (ties with the k-th are kept). k >= vocab keeps all.
at::Tensor TopKMask(const at::Tensor& x, int64_t k, double replace_val);

// The cut of t5x binary_search.topp_mask for probabilities probs [R, V]:
// threshold [R, 1] is the probability of the first token (most probable
// first) at which the running total reaches p; tokens with probs >=
// threshold are kept. When no prefix reaches p (rounding, p > 1), the
// threshold is the smallest probability: all are kept. values/indices: the
// descending prefix the threshold came from (the top 256 when they reach p
// in every row, else the whole sorted row).
struct TopPCut {
  at::Tensor threshold;
  at::Tensor values;
  at::Tensor indices;
};
TopPCut TopPThreshold(const at::Tensor& probs, double p);

// t5x binary_search.topp_mask: logits whose softmax probability is below
// TopPThreshold's become replace_val.
at::Tensor TopPMask(const at::Tensor& logits, double p, double replace_val);

}  // namespace t5xx::decoding
