// Building blocks of t5x's minimal T5 network (t5x/examples/t5/layers.py),
// written as pure functions of tensors so that parallelism stays out of model
// code. B = batch, L = length, E = emb_dim, H = num_heads, D = head_dim.
//
// Precision, as t5x's `dtype` (T5Config.dtype, TransformerConfig.dtype):
// parameters are always float32; the functions that take an activation
// `dtype` compute in it, casting inputs and parameters (t5x's
// jnp.asarray(kernel, dtype)) -- float32, or bfloat16 for t5x's mixed
// precision. With dtype float32 every cast is a no-op and the results are
// exactly those of a float32-only implementation. Gradients reach the float32
// parameters as float32 through the casts (autograd).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace t5xx::models {

// t5x's activation dtype by name: 'float32' -> kFloat, 'bfloat16' ->
// kBFloat16; throws std::invalid_argument for anything else (the configs'
// Validate gives the user-facing error first).
at::ScalarType ActivationDtype(const std::string& name);

// A matmul in `dtype` the way XLA computes a dot of that dtype (t5x's
// lax.dot_general / jnp.einsum on dtype operands): a and b (any float dtype)
// rounded to dtype, products accumulated in float32, the result rounded once
// to dtype. In float32 this is at::matmul. For bfloat16 on the CPU it is
// the native bfloat16 matmul where bf16_matmul.h chose it (the CPU has
// bfloat16 instructions and libtorch's matmul was found to accumulate in
// float32), else it multiplies the rounded operands in float32 (libtorch
// 1.13's fallback CPU bfloat16 matmul accumulates in bfloat16, where 256 + 1
// + ... + 1 stays 256), in the backward pass too, keeping only the bfloat16
// operands for it; elsewhere (CUDA) it is the native bfloat16 matmul.
// Gradients reach a and b through the casts, rounded to dtype as t5x's are.
// Operands have >= 2 dimensions; b's batch dimensions broadcast (e.g.
// [B, L, E] @ [E, F]). Inside a Remat(save_dots) block a weight matmul (b
// 2-D) is kept and not recomputed (remat.h SavedDot).
at::Tensor MatmulIn(const at::Tensor& a, const at::Tensor& b, at::ScalarType dtype);

// The gradients of a @ b (a: [..., M, K], b: [..., K, N] or [K, N], both in
// the matmul's dtype) for the output gradient `grad` [..., M, N]: g @ b^T
// summed to a's shape and a^T @ g summed to b's (one [K, N] product for a
// 2-D b), each in its operand's dtype; computed in float32 when `widen`
// (MatmulIn's float32 accumulation for bfloat16 on the CPU). Undefined
// where not needed. The backward of MatmulIn's wide-accumulation path and
// of remat.h's kept weight matmuls.
std::pair<at::Tensor, at::Tensor> MatmulOperandGradients(const at::Tensor& a, const at::Tensor& b,
                                                         const at::Tensor& grad, bool widen,
                                                         bool need_a, bool need_b);

// RMSNorm as t5x's LayerNorm (layers.py LayerNorm): x * rsqrt(mean(x^2, -1) +
// eps) * scale, no mean subtraction, no bias. x: [..., E] any float dtype,
// scale: [E] float32. The normalisation is computed in float32; its result is
// cast to `dtype` and multiplied by the scale cast to `dtype`
// (`y = jnp.asarray(x * lax.rsqrt(mean2 + eps), self.dtype)`,
// `jnp.asarray(scale, self.dtype)`). Returns [..., E] in dtype.
// On CUDA with libtorch >= 2.8 the float32 normalisation is libtorch's fused
// at::rms_norm kernel (compat::RmsNormalize; same formula, float32, rounding
// may differ in the last bit); on the CPU in float32 it is
// fused_rms_norm.h's one-pass kernel (same formula and float32 steps, sums
// in another order), otherwise pow/mean/rsqrt.
at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& scale,
                   double epsilon = 1e-6, at::ScalarType dtype = at::kFloat);

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

// Relative position bias [1, H, q_len, k_len] in `dtype` from rel_embedding
// [H, buckets] float32 (t5x's RelativePositionBiases with absolute row/column
// indices; it casts the table to its dtype, `jnp.asarray(
// relative_attention_bias, self.dtype)`, before the one-hot lookup, so the
// bias holds the table's entries rounded to dtype).
at::Tensor RelativePositionBias(const at::Tensor& rel_embedding, int64_t q_len,
                                int64_t k_len, bool bidirectional,
                                int64_t num_buckets, int64_t max_distance,
                                at::ScalarType dtype = at::kFloat);

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

// Converts a boolean mask to an additive bias in `dtype`: 0 where true, -1e10
// where false, as t5x's MultiHeadDotProductAttention does
// (`lax.select(mask > 0, full(0).astype(dtype), full(-1e10).astype(dtype))`).
// In bfloat16, -1e10 rounds to -9.9992e9 (t5x uses the same constant, so the
// values agree); a relative position bias added to it in bfloat16 (t5x's
// combine_biases) leaves it unchanged, and a fully masked row still attends
// uniformly, as in float32.
at::Tensor MaskToBias(const at::Tensor& mask, at::ScalarType dtype = at::kFloat);

// Dropout (flax.linen.Dropout with broadcast_dims=(-2,), as t5x's networks
// use it): when train and rate > 0, zeroes each element with probability
// `rate` and scales the rest by 1/(1-rate), with one mask per sequence shared
// along axis -2 (the length of [B, L, E] activations); otherwise x.
// Computed in x's dtype; below float32 (bfloat16) the kept values are
// x / (1-rate) rounded once, as flax's `inputs / keep_prob`.
// The mask is a function of position (kernels/dropout_mask.h): each call
// takes the next 64-bit key from `rng` (a CPU generator; t5xx derives one
// per step from (random_seed, step), so runs are reproducible; a null rng
// draws from libtorch's default CPU generator) and keeps each element by a
// hash of the key, its row in the global batch (this thread's
// kernels::DropoutRowOffset plus its local row) and its index in the row,
// so every layout of the same global batch draws the same masks.
// broadcast_over_length = false draws one value per element (t5x's encoder
// output dropout, the one network dropout without broadcast_dims).
at::Tensor Dropout(const at::Tensor& x, double rate, bool train,
                   at::Generator* rng, bool broadcast_over_length = true);

// Dropout of x, a slice of a tensor whose last dimension is `whole` wide
// (x holds [offset, offset + x.size(-1)) of it): the mask of the slice's
// positions in the whole tensor, so a process that holds a piece of the
// activations (partitioning's 2-D activation rules, tensor-parallel MLP
// units) drops exactly what one process drops.
at::Tensor DropoutOfSlice(const at::Tensor& x, int64_t whole, int64_t offset, double rate,
                          bool train, at::Generator* rng, bool broadcast_over_length = true);

// Which implementation AttentionHeads (and so MultiHeadDotProductAttention)
// uses for softmax(q.k^T + bias).v:
//  kUnfused: matmul, softmax, matmul, with t5x's precision (below); the
//    reference, and the only one on libtorch < 2.1.
//  kFused: libtorch's at::scaled_dot_product_attention (flash / memory-
//    efficient / cuDNN kernels on CUDA) with the bias as a float mask and
//    scale 1; those kernels keep the [B, H, Lq, Lk] probabilities out of
//    memory (the bias itself, and its gradient, still take that shape).
//    Throws t5xx::Error from AttentionHeads on a libtorch without it (< 2.1).
//  kAuto (default): kFused for tensors on a CUDA device when the libtorch
//    has it, kUnfused otherwise -- CPU results stay bit-identical to the
//    unfused implementation.
// Numerics of kFused against kUnfused (t5x): SDPA computes the softmax in
// float32 internally whatever the input dtype, and multiplies the float32
// probabilities by v without rounding them to dtype first. With float32
// inputs the two agree to float32 rounding (different summation order). With
// bfloat16 and float32_logits = false, t5x rounds the logits, the biased
// logits, the softmax and the probabilities to bfloat16; SDPA rounds none of
// them, so kFused is the more precise and differs from t5x by that
// rounding: on an H200, unscaled N(0,1) q, k, v (D 64, L 512; logits up to
// ~30, rounded to bfloat16 in steps of 0.125) gave outputs up to 0.28 apart
// (shared/tools/sdpa_bias.py). With float32_logits, kFused runs q, k,
// v in float32 and casts the output to dtype (t5x rounds the probabilities
// to dtype before @v; kFused does not). Dropout on the probabilities (broadcast
// over the query axis, one keep value per [b, h, key]) is folded into v:
// probs[b,h,i,j] * keep[b,h,j] summed with v[b,h,j,:] equals probs @
// (keep[b,h,:,None] * v), so both kernels draw the same mask (same calls on
// the same generator, same shape [B, H, 1, Lk]) and give the same result up
// to rounding for the same generator state.
// Which of its kernels libtorch runs is its choice: with a bias that
// requires grad (training: the relative-position table learns through it)
// only kernels that return a bias gradient qualify -- on CUDA the memory-
// efficient one (flash takes no bias; cuDNN's has no bias gradient in
// 2.15's derivatives.yaml), on the CPU libtorch's math fallback, which is the
// unfused arithmetic (seen with 2.15); without gradients the CPU runs its
// flash kernel.
// Fully masked query rows (padding; every bias entry -1e10): the forward
// pass attends uniformly in both kernels, as t5x. Backward kernels that
// recompute the probabilities from the saved log-sum-exp (libtorch's CPU
// flash kernel, seen with 2.15; CUDA's flash/memory-efficient kernels work
// the same way) get 1 instead of 1/Lk for them, since -1e10 + log(Lk) rounds
// to -1e10 in float32: their q/k/v gradients are wrong when the upstream
// gradient of such a row is non-zero. In T5 it is zero (padding has loss
// weight 0 and is masked as a key everywhere downstream).
// The setting is process-wide (an atomic; set it before building/running
// models, e.g. from the command line).
enum class AttentionKernel { kAuto, kFused, kUnfused };
void SetAttentionKernel(AttentionKernel kernel);
AttentionKernel attention_kernel();

// A hook for diagnostics (bench/gpu_train_bench.cc reports which of
// libtorch's kernels each attention of a step gets): called by the fused
// path with the q, k, v and mask it is about to pass to
// at::scaled_dot_product_attention. nullptr (the default): none.
// Process-wide, as the kernel setting.
using FusedAttentionObserver = void (*)(const at::Tensor& q, const at::Tensor& k,
                                        const at::Tensor& v, const at::Tensor& mask);
void SetFusedAttentionObserver(FusedAttentionObserver observer);

// Multi-head dot-product attention without bias terms and without run-time
// 1/sqrt(D) scaling (t5x folds it into the query initialisation).
// inputs_q: [B, Lq, E], inputs_kv: [B, Lk, E] (any float dtype); kernels:
// query/key/value [E, H*D], out [H*D, E] float32; bias: additive,
// broadcastable to [B, H, Lq, Lk]. dropout_rate applies to the attention
// probabilities when training (broadcast over the query axis, as t5x),
// drawing from rng (see Dropout). Returns [B, Lq, E] in dtype.
//
// Precision as t5x's layers.py MultiHeadDotProductAttention and
// dot_product_attention: inputs and kernels cast to `dtype`, projections in
// dtype (DenseGeneral; every matmul as MatmulIn); with float32_logits the query and key are cast to
// float32 first, so the logits q.k^T, the bias (cast to the logits' dtype)
// and the softmax are float32, otherwise all three are in dtype
// (`jax.nn.softmax(attn_weights)`, in the logits' dtype); the probabilities
// are then cast to dtype (`.astype(dtype)`), and dropout, probs.v and the
// output projection run in dtype.
at::Tensor MultiHeadDotProductAttention(
    const at::Tensor& inputs_q, const at::Tensor& inputs_kv,
    const at::Tensor& query_kernel, const at::Tensor& key_kernel,
    const at::Tensor& value_kernel, const at::Tensor& out_kernel,
    int64_t num_heads, const at::Tensor& bias, double dropout_rate,
    bool train, at::Generator* rng = nullptr, at::ScalarType dtype = at::kFloat,
    bool float32_logits = false);

// The attention of MultiHeadDotProductAttention between its projections:
// q [B, Lq, H*D], k and v [B, Lk, H*D] (projected, in dtype) split into
// num_heads heads; logits, bias, softmax and dropout as described above.
// Returns the heads' outputs [B, Lq, H*D] in dtype, before the output
// projection. A process holding some of the heads passes those and their
// count (and a bias with those heads, or one broadcast over heads).
// Computed by the kernel attention_kernel() selects for q's device (see
// AttentionKernel); gradients reach q, k, v and the bias either way. Throws
// t5xx::Error when kFused is set and libtorch has no fused attention.
// `slice`: these heads' place among all heads of the layer (a process
// holding some of them), so that their dropout masks are those of one
// process (kernels/dropout_mask.h).
struct HeadSlice {
  int64_t offset = 0;  // the first head's index among all heads
  int64_t total = 0;   // all heads (0: these are all)
};
at::Tensor AttentionHeads(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          int64_t num_heads, const at::Tensor& bias, double dropout_rate,
                          bool train, at::Generator* rng = nullptr,
                          at::ScalarType dtype = at::kFloat, bool float32_logits = false,
                          const HeadSlice& slice = {});

// One MLP activation by t5x's name: 'gelu' (flax's tanh approximation),
// 'relu' or 'linear'; throws std::invalid_argument for another.
at::Tensor MlpActivation(const at::Tensor& a, const std::string& activation);

// The MLP's hidden activations, t5x MlpBlock's product over i of
// activations[i](projected[i]), where projected[i] = x @ wi_i is [..., F] in
// the activation dtype (same size as activations). T5.1.1's ('gelu',
// 'linear') is one fused pass on float32 CPU tensors (gated_gelu.h). Throws
// as MlpActivation for an unknown name, and t5xx::Error when the two lists
// differ in length or are empty.
at::Tensor MlpActivations(const std::vector<at::Tensor>& projected,
                          const std::vector<std::string>& activations);

// t5x's MlpBlock: for activations (a_0, a_1, ...) computes
// prod_i a_i(x @ wi_i) then @ wo. ('gelu','linear') is T5.1.1's gated GELU
// with flax's tanh-approximate gelu. x: [B, L, E] (any float dtype); wi[i]:
// [E, F], wo: [F, E] float32. Everything runs in `dtype`: x and the kernels
// are cast to it (t5x's DenseGeneral(dtype=dtype); matmuls as MatmulIn), the
// activations, their product and the dropout follow. Returns [B, L, E] in dtype.
at::Tensor MlpBlock(const at::Tensor& x, const std::vector<at::Tensor>& wi,
                    const at::Tensor& wo,
                    const std::vector<std::string>& activations,
                    double dropout_rate, bool train, at::Generator* rng = nullptr,
                    at::ScalarType dtype = at::kFloat);

}  // namespace t5xx::models
