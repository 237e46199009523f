#include "t5xx/models/layers.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "t5xx/util/torch_compat.h"

namespace t5xx::models {

at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& scale,
                   double epsilon) {
  at::Tensor var = x.pow(2).mean({-1}, /*keepdim=*/true);
  return x * at::rsqrt(var + epsilon) * scale;
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
                                int64_t num_buckets, int64_t max_distance) {
  auto opts = at::TensorOptions().dtype(at::kLong).device(rel_embedding.device());
  at::Tensor context = at::arange(q_len, opts).unsqueeze(1);
  at::Tensor memory = at::arange(k_len, opts).unsqueeze(0);
  at::Tensor buckets = RelativePositionBucket(memory - context, bidirectional,
                                              num_buckets, max_distance);
  // rel_embedding[:, buckets] -> [H, q, k]
  at::Tensor values = rel_embedding.index_select(1, buckets.reshape({-1}))
                          .reshape({rel_embedding.size(0), q_len, k_len});
  return values.unsqueeze(0);
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

at::Tensor MaskToBias(const at::Tensor& mask) {
  at::Tensor zeros = at::zeros(mask.sizes(), mask.options().dtype(at::kFloat));
  return zeros.masked_fill(at::logical_not(mask), -1e10);
}

namespace {
// Keep-mask of `shape` with P(1) = 1 - rate, divided by 1 - rate.
at::Tensor KeepScale(at::IntArrayRef shape, double rate, const at::TensorOptions& options,
                     at::Generator* rng) {
  at::Tensor keep = at::empty(shape, options);
  if (rng) {
    keep.bernoulli_(1.0 - rate, *rng);
  } else {
    keep.bernoulli_(1.0 - rate);
  }
  return keep / (1.0 - rate);
}
}  // namespace

at::Tensor Dropout(const at::Tensor& x, double rate, bool train, at::Generator* rng) {
  if (!train || rate <= 0.0) return x;
  return x * KeepScale(x.sizes(), rate, x.options(), rng);
}

at::Tensor MultiHeadDotProductAttention(
    const at::Tensor& inputs_q, const at::Tensor& inputs_kv,
    const at::Tensor& query_kernel, const at::Tensor& key_kernel,
    const at::Tensor& value_kernel, const at::Tensor& out_kernel,
    int64_t num_heads, const at::Tensor& bias, double dropout_rate,
    bool train, at::Generator* rng) {
  const int64_t b = inputs_q.size(0), lq = inputs_q.size(1);
  const int64_t lk = inputs_kv.size(1);
  const int64_t hd = query_kernel.size(1);
  const int64_t d = hd / num_heads;
  // [B, L, H*D] -> [B, H, L, D]
  auto heads = [&](const at::Tensor& t, int64_t len) {
    return t.view({b, len, num_heads, d}).transpose(1, 2);
  };
  at::Tensor q = heads(at::matmul(inputs_q, query_kernel), lq);
  at::Tensor k = heads(at::matmul(inputs_kv, key_kernel), lk);
  at::Tensor v = heads(at::matmul(inputs_kv, value_kernel), lk);
  at::Tensor logits = at::matmul(q, k.transpose(-2, -1));  // [B, H, Lq, Lk]
  if (bias.defined()) logits = logits + bias;
  at::Tensor probs = at::softmax(logits, -1);
  if (train && dropout_rate > 0.0) {
    // Broadcast over the query axis, as t5x does.
    probs = probs * KeepScale({b, num_heads, 1, lk}, dropout_rate, probs.options(), rng);
  }
  at::Tensor out = at::matmul(probs, v).transpose(1, 2).reshape({b, lq, hd});
  return at::matmul(out, out_kernel);
}

at::Tensor MlpBlock(const at::Tensor& x, const std::vector<at::Tensor>& wi,
                    const at::Tensor& wo,
                    const std::vector<std::string>& activations,
                    double dropout_rate, bool train, at::Generator* rng) {
  at::Tensor h;
  for (size_t i = 0; i < activations.size(); ++i) {
    at::Tensor a = at::matmul(x, wi[i]);
    const std::string& act = activations[i];
    if (act == "gelu") {
      a = compat::GeluTanh(a);
    } else if (act == "relu") {
      a = at::relu(a);
    } else if (act != "linear") {
      throw std::invalid_argument("unknown MLP activation " + act);
    }
    h = h.defined() ? h * a : a;
  }
  h = Dropout(h, dropout_rate, train, rng);
  return at::matmul(h, wo);
}

}  // namespace t5xx::models
