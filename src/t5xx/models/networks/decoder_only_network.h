// GPT-style decoder-only Transformer, numerically as t5x's minimal
// decoder-only network (t5x/examples/decoder_only/network.py; gin:
// t5x.examples.decoder_only.network.TransformerConfig and .DecoderWrapper).
//
// Pre-LN layers (RMSNorm -> causal self-attention -> dropout -> residual,
// RMSNorm -> MLP -> dropout -> residual), one relative position bias table
// (unidirectional), float32 logits: untied (decoder.logits_dense) or the
// embedding's transpose divided by sqrt(emb_dim) (logits_via_embedding).
// Prefix-LM: with decoder_causal_attention, positions marked 1 (the inputs
// and the first target position, as seqio's PrefixLMFeatureConverter marks
// them) attend to each other bidirectionally (t5x's
// inputs_bidirectional_attention). All parameters live under "decoder."
// (t5x's DecoderWrapper), e.g. "decoder.layers_0.self_attention.query.kernel".
// Precision follows DecoderOnlyConfig.dtype as in t5x (see layers.h).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/models/base_model.h"  // FeatureBatch
#include "t5xx/models/param_store.h"
#include "t5xx/models/networks/t5_config.h"  // FieldLocator

namespace t5xx::models {

// t5x.examples.decoder_only.network.TransformerConfig.
struct DecoderOnlyConfig {
  int64_t vocab_size = 32128;
  // Activation dtype, as T5Config.dtype: 'float32' or 'bfloat16' (float32
  // parameters, bfloat16 activations, float32 logits). t5x's
  // TransformerConfig has no float32_attention_logits, so in bfloat16 the
  // attention logits and softmax are bfloat16 (its attention's default).
  std::string dtype = "float32";
  int64_t emb_dim = 512;
  int64_t num_heads = 8;
  int64_t num_layers = 6;
  int64_t head_dim = 64;
  int64_t mlp_dim = 2048;
  std::vector<std::string> mlp_activations = {"relu"};
  double dropout_rate = 0.1;
  bool logits_via_embedding = false;
  int64_t relative_attention_num_buckets = 32;   // fixed in t5x
  int64_t relative_attention_max_distance = 128;  // fixed in t5x
  // t5xx only (t5x's minimal networks have no remat; flaxformer and MaxText
  // call it remat_policy, with t5x's scalable_t5 policy names): 'none' keeps every
  // activation; 'minimal' keeps each layer's input and its weight matmuls'
  // outputs and recomputes the rest (checkpoint_dots_with_no_batch_dims);
  // 'full' keeps only each layer's inputs and recomputes the layer in the
  // backward pass (remat.h).
  std::string remat_policy = "none";

  // Throws t5xx::Error naming the field (as network.TransformerConfig.<field>)
  // when a value is out of range or unsupported.
  // Throws as ValidateNetworkFields (t5_config.h), which see for `where`.
  void Validate(const FieldLocator& where = nullptr) const;
};

class DecoderOnlyTransformer {
 public:
  explicit DecoderOnlyTransformer(DecoderOnlyConfig config);  // validates (t5xx::Error)

  const DecoderOnlyConfig& config() const { return config_; }

  // Fresh float32 parameters with t5x's initialisers (see ParamInitializer),
  // deterministic in seed; each kept as `placement` decides (null: whole).
  ParamStore InitParams(uint64_t seed, const ParamPlacement* placement = nullptr) const;

  // Logits [B, L, vocab] (float32) from model features: decoder_input_tokens
  // and decoder_target_tokens (int64 [B, L]; padding = targets == 0), and
  // optionally decoder_segment_ids (packed) and decoder_causal_attention
  // (prefix-LM, used when present). decoder_positions is accepted and unused,
  // as in t5x. Dropout draws from rng (layers.h Dropout). Throws
  // std::invalid_argument naming a missing feature.
  at::Tensor operator()(const ParamStore& params, const FeatureBatch& batch, bool train,
                        at::Generator* rng = nullptr) const;

 private:
  DecoderOnlyConfig config_;
};

}  // namespace t5xx::models
