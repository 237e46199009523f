// Building blocks of t5x's minimal T5 network (t5x/examples/t5/layers.py),
// written as pure functions of tensors so that parallelism stays out of model
// code -- the implementation of layers.h.
#include "t5xx/models/networks/layers.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <torch/csrc/autograd/custom_function.h>

#include "t5xx/kernels/attention_matmul.h"
#include "t5xx/kernels/attention_softmax.h"
#include "t5xx/kernels/bf16_matmul.h"
#include "t5xx/kernels/decode_attention.h"
#include "t5xx/kernels/fused_rms_norm.h"
#include "t5xx/kernels/gated_gelu.h"
#include "t5xx/kernels/index_select_columns.h"
#include "t5xx/kernels/int8_matmul.h"
#include "t5xx/kernels/skinny_matmul.h"
#include "t5xx/models/networks/int8_weights.h"
#include "t5xx/models/networks/remat.h"
#include "t5xx/kernels/dropout_mask.h"
#include "t5xx/util/error.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::models {

at::ScalarType ActivationDtype(const std::string& name) {
  if (name == "float32") return at::kFloat;
  if (name == "bfloat16") return at::kBFloat16;
  throw std::invalid_argument("unknown activation dtype '" + name +
                              "' (known: 'float32', 'bfloat16')");
}

at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& scale,
                   double epsilon, at::ScalarType dtype) {
  // t5x: x = jnp.asarray(x, float32); y = jnp.asarray(x * rsqrt(mean2 + eps),
  // dtype); return y * jnp.asarray(scale, dtype). In float32 the casts are
  // no-ops and this is (x * rsqrt(...)) * scale.
  const at::Tensor xf = x.to(at::kFloat);
  if (dtype == at::kFloat && FusedRmsNormApplies(xf, scale)) {
    return FusedRmsNorm(xf, scale, epsilon);  // one pass on float32 CPU rows
  }
  at::Tensor normalized;
  if (compat::kHasFusedRmsNorm && xf.is_cuda()) {
    normalized = compat::RmsNormalize(xf, epsilon);  // one fused float32 kernel
  } else {
    at::Tensor var = xf.pow(2).mean({-1}, /*keepdim=*/true);
    normalized = xf * at::rsqrt(var + epsilon);
  }
  return normalized.to(dtype) * scale.to(dtype);
}

at::Tensor RelativePositionBucket(const at::Tensor& relative_position,
                                  bool bidirectional, int64_t num_buckets,
                                  int64_t max_distance) {
  at::Tensor n = -relative_position.to(at::kLong);
  at::Tensor ret = at::zeros_like(n);
  if (bidirectional) {
    num_buckets /= 2;
    ret = ret + (n < 0).to(at::kLong) * num_buckets;
    n = n.abs();
  } else {
    n = at::clamp_min(n, 0);
  }
  const int64_t max_exact = num_buckets / 2;
  at::Tensor is_small = n < max_exact;
  const float eps = std::numeric_limits<float>::epsilon();
  at::Tensor nf = n.to(at::kFloat);
  at::Tensor large =
      at::log(nf / static_cast<float>(max_exact) + eps) /
      static_cast<float>(std::log(static_cast<float>(max_distance) /
                                  static_cast<float>(max_exact))) *
      static_cast<float>(num_buckets - max_exact);
  // astype(int32) truncates toward zero; values here are >= 0 where used.
  at::Tensor val_if_large = large.to(at::kLong) + max_exact;
  val_if_large = at::clamp_max(val_if_large, num_buckets - 1);
  return ret + at::where(is_small, n, val_if_large);
}

at::Tensor RelativePositionBias(const at::Tensor& rel_embedding, int64_t q_len,
                                int64_t k_len, bool bidirectional,
                                int64_t num_buckets, int64_t max_distance,
                                at::ScalarType dtype) {
  auto opts = at::TensorOptions().dtype(at::kLong).device(rel_embedding.device());
  at::Tensor context = at::arange(q_len, opts).unsqueeze(1);
  at::Tensor memory = at::arange(k_len, opts).unsqueeze(0);
  at::Tensor buckets = RelativePositionBucket(memory - context, bidirectional,
                                              num_buckets, max_distance);
  // rel_embedding[:, buckets] -> [H, q, k]
  // t5x's one-hot contraction of the table cast to dtype gives the table's
  // entries rounded to dtype: the lookup of the float32 table, then cast. (The
  // gradient then sums over positions in float32, as XLA's dot accumulates;
  // libtorch's index_select backward on a bfloat16 table would add in
  // bfloat16, where 256 + 1 is 256.)
  at::Tensor values = IndexSelectColumns(rel_embedding, buckets.reshape({-1}))
                          .reshape({rel_embedding.size(0), q_len, k_len});
  return values.to(dtype).unsqueeze(0);
}

at::Tensor MakeAttentionMask(const at::Tensor& query_valid,
                             const at::Tensor& key_valid) {
  return at::logical_and(query_valid.unsqueeze(-1), key_valid.unsqueeze(-2))
      .unsqueeze(1);
}

at::Tensor MakeSegmentMask(const at::Tensor& query_segment_ids,
                           const at::Tensor& key_segment_ids) {
  return at::eq(query_segment_ids.unsqueeze(-1), key_segment_ids.unsqueeze(-2))
      .unsqueeze(1);
}

at::Tensor MakeCausalMask(int64_t length, const at::Device& device) {
  at::Tensor idx = at::arange(length, at::TensorOptions().dtype(at::kLong).device(device));
  return at::ge(idx.unsqueeze(1), idx.unsqueeze(0)).unsqueeze(0).unsqueeze(0);
}

at::Tensor MaskToBias(const at::Tensor& mask, at::ScalarType dtype) {
  at::Tensor zeros = at::zeros(mask.sizes(), mask.options().dtype(dtype));
  return zeros.masked_fill(at::logical_not(mask), -1e10);
}

std::pair<at::Tensor, at::Tensor> MatmulOperandGradients(const at::Tensor& a, const at::Tensor& b,
                                                         const at::Tensor& grad, bool widen,
                                                         bool need_a, bool need_b) {
  const at::Tensor g = widen ? grad.to(at::kFloat) : grad;
  const at::Tensor aw = widen ? a.to(at::kFloat) : a, bw = widen ? b.to(at::kFloat) : b;
  at::Tensor ga, gb;
  if (need_a) ga = at::matmul(g, bw.transpose(-2, -1)).sum_to_size(a.sizes()).to(a.scalar_type());
  if (need_b) {
    if (b.dim() == 2) {  // a kernel shared by all batch positions: one [K, N] product
      gb = at::mm(aw.reshape({-1, a.size(-1)}).t(), g.reshape({-1, g.size(-1)}));
    } else {
      gb = at::matmul(aw.transpose(-2, -1), g).sum_to_size(b.sizes());
    }
    gb = gb.to(b.scalar_type());
  }
  return {ga, gb};
}

namespace {

// a @ b for bfloat16 (or other below-float32) operands with float32
// accumulation: the operands are widened to float32 (exactly), multiplied,
// and the result rounded once; the backward pass does the same for
// g @ b^T and a^T @ g. Only the low-precision operands are kept for the
// backward pass (letting autograd record the float32 casts would keep
// float32 copies: twice the activation memory, once per projection).
// a: [..., M, K], b: [..., K, N] or [K, N]; batch dimensions broadcast as in
// at::matmul. No double backward.
class WideAccumulationMatmul : public torch::autograd::Function<WideAccumulationMatmul> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& a,
                            const at::Tensor& b) {
    ctx->save_for_backward({a, b});
    return at::matmul(a.to(at::kFloat), b.to(at::kFloat)).to(a.scalar_type());
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    auto [ga, gb] = MatmulOperandGradients(saved[0], saved[1], grad_out[0], /*widen=*/true,
                                           ctx->needs_input_grad(0), ctx->needs_input_grad(1));
    return {ga, gb};
  }
};

}  // namespace

// a @ b for operands already in dtype (MatmulIn's arithmetic).
static at::Tensor MatmulInDtype(const at::Tensor& ad, const at::Tensor& bd, at::ScalarType dtype);

at::Tensor MatmulIn(const at::Tensor& a, const at::Tensor& b, at::ScalarType dtype) {
  const at::Tensor ad = a.to(dtype), bd = b.to(dtype);
  return SavedDot(ad, bd, [&] { return MatmulInDtype(ad, bd, dtype); });
}

static at::Tensor MatmulInDtype(const at::Tensor& ad, const at::Tensor& bd, at::ScalarType dtype) {
  if (dtype == at::kFloat) {
    // --int8_weights (int8_weights.h): a parameter's int8 copy, inference only.
    if (Int8Weights* int8 = ActiveInt8Weights();
        int8 && !(at::GradMode::is_enabled() && (ad.requires_grad() || bd.requires_grad()))) {
      if (const Int8Weight* q = int8->Find(bd)) return Int8Matmul(ad, *q);
    }
    // A decode step's few rows: one stream over the weights (skinny_matmul.h).
    if (SkinnyMatmulFused(ad, bd)) return SkinnyMatmul(ad, bd);
  }
  if (dtype == at::kFloat || !ad.is_cpu() ||
      (dtype == at::kBFloat16 && NativeCpuBf16MatmulFor(ad, bd))) {
    return at::matmul(ad, bd);  // float32, a GPU, or bf16_matmul.h's native CPU path
  }
  if (ad.dim() < 2 || bd.dim() < 2) {
    throw std::invalid_argument("MatmulIn: operands need at least 2 dimensions");
  }
  return WideAccumulationMatmul::apply(ad, bd);
}

namespace {
// The keep mask of a piece `shape` of a tensor whose dims are `whole` wide
// from `offsets` (dim 0: this thread's global row offset, kernels::
// DropoutRowOffset), as `options` 0/1 values: kernels/dropout_mask.h, with
// the next site key from rng.
at::Tensor KeepMaskOf(at::IntArrayRef shape, std::vector<int64_t> offsets,
                      std::vector<int64_t> whole, double rate, const at::TensorOptions& options,
                      at::Generator* rng) {
  return kernels::KeepMask(shape, offsets, whole, kernels::DropoutRowOffset(),
                           kernels::DropoutSiteKey(rng), rate, options);
}

// Keep-mask of `shape` with P(1) = 1 - rate, divided by 1 - rate, for the
// attention probabilities [B, H, 1, Lk] of heads [head_offset, head_offset
// + H) of total_heads.
at::Tensor KeepScale(at::IntArrayRef shape, double rate, const at::TensorOptions& options,
                     at::Generator* rng, int64_t head_offset = 0, int64_t total_heads = 0) {
  std::vector<int64_t> offsets(shape.size(), 0), whole = shape.vec();
  if (shape.size() >= 2) {
    offsets[1] = head_offset;
    whole[1] = std::max(total_heads, head_offset + shape[1]);
  }
  return KeepMaskOf(shape, offsets, whole, rate, options, rng) / (1.0 - rate);
}
}  // namespace

at::Tensor Dropout(const at::Tensor& x, double rate, bool train, at::Generator* rng,
                   bool broadcast_over_length) {
  if (!train || rate <= 0.0) return x;
  return DropoutOfSlice(x, x.size(-1), 0, rate, train, rng, broadcast_over_length);
}

at::Tensor DropoutOfSlice(const at::Tensor& x, int64_t whole, int64_t offset, double rate,
                          bool train, at::Generator* rng, bool broadcast_over_length) {
  if (!train || rate <= 0.0) return x;
  T5XX_CHECK(x.dim() >= 1 && offset >= 0 && offset + x.size(-1) <= whole,
             "DropoutOfSlice: a slice [" + std::to_string(offset) + ", " +
                 std::to_string(offset + (x.dim() ? x.size(-1) : 0)) + ") of a dimension of " +
                 std::to_string(whole));
  // flax nn.Dropout(broadcast_dims=(-2,)), as every dropout of t5x's
  // networks: one mask per sequence, shared along the length axis.
  std::vector<int64_t> shape = x.sizes().vec();
  if (broadcast_over_length && shape.size() >= 2) shape[shape.size() - 2] = 1;
  std::vector<int64_t> offsets(shape.size(), 0), wide = shape;
  offsets.back() = offset;
  wide.back() = whole;
  if (x.scalar_type() == at::kFloat) {
    return x * (KeepMaskOf(shape, offsets, wide, rate, x.options(), rng) / (1.0 - rate));
  }
  // Below float32, 1/(1-rate) itself would be rounded (bfloat16(1/0.9) is
  // 0.16% low); flax divides the kept inputs by keep_prob, rounding once.
  return x * KeepMaskOf(shape, offsets, wide, rate, x.options(), rng) / (1.0 - rate);
}

namespace {
std::atomic<AttentionKernel> g_attention_kernel{AttentionKernel::kAuto};
std::atomic<FusedAttentionObserver> g_fused_attention_observer{nullptr};

// Whether AttentionHeads takes the fused path for tensors on `device`.
bool UseFusedAttention(const at::Device& device) {
  switch (g_attention_kernel.load()) {
    case AttentionKernel::kUnfused:
      return false;
    case AttentionKernel::kFused:
      T5XX_CHECK(compat::kHasFusedAttention,
                 "attention kernel 'fused' (SetAttentionKernel(AttentionKernel::kFused)) needs "
                 "libtorch >= 2.1 (at::scaled_dot_product_attention with a `scale` argument); "
                 "this build uses libtorch " + std::to_string(compat::kTorchMajor) + "." +
                     std::to_string(compat::kTorchMinor) +
                     ". Use kAuto or kUnfused, or build against libtorch 2.x "
                     "(-DCMAKE_PREFIX_PATH=<torch>/share/cmake)");
      return true;
    case AttentionKernel::kAuto:
      return compat::kHasFusedAttention && device.is_cuda();
  }
  return false;
}

// AttentionHeads through at::scaled_dot_product_attention. q: [B, H, Lq, D],
// k, v: [B, H, Lk, D]; returns [B, H, Lq, D] in dtype. See AttentionKernel.
at::Tensor FusedAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const at::Tensor& bias, double dropout_rate, bool train,
                          at::Generator* rng, at::ScalarType dtype, bool float32_logits,
                          const HeadSlice& heads) {
  // The unfused path's dtypes: logits (and so the bias) in float32 with
  // float32_logits, else in dtype. SDPA takes one dtype for q, k, v and mask.
  const at::ScalarType compute = float32_logits ? at::kFloat : dtype;
  at::Tensor vc = v.to(compute);
  if (train && dropout_rate > 0.0) {
    // The unfused path's mask: same shape [B, H, 1, Lk], dtype and device,
    // so the same generator calls and values. Scaling v's rows by it equals
    // scaling the probabilities' columns: sum_j p[i,j] keep[j] v[j,:].
    const at::Tensor keep = KeepScale({q.size(0), q.size(1), 1, k.size(2)}, dropout_rate,
                                      q.options().dtype(dtype), rng, heads.offset, heads.total);
    vc = vc * keep.transpose(-2, -1).to(compute);  // [B, H, Lk, 1]
  }
  at::Tensor mask;
  if (bias.defined()) {
    mask = bias.to(compute);
    while (mask.dim() < 4) mask = mask.unsqueeze(0);  // broadcastable to [B, H, Lq, Lk]
  }
  const at::Tensor qc = q.to(compute), kc = k.to(compute);
  if (FusedAttentionObserver observe = g_fused_attention_observer.load()) observe(qc, kc, vc, mask);
  // scale = 1: T5 folds 1/sqrt(D) into the query initialisation (SDPA's
  // default would apply it a second time).
  return compat::ScaledDotProductAttention(qc, kc, vc, mask, /*scale=*/1.0).to(dtype);
}
}  // namespace

void SetAttentionKernel(AttentionKernel kernel) { g_attention_kernel.store(kernel); }

AttentionKernel attention_kernel() { return g_attention_kernel.load(); }

void SetFusedAttentionObserver(FusedAttentionObserver observer) {
  g_fused_attention_observer.store(observer);
}

at::Tensor AttentionHeads(const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in,
                          int64_t num_heads, const at::Tensor& bias, double dropout_rate,
                          bool train, at::Generator* rng, at::ScalarType dtype,
                          bool float32_logits, const HeadSlice& slice) {
  const int64_t b = q_in.size(0), lq = q_in.size(1);
  const int64_t lk = k_in.size(1);
  const int64_t hd = q_in.size(2);
  const int64_t d = hd / num_heads;
  // [B, L, H*D] -> [B, H, L, D]
  auto heads = [&](const at::Tensor& t, int64_t len) {
    return t.view({b, len, num_heads, d}).transpose(1, 2);
  };
  at::Tensor q = heads(q_in, lq);
  at::Tensor k = heads(k_in, lk);
  at::Tensor v = heads(v_in, lk);
  if (UseFusedAttention(q_in.device())) {
    return FusedAttention(q, k, v, bias, dropout_rate, train, rng, dtype, float32_logits, slice)
        .transpose(1, 2)
        .reshape({b, lq, hd});
  }
  if (!train && lq == 1 && dtype == at::kFloat) {  // a decode step: one pass per head
    const at::Tensor bias32 = bias.defined() ? bias.to(at::kFloat) : bias;
    if (DecodeAttentionFused(q, k, v, bias32)) {
      return DecodeAttention(q, k, v, bias32).view({b, lq, hd});
    }
  }
  // dot_product_attention(float32_logits=True) casts q and k to float32.
  const at::ScalarType logits_dtype = float32_logits ? at::kFloat : dtype;
  // float32 on the CPU: attention_matmul.h's products read the heads' views
  // in place and leave the output as [B, Lq, H, D] in memory.
  const bool float32_cpu = dtype == at::kFloat && AttentionMatmulFused(q, k.transpose(-2, -1));
  at::Tensor logits = float32_cpu ? AttentionMatmul(q, k.transpose(-2, -1), false)
                                  : MatmulIn(q, k.transpose(-2, -1), logits_dtype);  // [B, H, Lq, Lk]
  // jax.nn.softmax(attn_weights).astype(dtype): softmax in the logits' dtype.
  at::Tensor probs;
  if (float32_cpu) {  // bias add and softmax in one pass (attention_softmax.h)
    probs = AttentionSoftmax(logits, bias.defined() ? bias.to(at::kFloat) : bias);
  } else {
    if (bias.defined()) logits = logits + bias.to(logits.scalar_type());
    probs = at::softmax(logits, -1).to(dtype);
  }
  if (train && dropout_rate > 0.0) {
    // Broadcast over the query axis, as t5x does.
    probs = probs * KeepScale({b, num_heads, 1, lk}, dropout_rate, probs.options(), rng,
                              slice.offset, slice.total);
  }
  const at::Tensor mixed = float32_cpu ? AttentionMatmul(probs, v, /*heads_inner_out=*/true)
                                       : MatmulIn(probs, v, dtype);
  return mixed.transpose(1, 2).reshape({b, lq, hd});
}

at::Tensor MultiHeadDotProductAttention(
    const at::Tensor& inputs_q, const at::Tensor& inputs_kv,
    const at::Tensor& query_kernel, const at::Tensor& key_kernel,
    const at::Tensor& value_kernel, const at::Tensor& out_kernel,
    int64_t num_heads, const at::Tensor& bias, double dropout_rate,
    bool train, at::Generator* rng, at::ScalarType dtype, bool float32_logits) {
  // DenseGeneral(dtype): jnp.asarray(inputs, dtype) @ jnp.asarray(kernel, dtype).
  at::Tensor out = AttentionHeads(
      MatmulIn(inputs_q, query_kernel, dtype), MatmulIn(inputs_kv, key_kernel, dtype),
      MatmulIn(inputs_kv, value_kernel, dtype), num_heads, bias, dropout_rate, train, rng, dtype,
      float32_logits);
  return MatmulIn(out, out_kernel, dtype);
}

at::Tensor MlpActivation(const at::Tensor& a, const std::string& activation) {
  if (activation == "gelu") return compat::GeluTanh(a);
  if (activation == "relu") return at::relu(a);
  if (activation == "linear") return a;
  throw std::invalid_argument("unknown MLP activation " + activation);
}

at::Tensor MlpActivations(const std::vector<at::Tensor>& projected,
                          const std::vector<std::string>& activations) {
  T5XX_CHECK(projected.size() == activations.size() && !projected.empty(),
             "MlpActivations: " + std::to_string(projected.size()) + " projections for " +
                 std::to_string(activations.size()) + " activations");
  if (activations.size() == 2 && activations[0] == "gelu" && activations[1] == "linear") {
    return GatedGelu(projected[0], projected[1]);
  }
  at::Tensor h;
  for (size_t i = 0; i < activations.size(); ++i) {
    at::Tensor a = MlpActivation(projected[i], activations[i]);
    h = h.defined() ? h * a : a;
  }
  return h;
}

at::Tensor MlpBlock(const at::Tensor& x, const std::vector<at::Tensor>& wi,
                    const at::Tensor& wo,
                    const std::vector<std::string>& activations,
                    double dropout_rate, bool train, at::Generator* rng,
                    at::ScalarType dtype) {
  const at::Tensor xd = x.to(dtype);
  std::vector<at::Tensor> projected;
  for (size_t i = 0; i < activations.size(); ++i) projected.push_back(MatmulIn(xd, wi[i], dtype));
  at::Tensor h = MlpActivations(projected, activations);
  h = Dropout(h, dropout_rate, train, rng);
  return MatmulIn(h, wo, dtype);
}

}  // namespace t5xx::models
