// What t5x's minimal networks share (t5x/examples/t5/layers.py, used by both
// t5x/examples/t5/network.py and t5x/examples/decoder_only/network.py):
// parameter initialisation by t5x path, and the attention / MLP blocks that
// read their kernels from a ParamStore under a path prefix.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "t5xx/models/param_store.h"

namespace t5xx::models {

// Adds float32 parameters with t5x's initialisers to a ParamStore. Each
// parameter draws from its own CPU generator seeded with seed ^ hash(name),
// so a parameter's value depends only on (seed, name, shape). Each is made
// whole and handed to `placement` (null: kept whole), which keeps what this
// process holds of it before the next is made.
class ParamInitializer {
 public:
  ParamInitializer(ParamStore& store, uint64_t seed, const ParamPlacement* placement = nullptr)
      : store_(store), seed_(seed), placement_(placement) {}

  // nn.Embed with embedding_init normal(stddev=1): [vocab, emb] (vocab, embed).
  void Embedding(const std::string& name, int64_t vocab_size, int64_t emb_dim);
  // DenseGeneral kernel [in, out], variance_scaling(1, 'fan_in',
  // 'truncated_normal') times extra_scale.
  void Dense(const std::string& name, int64_t in, int64_t out,
             std::vector<std::string> axes, double extra_scale = 1.0);
  // prompt-tuning's prompts.Prompt: [length, emb] (prompt, prompt_embed),
  // `values` (row-major) when given, else flax's uniform(scale): U[0, scale).
  void Prompt(const std::string& name, int64_t length, int64_t emb_dim,
              const std::vector<float>& values, double scale);
  // LayerNorm scale: ones [dim] (embed).
  void Ones(const std::string& name, int64_t dim);
  // RelativePositionBiases.rel_embedding [heads, buckets], variance_scaling(1,
  // 'fan_avg', 'uniform').
  void RelPos(const std::string& name, int64_t num_heads, int64_t num_buckets);
  // MultiHeadDotProductAttention: <prefix>.{query,key,value}.kernel [E, H*D]
  // (embed, joined_kv), <prefix>.out.kernel [H*D, E] (joined_kv, embed); the
  // query is further scaled by 1/sqrt(head_dim), as t5x folds the attention
  // scaling into its initialisation.
  void Attention(const std::string& prefix, int64_t emb_dim, int64_t num_heads,
                 int64_t head_dim);
  // MlpBlock: <prefix>.wi.kernel (one activation) or wi_<i>.kernel [E, F]
  // (embed, mlp), <prefix>.wo.kernel [F, E] (mlp, embed).
  void Mlp(const std::string& prefix, int64_t emb_dim, int64_t mlp_dim,
           size_t num_activations);
  // A pre-LayerNorm sublayer's parameters: the norm scale `norm_scale` ones
  // [emb_dim], then Attention(prefix, ...) / Mlp(prefix, ...).
  void AttentionSublayer(const std::string& norm_scale, const std::string& prefix,
                         int64_t emb_dim, int64_t num_heads, int64_t head_dim);
  void MlpSublayer(const std::string& norm_scale, const std::string& prefix, int64_t emb_dim,
                   int64_t mlp_dim, size_t num_activations);

 private:
  void Keep(const std::string& name, std::vector<int64_t> shape, std::vector<std::string> axes,
            const std::function<at::Tensor()>& make);

  ParamStore& store_;
  uint64_t seed_;
  const ParamPlacement* placement_;
};

// MultiHeadDotProductAttention (layers.h) with kernels at <prefix>.query /
// key / value / out.kernel. q_in: [B, Lq, E], kv_in: [B, Lk, E]; returns
// [B, Lq, E] in dtype (precision as MultiHeadDotProductAttention: kernels
// cast to dtype, logits in float32 when float32_logits). Throws
// std::out_of_range naming a missing parameter.
at::Tensor AttentionBlock(const ParamStore& params, const std::string& prefix,
                          const at::Tensor& q_in, const at::Tensor& kv_in,
                          int64_t num_heads, const at::Tensor& bias,
                          double dropout_rate, bool train, at::Generator* rng,
                          at::ScalarType dtype = at::kFloat, bool float32_logits = false);

// MlpBlock (layers.h) with kernels at <prefix>.wi(_i).kernel and
// <prefix>.wo.kernel. x: [B, L, E]; returns [B, L, E] in dtype (kernels cast
// to dtype).
at::Tensor MlpBlockAt(const ParamStore& params, const std::string& prefix,
                      const at::Tensor& x, const std::vector<std::string>& activations,
                      double dropout_rate, bool train, at::Generator* rng,
                      at::ScalarType dtype = at::kFloat);

// What every sublayer of one network's forward pass shares.
struct SublayerSettings {
  int64_t num_heads = 0;
  const std::vector<std::string>* mlp_activations = nullptr;  // outlives the pass
  double dropout_rate = 0;
  bool float32_attention_logits = false;
  at::ScalarType dtype = at::kFloat;
  bool train = false;
  at::Generator* rng = nullptr;
};

// t5x's residual pre-LayerNorm sublayers (t5x/examples/t5/network.py
// EncoderLayer / DecoderLayer): h + Dropout(AttentionBlock(RmsNorm(h))) with
// keys/values from `kv` (undefined: self-attention on the normed h), and
// h + Dropout(MlpBlockAt(RmsNorm(h))). h: [B, L, E] in the settings' dtype;
// the norm epsilon is t5x LayerNorm's 1e-6. Throws std::out_of_range naming
// a missing parameter.
at::Tensor AttentionSublayer(const ParamStore& params, const std::string& norm_scale,
                             const std::string& prefix, const at::Tensor& h,
                             const at::Tensor& kv, const at::Tensor& bias,
                             const SublayerSettings& s);
at::Tensor MlpSublayer(const ParamStore& params, const std::string& norm_scale,
                       const std::string& prefix, const at::Tensor& h,
                       const SublayerSettings& s);

}  // namespace t5xx::models
