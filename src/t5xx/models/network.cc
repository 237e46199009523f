#include "t5xx/models/network.h"

#include <cmath>
#include <functional>
#include <stdexcept>

#include "t5xx/models/layers.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::models {
namespace {

// jax.nn.initializers.truncated_normal's stddev correction for a [-2, 2]
// truncation of a unit normal.
constexpr double kTruncatedStddevCorrection = 0.87962566103423978;

uint64_t HashName(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// Samples N(0, stddev^2) truncated to [-2*stddev', 2*stddev'] the way jax's
// variance_scaling('truncated_normal') does: unit truncated normal scaled by
// stddev / 0.8796...
at::Tensor TruncatedNormal(at::IntArrayRef shape, double stddev,
                           at::Generator& gen) {
  const double lo = 0.5 * (1.0 + std::erf(-2.0 / std::sqrt(2.0)));
  const double hi = 0.5 * (1.0 + std::erf(2.0 / std::sqrt(2.0)));
  at::Tensor u = at::empty(shape, at::kDouble).uniform_(lo, hi, gen);
  at::Tensor z = at::erfinv(u * 2.0 - 1.0) * std::sqrt(2.0);
  z = at::clamp(z, -2.0, 2.0);
  return (z * (stddev / kTruncatedStddevCorrection)).to(at::kFloat);
}

}  // namespace

Transformer::Transformer(T5Config config) : config_(std::move(config)) {
  config_.Validate();
}

ParamStore Transformer::InitParams(uint64_t seed) const {
  const T5Config& c = config_;
  ParamStore store;
  const int64_t e = c.emb_dim, hd = c.num_heads * c.head_dim;
  auto gen_for = [seed](const std::string& name) {
    return compat::MakeCpuGenerator(seed ^ HashName(name));
  };
  auto fan_in_normal = [&](const std::string& name, int64_t in, int64_t out,
                           std::vector<std::string> axes, double extra_scale) {
    at::Generator g = gen_for(name);
    at::Tensor t = TruncatedNormal({in, out}, std::sqrt(1.0 / in), g) *
                   static_cast<float>(extra_scale);
    store.Add(name, t, std::move(axes));
  };
  auto ones = [&](const std::string& name) {
    store.Add(name, at::ones({e}, at::kFloat), {"embed"});
  };
  auto relpos = [&](const std::string& name) {
    at::Generator g = gen_for(name);
    const double fan_avg = 0.5 * (c.num_heads + c.relative_attention_num_buckets);
    const double limit = std::sqrt(3.0 / fan_avg);
    store.Add(name,
              at::empty({c.num_heads, c.relative_attention_num_buckets}, at::kDouble)
                  .uniform_(-limit, limit, g)
                  .to(at::kFloat),
              {"heads", "relpos_buckets"});
  };
  auto attention = [&](const std::string& prefix) {
    const double depth_scaling = std::sqrt(static_cast<double>(c.head_dim));
    fan_in_normal(prefix + ".query.kernel", e, hd, {"embed", "joined_kv"},
                  1.0 / depth_scaling);
    fan_in_normal(prefix + ".key.kernel", e, hd, {"embed", "joined_kv"}, 1.0);
    fan_in_normal(prefix + ".value.kernel", e, hd, {"embed", "joined_kv"}, 1.0);
    fan_in_normal(prefix + ".out.kernel", hd, e, {"joined_kv", "embed"}, 1.0);
  };
  auto mlp = [&](const std::string& prefix) {
    const size_t n = c.mlp_activations.size();
    for (size_t i = 0; i < n; ++i) {
      std::string wi = n == 1 ? "wi" : "wi_" + std::to_string(i);
      fan_in_normal(prefix + "." + wi + ".kernel", e, c.mlp_dim,
                    {"embed", "mlp"}, 1.0);
    }
    fan_in_normal(prefix + ".wo.kernel", c.mlp_dim, e, {"mlp", "embed"}, 1.0);
  };

  {
    at::Generator g = gen_for("token_embedder.embedding");
    store.Add("token_embedder.embedding",
              at::empty({c.vocab_size, e}, at::kFloat).normal_(0.0, 1.0, g),
              {"vocab", "embed"});
  }
  relpos("encoder.relpos_bias.rel_embedding");
  for (int64_t i = 0; i < c.num_encoder_layers; ++i) {
    const std::string p = "encoder.layers_" + std::to_string(i);
    ones(p + ".pre_attention_layer_norm.scale");
    attention(p + ".attention");
    ones(p + ".pre_mlp_layer_norm.scale");
    mlp(p + ".mlp");
  }
  ones("encoder.encoder_norm.scale");
  relpos("decoder.relpos_bias.rel_embedding");
  for (int64_t i = 0; i < c.num_decoder_layers; ++i) {
    const std::string p = "decoder.layers_" + std::to_string(i);
    ones(p + ".pre_self_attention_layer_norm.scale");
    attention(p + ".self_attention");
    ones(p + ".pre_cross_attention_layer_norm.scale");
    attention(p + ".encoder_decoder_attention");
    ones(p + ".pre_mlp_layer_norm.scale");
    mlp(p + ".mlp");
  }
  ones("decoder.decoder_norm.scale");
  fan_in_normal("decoder.logits_dense.kernel", e, c.vocab_size,
                {"embed", "vocab"}, 1.0);
  return store;
}

namespace {

at::Tensor Dropout(const at::Tensor& x, double rate, bool train) {
  return (train && rate > 0.0) ? at::dropout(x, rate, true) : x;
}

at::Tensor Attend(const ParamStore& p, const std::string& prefix,
                  const at::Tensor& q_in, const at::Tensor& kv_in,
                  const T5Config& c, const at::Tensor& bias, bool train) {
  return MultiHeadDotProductAttention(
      q_in, kv_in, p.Get(prefix + ".query.kernel"), p.Get(prefix + ".key.kernel"),
      p.Get(prefix + ".value.kernel"), p.Get(prefix + ".out.kernel"),
      c.num_heads, bias, c.dropout_rate, train);
}

at::Tensor Mlp(const ParamStore& p, const std::string& prefix,
               const at::Tensor& x, const T5Config& c, bool train) {
  std::vector<at::Tensor> wi;
  const size_t n = c.mlp_activations.size();
  for (size_t i = 0; i < n; ++i) {
    wi.push_back(p.Get(prefix + (n == 1 ? ".wi" : ".wi_" + std::to_string(i)) +
                       ".kernel"));
  }
  return MlpBlock(x, wi, p.Get(prefix + ".wo.kernel"), c.mlp_activations,
                  c.dropout_rate, train);
}

const at::Tensor& Require(const FeatureBatch& batch, const std::string& key) {
  auto it = batch.find(key);
  if (it == batch.end()) {
    throw std::invalid_argument("model feature '" + key +
                                "' is missing from the batch");
  }
  return it->second;
}

at::Tensor Optional(const FeatureBatch& batch, const std::string& key) {
  auto it = batch.find(key);
  return it == batch.end() ? at::Tensor() : it->second;
}

}  // namespace

at::Tensor Transformer::Encode(const ParamStore& p, const at::Tensor& tokens,
                               const at::Tensor& segment_ids,
                               bool train) const {
  const T5Config& c = config_;
  const int64_t len = tokens.size(1);
  at::Tensor valid = tokens > 0;
  at::Tensor mask = MakeAttentionMask(valid, valid);
  if (segment_ids.defined()) {
    mask = at::logical_and(mask, MakeSegmentMask(segment_ids, segment_ids));
  }
  at::Tensor bias =
      MaskToBias(mask) +
      RelativePositionBias(p.Get("encoder.relpos_bias.rel_embedding"), len, len,
                           /*bidirectional=*/true,
                           c.relative_attention_num_buckets,
                           c.relative_attention_max_distance);
  at::Tensor x = at::embedding(p.Get("token_embedder.embedding"), tokens);
  x = Dropout(x, c.dropout_rate, train);
  for (int64_t i = 0; i < c.num_encoder_layers; ++i) {
    const std::string pre = "encoder.layers_" + std::to_string(i);
    at::Tensor y = RmsNorm(x, p.Get(pre + ".pre_attention_layer_norm.scale"));
    y = Attend(p, pre + ".attention", y, y, c, bias, train);
    x = x + Dropout(y, c.dropout_rate, train);
    y = RmsNorm(x, p.Get(pre + ".pre_mlp_layer_norm.scale"));
    y = Mlp(p, pre + ".mlp", y, c, train);
    x = x + Dropout(y, c.dropout_rate, train);
  }
  x = RmsNorm(x, p.Get("encoder.encoder_norm.scale"));
  return Dropout(x, c.dropout_rate, train);
}

at::Tensor Transformer::Decode(const ParamStore& p, const at::Tensor& encoded,
                               const at::Tensor& encoder_input_tokens,
                               const at::Tensor& decoder_input_tokens,
                               const at::Tensor& decoder_target_tokens,
                               const at::Tensor& encoder_segment_ids,
                               const at::Tensor& decoder_segment_ids,
                               bool train) const {
  const T5Config& c = config_;
  const int64_t len = decoder_input_tokens.size(1);
  at::Tensor dec_valid = decoder_target_tokens > 0;
  at::Tensor self_mask = at::logical_and(
      MakeAttentionMask(dec_valid, dec_valid),
      MakeCausalMask(len, decoder_target_tokens.device()));
  at::Tensor cross_mask =
      MakeAttentionMask(dec_valid, encoder_input_tokens > 0);
  if (decoder_segment_ids.defined()) {
    self_mask = at::logical_and(
        self_mask, MakeSegmentMask(decoder_segment_ids, decoder_segment_ids));
    cross_mask = at::logical_and(
        cross_mask, MakeSegmentMask(decoder_segment_ids, encoder_segment_ids));
  }
  at::Tensor self_bias =
      MaskToBias(self_mask) +
      RelativePositionBias(p.Get("decoder.relpos_bias.rel_embedding"), len, len,
                           /*bidirectional=*/false,
                           c.relative_attention_num_buckets,
                           c.relative_attention_max_distance);
  at::Tensor cross_bias = MaskToBias(cross_mask);
  at::Tensor x =
      at::embedding(p.Get("token_embedder.embedding"), decoder_input_tokens);
  x = Dropout(x, c.dropout_rate, train);
  for (int64_t i = 0; i < c.num_decoder_layers; ++i) {
    const std::string pre = "decoder.layers_" + std::to_string(i);
    at::Tensor y =
        RmsNorm(x, p.Get(pre + ".pre_self_attention_layer_norm.scale"));
    y = Attend(p, pre + ".self_attention", y, y, c, self_bias, train);
    x = x + Dropout(y, c.dropout_rate, train);
    y = RmsNorm(x, p.Get(pre + ".pre_cross_attention_layer_norm.scale"));
    y = Attend(p, pre + ".encoder_decoder_attention", y, encoded, c, cross_bias,
               train);
    x = x + Dropout(y, c.dropout_rate, train);
    y = RmsNorm(x, p.Get(pre + ".pre_mlp_layer_norm.scale"));
    y = Mlp(p, pre + ".mlp", y, c, train);
    x = x + Dropout(y, c.dropout_rate, train);
  }
  x = RmsNorm(x, p.Get("decoder.decoder_norm.scale"));
  x = Dropout(x, c.dropout_rate, train);
  return at::matmul(x, p.Get("decoder.logits_dense.kernel"));
}

at::Tensor Transformer::operator()(const ParamStore& params,
                                   const FeatureBatch& batch,
                                   bool train) const {
  const at::Tensor& enc_tokens = Require(batch, "encoder_input_tokens");
  at::Tensor enc_seg = Optional(batch, "encoder_segment_ids");
  at::Tensor dec_seg = Optional(batch, "decoder_segment_ids");
  at::Tensor encoded = Encode(params, enc_tokens, enc_seg, train);
  return Decode(params, encoded, enc_tokens,
                Require(batch, "decoder_input_tokens"),
                Require(batch, "decoder_target_tokens"), enc_seg, dec_seg,
                train);
}

}  // namespace t5xx::models
