// Building blocks of t5x's minimal T5 network (t5x/examples/t5/layers.py),
// written as pure functions of tensors so that parallelism stays out of model
// code. All activations are float32; B = batch, L = length, E = emb_dim,
// H = num_heads, D = head_dim.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace t5xx::models {

// RMSNorm as t5x's LayerNorm: x * rsqrt(mean(x^2, -1) + eps) * scale, no mean
// subtraction, no bias. x: [..., E] float32, scale: [E].
at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& scale,
                   double epsilon = 1e-6);

// t5x's _relative_position_bucket. relative_position = key_pos - query_pos
// (int64 tensor of any shape). Bidirectional: half the buckets per sign
// (positive offsets shifted by num_buckets/2); causal: future offsets go to
// bucket 0. Offsets below max_exact = buckets/2 map to themselves; larger ones
// to max_exact + floor(log(n/max_exact + eps32) / log(max_distance/max_exact)
// * (buckets - max_exact)) capped at buckets-1 (float32 arithmetic as t5x).
// Returns int64 buckets of the same shape.
at::Tensor RelativePositionBucket(const at::Tensor& relative_position,
                                  bool bidirectional, int64_t num_buckets,
                                  int64_t max_distance);

// Relative position bias [1, H, q_len, k_len] from rel_embedding [H, buckets]
// (t5x's RelativePositionBiases with absolute row/column indices).
at::Tensor RelativePositionBias(const at::Tensor& rel_embedding, int64_t q_len,
                                int64_t k_len, bool bidirectional,
                                int64_t num_buckets, int64_t max_distance);

// Boolean attention mask [B, 1, q_len, k_len] from per-position keys:
// mask[b,0,i,j] = query_valid[b,i] && key_valid[b,j] (t5x make_attention_mask
// with jnp.multiply). Inputs are bool [B, L].
at::Tensor MakeAttentionMask(const at::Tensor& query_valid,
                             const at::Tensor& key_valid);
// Equality mask for packed segments: seg_q[b,i] == seg_k[b,j]. int [B, L].
at::Tensor MakeSegmentMask(const at::Tensor& query_segment_ids,
                           const at::Tensor& key_segment_ids);
// Causal mask [1, 1, L, L]: key position <= query position.
at::Tensor MakeCausalMask(int64_t length, const at::Device& device);

// Converts a boolean mask to an additive bias: 0 where true, -1e10 where false
// (t5x's combine_biases of the mask).
at::Tensor MaskToBias(const at::Tensor& mask);

// Dropout (flax.linen.Dropout): when train and rate > 0, zeroes each element
// with probability `rate` and scales the rest by 1/(1-rate); otherwise x.
// Draws from `rng` (t5xx derives one per step from (random_seed, step), so
// runs are reproducible); a null rng draws from libtorch's default generator.
at::Tensor Dropout(const at::Tensor& x, double rate, bool train,
                   at::Generator* rng);

// Multi-head dot-product attention without bias terms and without run-time
// 1/sqrt(D) scaling (t5x folds it into the query initialisation).
// inputs_q: [B, Lq, E], inputs_kv: [B, Lk, E]; kernels: query/key/value
// [E, H*D], out [H*D, E]; bias: additive, broadcastable to [B, H, Lq, Lk].
// Softmax in float32. dropout_rate applies to the attention probabilities when
// training (broadcast over the query axis, as t5x), drawing from rng (see
// Dropout). Returns [B, Lq, E].
at::Tensor MultiHeadDotProductAttention(
    const at::Tensor& inputs_q, const at::Tensor& inputs_kv,
    const at::Tensor& query_kernel, const at::Tensor& key_kernel,
    const at::Tensor& value_kernel, const at::Tensor& out_kernel,
    int64_t num_heads, const at::Tensor& bias, double dropout_rate,
    bool train, at::Generator* rng = nullptr);

// t5x's MlpBlock: for activations (a_0, a_1, ...) computes
// prod_i a_i(x @ wi_i) then @ wo. ('gelu','linear') is T5.1.1's gated GELU
// with flax's tanh-approximate gelu. x: [B, L, E]; wi[i]: [E, F]; wo: [F, E].
at::Tensor MlpBlock(const at::Tensor& x, const std::vector<at::Tensor>& wi,
                    const at::Tensor& wo,
                    const std::vector<std::string>& activations,
                    double dropout_rate, bool train, at::Generator* rng = nullptr);

}  // namespace t5xx::models
