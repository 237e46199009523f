// T5.1.1 encoder-decoder Transformer, numerically as t5x's minimal T5 network
// (t5x/examples/t5/network.py; gin: t5x.examples.t5.network.Transformer).
//
// Pre-LN layers (RMSNorm -> attention -> dropout -> residual, RMSNorm -> MLP
// -> dropout -> residual), one shared token embedding, one relative position
// bias table per stack (bidirectional encoder, causal decoder), float32
// logits: untied (decoder.logits_dense, T5.1.1) or, with logits_via_embedding,
// the shared embedding's transpose divided by sqrt(emb_dim) (T5.1.0).
// Parameter paths and logical axes follow t5x exactly, e.g.
// "encoder.layers_0.attention.query.kernel" with axes (embed, joined_kv).
// Precision follows T5Config.dtype as t5x does: float32 parameters,
// activations in dtype (float32 or bfloat16; see layers.h), float32 logits.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <string>

#include "t5xx/models/base_model.h"
#include "t5xx/models/param_store.h"
#include "t5xx/models/networks/t5_config.h"

namespace t5xx::models {

// Model features (FeatureBatch, base_model.h) by seqio name:
// encoder_input_tokens, decoder_input_tokens, decoder_target_tokens,
// decoder_loss_weights, and for packed batches encoder_segment_ids,
// decoder_segment_ids, encoder_positions, decoder_positions.

class Transformer {
 public:
  explicit Transformer(T5Config config);  // validates config (t5xx::Error)

  const T5Config& config() const { return config_; }

  // Fresh float32 parameters with t5x's initialisers, deterministic in seed:
  // embedding N(0,1); q/k/v/out variance_scaling(1, fan_in, truncated normal)
  // with the query further divided by sqrt(head_dim); MLP and logits
  // variance_scaling(1, fan_in, truncated normal); rel_embedding
  // variance_scaling(1, fan_avg, uniform); norm scales 1. Each kept as `placement` decides (null: whole).
  ParamStore InitParams(uint64_t seed, const ParamPlacement* placement = nullptr) const;

  // The prompt's parameter (T5Config::prompt_length > 0), at the flax path
  // prompt-tuning's PromptEncoder gives it (encoder/prompt/prompt/prompt).
  static constexpr char kPromptParam[] = "encoder.prompt.prompt.prompt";

  // Which encoder positions hold a token, bool [B, P + Le] for int64 tokens
  // [B, Le]: P = config().prompt_length leading trues (the prompt), then
  // tokens > 0. The encoder's and the cross-attention's masks.
  at::Tensor EncoderValid(const at::Tensor& tokens) const;

  // Encoder output [B, P + Le, E] in config().dtype (t5x's encoder_norm
  // output; P = config().prompt_length, 0 without a prompt) for int64 tokens
  // [B, Le]; segment_ids may be undefined (unpacked; with a prompt they must
  // be: t5xx::Error). Dropout (train) draws from rng (layers.h Dropout).
  at::Tensor Encode(const ParamStore& params, const at::Tensor& tokens,
                    const at::Tensor& segment_ids, bool train,
                    at::Generator* rng = nullptr) const;

  // Decoder logits [B, Ld, vocab] (float32). Padding comes from
  // decoder_target_tokens == 0 (as t5x), not from the inputs.
  at::Tensor Decode(const ParamStore& params, const at::Tensor& encoded,
                    const at::Tensor& encoder_input_tokens,
                    const at::Tensor& decoder_input_tokens,
                    const at::Tensor& decoder_target_tokens,
                    const at::Tensor& encoder_segment_ids,
                    const at::Tensor& decoder_segment_ids, bool train,
                    at::Generator* rng = nullptr) const;

  // Logits [B, Ld, vocab] for a batch of model features. Throws
  // std::invalid_argument naming a missing feature.
  at::Tensor operator()(const ParamStore& params, const FeatureBatch& batch,
                        bool train, at::Generator* rng = nullptr) const;

 private:
  T5Config config_;
};

}  // namespace t5xx::models
