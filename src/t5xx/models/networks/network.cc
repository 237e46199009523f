// T5.1.1 encoder-decoder Transformer as t5x's t5x/examples/t5/network.py --
// the implementation of network.h.
#include "t5xx/models/networks/network.h"

#include <cmath>
#include <functional>
#include <stdexcept>

#include "t5xx/models/networks/layers.h"
#include "t5xx/models/networks/param_blocks.h"
#include "t5xx/models/networks/remat.h"
#include "t5xx/util/error.h"

namespace t5xx::models {
namespace {
constexpr double kEps = 1e-6;  // t5x LayerNorm's default epsilon

SublayerSettings SettingsOf(const T5Config& c, bool train, at::Generator* rng) {
  return {c.num_heads, &c.mlp_activations, c.dropout_rate, c.float32_attention_logits,
          ActivationDtype(c.dtype), train, rng};
}

// The self-attention bias of layer `i` of `stack` ("encoder" or "decoder"):
// mask_bias + the relative position bias over [len, len] of the layer's own
// table (relpos_per_layer) or the stack's shared one (computed once into
// `shared`). t5x adds the two in dtype (combine_biases); attention casts the
// sum to its logits' dtype.
at::Tensor LayerSelfBias(const ParamStore& p, const T5Config& c, const at::Tensor& mask_bias,
                         const std::string& stack, int64_t i, int64_t len, bool bidirectional,
                         at::Tensor& shared) {
  if (!c.relpos_per_layer && shared.defined()) return shared;
  const std::string table = c.relpos_per_layer
                                ? stack + ".layers_" + std::to_string(i) + ".relpos_bias.rel_embedding"
                                : stack + ".relpos_bias.rel_embedding";
  at::Tensor bias = mask_bias + RelativePositionBias(p.hooks().Weight(p.GetParam(table)), len, len,
                                                     bidirectional, c.relative_attention_num_buckets,
                                                     c.relative_attention_max_distance,
                                                     ActivationDtype(c.dtype));
  if (!c.relpos_per_layer) shared = bias;
  return bias;
}

// One layer over `inputs`, through Remat unless remat_policy is 'none'.
at::Tensor ApplyLayer(const T5Config& c, const std::function<at::Tensor(const std::vector<at::Tensor>&)>& layer,
                      const std::vector<at::Tensor>& inputs, at::Generator* rng) {
  return c.remat_policy == "none" ? layer(inputs)
                                  : Remat(layer, inputs, rng, c.remat_policy == "minimal");
}

// Embed(dtype): jnp.asarray(embedding, dtype)[tokens] (one-hot matmul in
// t5x), the same values as casting the looked-up rows; with a prompt
// (encoder only) the prompt, cast to dtype and repeated over the batch, in
// front (prompt-tuning's prefix_prompt); then the embedding dropout.
at::Tensor EmbedTokens(const ParamStore& p, const T5Config& c, const at::Tensor& tokens, bool train,
                       at::Generator* rng, bool with_prompt = false) {
  at::Tensor x =
      p.hooks().Embed(p.GetParam("token_embedder.embedding"), tokens).to(ActivationDtype(c.dtype));
  if (with_prompt && c.prompt_length > 0) {
    const at::Tensor prompt =
        p.hooks().Weight(p.GetParam(Transformer::kPromptParam)).to(x.scalar_type());
    x = at::cat({prompt.unsqueeze(0).expand({x.size(0), prompt.size(0), prompt.size(1)}), x}, 1);
  }
  return p.hooks().Dropout(x, "embed", c.dropout_rate, train, rng);
}
}  // namespace

Transformer::Transformer(T5Config config) : config_(std::move(config)) {
  config_.Validate();
}

ParamStore Transformer::InitParams(uint64_t seed, const ParamPlacement* placement) const {
  const T5Config& c = config_;
  ParamStore store;
  ParamInitializer init(store, seed, placement);
  const int64_t e = c.emb_dim;
  const size_t n_act = c.mlp_activations.size();
  init.Embedding("token_embedder.embedding", c.vocab_size, e);
  if (c.prompt_length > 0) {
    init.Prompt(Transformer::kPromptParam, c.prompt_length, e, c.prompt_init_values, c.prompt_init_scale);
  }
  const int64_t buckets = c.relative_attention_num_buckets;
  if (!c.relpos_per_layer) init.RelPos("encoder.relpos_bias.rel_embedding", c.num_heads, buckets);
  for (int64_t i = 0; i < c.num_encoder_layers; ++i) {
    const std::string p = "encoder.layers_" + std::to_string(i);
    if (c.relpos_per_layer) init.RelPos(p + ".relpos_bias.rel_embedding", c.num_heads, buckets);
    init.AttentionSublayer(p + ".pre_attention_layer_norm.scale", p + ".attention", e,
                           c.num_heads, c.head_dim);
    init.MlpSublayer(p + ".pre_mlp_layer_norm.scale", p + ".mlp", e, c.mlp_dim, n_act);
  }
  init.Ones("encoder.encoder_norm.scale", e);
  if (!c.relpos_per_layer) init.RelPos("decoder.relpos_bias.rel_embedding", c.num_heads, buckets);
  for (int64_t i = 0; i < c.num_decoder_layers; ++i) {
    const std::string p = "decoder.layers_" + std::to_string(i);
    if (c.relpos_per_layer) init.RelPos(p + ".relpos_bias.rel_embedding", c.num_heads, buckets);
    init.AttentionSublayer(p + ".pre_self_attention_layer_norm.scale", p + ".self_attention", e,
                           c.num_heads, c.head_dim);
    init.AttentionSublayer(p + ".pre_cross_attention_layer_norm.scale",
                           p + ".encoder_decoder_attention", e, c.num_heads, c.head_dim);
    init.MlpSublayer(p + ".pre_mlp_layer_norm.scale", p + ".mlp", e, c.mlp_dim, n_act);
  }
  init.Ones("decoder.decoder_norm.scale", e);
  if (!c.logits_via_embedding) {
    init.Dense("decoder.logits_dense.kernel", e, c.vocab_size, {"embed", "vocab"});
  }
  return store;
}


at::Tensor Transformer::EncoderValid(const at::Tensor& tokens) const {
  const at::Tensor valid = tokens > 0;
  if (config_.prompt_length == 0) return valid;
  // prompt-tuning's add_fake_prompt: the prompt's positions count as tokens.
  return at::cat({at::ones({tokens.size(0), config_.prompt_length}, valid.options()), valid}, 1);
}

at::Tensor Transformer::Encode(const ParamStore& p, const at::Tensor& tokens,
                               const at::Tensor& segment_ids,
                               bool train, at::Generator* rng) const {
  const T5Config& c = config_;
  const at::ScalarType dt = ActivationDtype(c.dtype);
  const SublayerSettings s = SettingsOf(c, train, rng);
  T5XX_CHECK(c.prompt_length == 0 || !segment_ids.defined(),
             "prompt tuning does not support packed inputs (as prompt-tuning's "
             "PromptEncoderDecoder); set the dataset's pack = False");
  at::Tensor valid = EncoderValid(tokens);
  const int64_t len = valid.size(1);
  at::Tensor mask = MakeAttentionMask(valid, valid);
  if (segment_ids.defined()) {
    mask = at::logical_and(mask, MakeSegmentMask(segment_ids, segment_ids));
  }
  const at::Tensor mask_bias = MaskToBias(mask, dt);
  at::Tensor shared_bias;
  at::Tensor x = EmbedTokens(p, c, tokens, train, rng, /*with_prompt=*/true);
  for (int64_t i = 0; i < c.num_encoder_layers; ++i) {
    const std::string pre = "encoder.layers_" + std::to_string(i);
    // inputs: {x, bias}
    // Captures by value what Remat's backward pass needs after this call returns.
    auto layer = [&p, pre, s](const std::vector<at::Tensor>& in) {
      at::Tensor h = AttentionSublayer(p, pre + ".pre_attention_layer_norm.scale",
                                       pre + ".attention", in[0], at::Tensor(), in[1], s);
      return MlpSublayer(p, pre + ".pre_mlp_layer_norm.scale", pre + ".mlp", h, s);
    };
    const at::Tensor bias =
        LayerSelfBias(p, c, mask_bias, "encoder", i, len, /*bidirectional=*/true, shared_bias);
    x = ApplyLayer(c, layer, {x, bias}, rng);
  }
  x = p.hooks().RmsNorm(x, p.GetParam("encoder.encoder_norm.scale"), kEps, dt);
  return p.hooks().Dropout(x, "embed", c.dropout_rate, train, rng,
                           /*broadcast_over_length=*/false);  // t5x: no broadcast_dims here
}

at::Tensor Transformer::Decode(const ParamStore& p, const at::Tensor& encoded,
                               const at::Tensor& encoder_input_tokens,
                               const at::Tensor& decoder_input_tokens,
                               const at::Tensor& decoder_target_tokens,
                               const at::Tensor& encoder_segment_ids,
                               const at::Tensor& decoder_segment_ids,
                               bool train, at::Generator* rng) const {
  const T5Config& c = config_;
  const at::ScalarType dt = ActivationDtype(c.dtype);
  const SublayerSettings s = SettingsOf(c, train, rng);
  const int64_t len = decoder_input_tokens.size(1);
  at::Tensor dec_valid = decoder_target_tokens > 0;
  at::Tensor self_mask = at::logical_and(
      MakeAttentionMask(dec_valid, dec_valid),
      MakeCausalMask(len, decoder_target_tokens.device()));
  at::Tensor cross_mask = MakeAttentionMask(dec_valid, EncoderValid(encoder_input_tokens));
  if (decoder_segment_ids.defined()) {
    self_mask = at::logical_and(
        self_mask, MakeSegmentMask(decoder_segment_ids, decoder_segment_ids));
    cross_mask = at::logical_and(
        cross_mask, MakeSegmentMask(decoder_segment_ids, encoder_segment_ids));
  }
  const at::Tensor self_mask_bias = MaskToBias(self_mask, dt);
  at::Tensor shared_bias;
  at::Tensor cross_bias = MaskToBias(cross_mask, dt);
  at::Tensor x = EmbedTokens(p, c, decoder_input_tokens, train, rng);
  for (int64_t i = 0; i < c.num_decoder_layers; ++i) {
    const std::string pre = "decoder.layers_" + std::to_string(i);
    // inputs: {x, encoded, self_bias, cross_bias}
    // Captures by value what Remat's backward pass needs after this call returns.
    auto layer = [&p, pre, s](const std::vector<at::Tensor>& in) {
      at::Tensor h = AttentionSublayer(p, pre + ".pre_self_attention_layer_norm.scale",
                                       pre + ".self_attention", in[0], at::Tensor(), in[2], s);
      h = AttentionSublayer(p, pre + ".pre_cross_attention_layer_norm.scale",
                            pre + ".encoder_decoder_attention", h, in[1], in[3], s);
      return MlpSublayer(p, pre + ".pre_mlp_layer_norm.scale", pre + ".mlp", h, s);
    };
    const at::Tensor self_bias = LayerSelfBias(p, c, self_mask_bias, "decoder", i, len,
                                               /*bidirectional=*/false, shared_bias);
    x = ApplyLayer(c, layer, {x, encoded, self_bias, cross_bias}, rng);
  }
  x = p.hooks().RmsNorm(x, p.GetParam("decoder.decoder_norm.scale"), kEps, dt);
  x = p.hooks().Dropout(x, "embed", c.dropout_rate, train, rng);
  // Logits are float32 in any dtype: t5x's logits_dense is
  // DenseGeneral(dtype=jnp.float32) (casts its input up), and Embed.attend
  // uses attend_dtype=jnp.float32 (jnp.dot(bf16 query, float32 embedding.T)
  // promotes the query to float32).
  x = x.to(at::kFloat);
  if (c.logits_via_embedding) {
    // T5.1.0's tied logits: attend to the shared embedding, scaled by
    // 1/sqrt(emb_dim) as t5x's Decoder does.
    return p.hooks().Attend(x, p.GetParam("token_embedder.embedding")) /
           std::sqrt(static_cast<double>(c.emb_dim));
  }
  return p.hooks().Dense(x, p.GetParam("decoder.logits_dense.kernel"), at::kFloat);
}

at::Tensor Transformer::operator()(const ParamStore& params,
                                   const FeatureBatch& batch,
                                   bool train, at::Generator* rng) const {
  const at::Tensor& enc_tokens = RequireFeature(batch, "encoder_input_tokens");
  at::Tensor enc_seg = OptionalFeature(batch, "encoder_segment_ids");
  at::Tensor dec_seg = OptionalFeature(batch, "decoder_segment_ids");
  at::Tensor encoded = Encode(params, enc_tokens, enc_seg, train, rng);
  return Decode(params, encoded, enc_tokens,
                RequireFeature(batch, "decoder_input_tokens"),
                RequireFeature(batch, "decoder_target_tokens"), enc_seg, dec_seg,
                train, rng);
}

}  // namespace t5xx::models
