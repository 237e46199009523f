// Attention of one query position over keys and values read in place: t5x's
// dot_product_attention for a decode step (queries of length 1; the keys
// and values of the key/value cache or of the encoder output), one pass per
// (row, head) on float32 CPU tensors, inference only.
//
// Why (issue 54): as attention_matmul.h's batched sgemm, attention_softmax.h
// and a second batched sgemm, a decode step paid three kernel launches (an
// OpenMP region each, a sgemm call per head) per attention for products of
// 1 x D x N: for T5.1.1 small decoding greedily at batch 1 that was 10% of
// the decode time, spent on work of a few microseconds.
//
// Per (row b, head h): l_j = q . k_j + bias_j over the N keys, p = exp(l -
// max l) / sum, out = sum_j p_j v_j; a row's heads go together, keys in
// order and heads inside (a cache [L, H, D] read as one stream), and keys
// whose bias is <= -1e9 (t5x's -1e10 masks: the cache beyond the decoded
// position, the inputs' padding) are not read and, when some key is not
// masked, add nothing (their exp is exactly 0 either way); exp is device::ExpApprox (exactly 0
// where a -1e10 mask bias pushes l_j - max below -87.3, as
// attention_softmax.h), the dot products and sums use kSumLanes interleaved
// partial sums in a fixed order: results do not depend on the thread count.
// They differ from the three-kernel path by float rounding only (the
// products are summed in another order).
#pragma once

#include <ATen/core/Tensor.h>

namespace t5xx::models {

// Whether DecodeAttention applies: q [B, H, 1, D], k and v [Bkv, H, N, D]
// with B a multiple of Bkv (row r of q attends to row r / (B / Bkv) of k
// and v: an example's beams share its encoder output's keys and values),
// float32 CPU tensors with unit stride along D (any other strides: the
// heads' views of [B, L, H*D] projections and caches), none requiring
// gradients while grad mode is on; bias undefined or a float32 CPU tensor
// broadcastable to [Bkv, H, 1, N] whose last size is N (its rows are k's).
bool DecodeAttentionFused(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const at::Tensor& bias);

// softmax(q k^T + bias) v for the shapes DecodeAttentionFused takes, as
// float32 [B, 1, H, D] contiguous (the heads inner: [B, 1, H*D] as a view).
// Throws std::invalid_argument when DecodeAttentionFused is false. No
// autograd.
at::Tensor DecodeAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           const at::Tensor& bias);

// One operand of DecodeAttentionInto: float32 data with D contiguous and the
// strides, in floats, of its row (b), head (h) and key position (j; unused
// for q). A bias operand's data may be null (no bias); its strides are
// those of a [Bkv, H, 1, N] view (0 where it broadcasts).
struct DecodeAttentionOperand {
  const float* data = nullptr;
  int64_t b = 0, h = 0, j = 0;
};

// DecodeAttention on raw data (the same bits): out [rows, H, D] contiguous
// from q [rows, H, D], k, v and bias over n keys, with rows / group rows of
// k, v and bias (row r reads row r / group). For a caller that holds the
// data (a fused decode step, few_row_decoder.h).
void DecodeAttentionInto(const DecodeAttentionOperand& q, const DecodeAttentionOperand& k,
                         const DecodeAttentionOperand& v, const DecodeAttentionOperand& bias,
                         int64_t rows, int64_t group, int64_t heads, int64_t n, int64_t d,
                         float* out);

}  // namespace t5xx::models
