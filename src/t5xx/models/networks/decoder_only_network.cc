// GPT-style decoder-only Transformer as t5x's
// t5x/examples/decoder_only/network.py -- the implementation of
// decoder_only_network.h.
#include "t5xx/models/networks/decoder_only_network.h"

#include <cmath>
#include <stdexcept>

#include "t5xx/models/networks/layers.h"
#include "t5xx/models/networks/param_blocks.h"
#include "t5xx/models/networks/remat.h"
#include "t5xx/models/networks/t5_config.h"
#include "t5xx/util/error.h"

namespace t5xx::models {
void DecoderOnlyConfig::Validate(const FieldLocator& where) const {
  ValidateNetworkFields("network.TransformerConfig",
                        {{"vocab_size", vocab_size},
                         {"emb_dim", emb_dim},
                         {"num_heads", num_heads},
                         {"num_layers", num_layers},
                         {"head_dim", head_dim},
                         {"mlp_dim", mlp_dim}},
                        dtype, dropout_rate, mlp_activations, remat_policy, where);
}

DecoderOnlyTransformer::DecoderOnlyTransformer(DecoderOnlyConfig config)
    : config_(std::move(config)) {
  config_.Validate();
}

ParamStore DecoderOnlyTransformer::InitParams(uint64_t seed,
                                              const ParamPlacement* placement) const {
  const DecoderOnlyConfig& c = config_;
  ParamStore store;
  ParamInitializer init(store, seed, placement);
  const int64_t e = c.emb_dim;
  init.Embedding("decoder.token_embedder.embedding", c.vocab_size, e);
  init.RelPos("decoder.relpos_bias.rel_embedding", c.num_heads, c.relative_attention_num_buckets);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "decoder.layers_" + std::to_string(i);
    init.AttentionSublayer(p + ".pre_self_attention_layer_norm.scale", p + ".self_attention", e,
                           c.num_heads, c.head_dim);
    init.MlpSublayer(p + ".pre_mlp_layer_norm.scale", p + ".mlp", e, c.mlp_dim,
                     c.mlp_activations.size());
  }
  init.Ones("decoder.decoder_norm.scale", e);
  if (!c.logits_via_embedding) {
    init.Dense("decoder.logits_dense.kernel", e, c.vocab_size, {"embed", "vocab"});
  }
  return store;
}

at::Tensor DecoderOnlyTransformer::operator()(const ParamStore& p, const FeatureBatch& batch,
                                              bool train, at::Generator* rng) const {
  const DecoderOnlyConfig& c = config_;
  const at::ScalarType dt = ActivationDtype(c.dtype);
  constexpr double kEps = 1e-6;  // t5x LayerNorm's default epsilon
  const at::Tensor& inputs = RequireFeature(batch, "decoder_input_tokens");
  const at::Tensor& targets = RequireFeature(batch, "decoder_target_tokens");
  const int64_t len = inputs.size(1);
  // t5x make_decoder_mask: causal, or-ed with the bidirectional prefix, then
  // and-ed with padding (from the targets) and packing masks.
  at::Tensor mask = MakeCausalMask(len, inputs.device());
  if (auto it = batch.find("decoder_causal_attention"); it != batch.end()) {
    at::Tensor dca = it->second > 0;
    mask = at::logical_or(mask, MakeAttentionMask(dca, dca));
  }
  at::Tensor valid = targets > 0;
  mask = at::logical_and(mask, MakeAttentionMask(valid, valid));
  if (auto it = batch.find("decoder_segment_ids"); it != batch.end()) {
    mask = at::logical_and(mask, MakeSegmentMask(it->second, it->second));
  }
  // Mask and relative position biases in dtype, summed in dtype (as the
  // encoder-decoder network; see network.cc).
  at::Tensor bias = MaskToBias(mask, dt) +
                    RelativePositionBias(p.hooks().Weight(p.GetParam("decoder.relpos_bias.rel_embedding")), len, len,
                                         /*bidirectional=*/false, c.relative_attention_num_buckets,
                                         c.relative_attention_max_distance, dt);
  // t5x's decoder-only TransformerConfig has no float32_attention_logits.
  const SublayerSettings s{c.num_heads, &c.mlp_activations, c.dropout_rate,
                           /*float32_attention_logits=*/false, dt, train, rng};
  const Param& embedding = p.GetParam("decoder.token_embedder.embedding");
  at::Tensor x =
      p.hooks().Dropout(p.hooks().Embed(embedding, inputs).to(dt), "embed", c.dropout_rate, train, rng);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string pre = "decoder.layers_" + std::to_string(i);
    // inputs: {x, bias}
    // Captures by value what Remat's backward pass needs after this call returns.
    auto layer = [&p, pre, s](const std::vector<at::Tensor>& in) {
      at::Tensor h = AttentionSublayer(p, pre + ".pre_self_attention_layer_norm.scale",
                                       pre + ".self_attention", in[0], at::Tensor(), in[1], s);
      return MlpSublayer(p, pre + ".pre_mlp_layer_norm.scale", pre + ".mlp", h, s);
    };
    x = c.remat_policy == "none" ? layer({x, bias})
                                 : Remat(layer, {x, bias}, rng, c.remat_policy == "minimal");
  }
  x = p.hooks().RmsNorm(x, p.GetParam("decoder.decoder_norm.scale"), kEps, dt);
  x = p.hooks().Dropout(x, "embed", c.dropout_rate, train, rng);
  // float32 logits (logits_dense dtype=float32 / attend_dtype=float32).
  x = x.to(at::kFloat);
  if (c.logits_via_embedding) {
    return p.hooks().Attend(x, embedding) / std::sqrt(static_cast<double>(c.emb_dim));
  }
  return p.hooks().Dense(x, p.GetParam("decoder.logits_dense.kernel"), at::kFloat);
}

}  // namespace t5xx::models
