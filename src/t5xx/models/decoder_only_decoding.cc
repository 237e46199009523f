// Autoregressive decoding of the decoder-only network with a prompt -- the
// implementation of decoder_only_decoding.h.
#include "t5xx/models/decoder_only_decoding.h"

#include <ATen/core/grad_mode.h>
#include <string>
#include <vector>

#include "t5xx/models/decode_cache.h"
#include "t5xx/models/networks/layers.h"
#include "t5xx/util/error.h"

namespace t5xx::models {
namespace {

// The no-cache entries.
constexpr char kTokens[] = "decoder_input_tokens";
constexpr char kCausalAttention[] = "decoder_causal_attention";
constexpr char kEmbedding[] = "decoder.token_embedder.embedding";

// The settings of a deterministic pass (t5x's decoder-only TransformerConfig
// has no float32_attention_logits).
SublayerSettings Settings(const DecoderOnlyConfig& c) {
  return {c.num_heads, &c.mlp_activations, 0.0, /*float32_attention_logits=*/false,
          ActivationDtype(c.dtype), /*train=*/false, nullptr};
}

// Runs the decoder layers on x [B', Lq, E] writing keys and values at
// `positions` and attending over cached [0, n) with `bias`; returns the
// layers' output.
at::Tensor CachedLayers(const DecoderOnlyConfig& c, const ParamStore& p, at::Tensor x,
                        const at::Tensor& positions, int64_t cache_length, int64_t n,
                        const at::Tensor& bias, decoding::Cache& cache) {
  const SublayerSettings s = Settings(c);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string pre = DecoderLayerPrefix(i);
    const std::string self = pre + ".self_attention";
    // Entries are allocated by the first (prefill) pass.
    at::Tensor& key = cache[CachedKeyName(self)];
    at::Tensor& value = cache[CachedValueName(self)];
    if (key.defined() && !key.is_contiguous()) key = key.contiguous();
    if (value.defined() && !value.is_contiguous()) value = value.contiguous();
    x = CachedSelfAttentionSublayer(p, pre + ".pre_self_attention_layer_norm.scale", self, x,
                                    positions, key, value, cache_length, n, bias, s);
    x = MlpSublayer(p, pre + ".pre_mlp_layer_norm.scale", pre + ".mlp", x, s);
  }
  return x;
}

// Fills an empty cache from tokens [R, S] at positions 0..S-1 attending
// with `bias` [R or 1, H, S, S]: t5x's prefill pass, keeping every position.
void FillCache(const DecoderOnlyTransformer& net, const ParamStore& p, const at::Tensor& tokens,
               int64_t cache_length, const at::Tensor& bias, decoding::Cache& cache) {
  const int64_t span = tokens.size(1);
  const at::Tensor positions =
      at::arange(span, tokens.options()).unsqueeze(0).expand(tokens.sizes());
  const at::Tensor x = p.hooks().Embed(p.GetParam(kEmbedding), tokens)
                           .to(ActivationDtype(net.config().dtype));
  CachedLayers(net.config(), p, x, positions, cache_length, span, bias, cache);
}

at::Tensor StepWithCache(const DecoderOnlyTransformer& net, const ParamStore& p,
                         const at::Tensor& cur_token, decoding::Cache& cache) {
  const DecoderOnlyConfig& c = net.config();
  const at::ScalarType dt = ActivationDtype(c.dtype);
  at::Tensor& index = CacheEntry(cache, kCacheIndex);
  const int64_t length = CacheEntry(cache, CachedKeyName(DecoderLayerPrefix(0) + ".self_attention")).size(1);
  const int64_t n = AttendLength(index, length);
  const at::Tensor bias = DecodeSelfAttentionBias(
      p.hooks().Weight(p.GetParam(kDecoderRelEmbedding)), index, n, length,
      c.relative_attention_num_buckets, c.relative_attention_max_distance,
      /*clamp_past_end=*/false, dt);
  at::Tensor x = p.hooks().Embed(p.GetParam(kEmbedding), cur_token.reshape({-1, 1})).to(dt);
  x = CachedLayers(c, p, x, index.unsqueeze(1), length, n, bias, cache);
  at::Tensor logits = DecoderLogits(p, x, "decoder.decoder_norm.scale",
                                    c.logits_via_embedding ? "" : "decoder.logits_dense.kernel",
                                    kEmbedding, dt);
  index = index + 1;
  return logits.squeeze(1);
}

// The cached path's logits for rows that ran past the last position (beam
// search continues rows with longer prompts past it): the cache those rows
// would hold, filled by one pass over their L tokens (the prompt attending
// to itself as in the prefill), then the cached step.
at::Tensor PastEndLogits(const DecoderOnlyTransformer& net, const ParamStore& p,
                         const at::Tensor& rows, const at::Tensor& cur_token,
                         decoding::Cache& history) {
  const DecoderOnlyConfig& c = net.config();
  const at::Tensor tokens = CacheEntry(history, kTokens).index_select(0, rows);
  const int64_t length = tokens.size(1);
  auto it = history.find(kCausalAttention);
  const at::Tensor bias = CausalSelfAttentionBias(
      p.hooks().Weight(p.GetParam(kDecoderRelEmbedding)), length,
      it == history.end() ? at::Tensor() : it->second.index_select(0, rows),
      c.relative_attention_num_buckets, c.relative_attention_max_distance,
      ActivationDtype(c.dtype));
  decoding::Cache cache;
  FillCache(net, p, tokens, length, bias, cache);
  return StepWithCache(net, p, SelectStepRows(history, rows, cur_token, cache), cache);
}

at::Tensor StepWithoutCache(const DecoderOnlyTransformer& net, const ParamStore& p,
                            const at::Tensor& cur_token, decoding::Cache& cache) {
  return StepOverHistory(
      p, cache, kTokens, cur_token,
      [&](const at::Tensor& prefix) {
        FeatureBatch batch;
        batch["decoder_input_tokens"] = prefix;
        // Every position counts as a target (no padding mask), as t5x's decode.
        batch["decoder_target_tokens"] = at::ones_like(prefix);
        if (auto it = cache.find(kCausalAttention); it != cache.end()) {
          batch["decoder_causal_attention"] = it->second.narrow(1, 0, prefix.size(1));
        }
        return net(p, batch, /*train=*/false);
      },
      [&](const at::Tensor& rows) { return PastEndLogits(net, p, rows, cur_token, cache); });
}

}  // namespace

PrefilledCache PrefillDecoderOnlyCache(const DecoderOnlyTransformer& net, const ParamStore& p,
                                       const at::Tensor& inputs,
                                       const at::Tensor& causal_attention, bool bidirectional,
                                       bool use_cache) {
  T5XX_CHECK(inputs.dim() == 2 && inputs.sizes() == causal_attention.sizes() &&
                 inputs.size(1) >= 1,
             "decoder-only decoding needs decoder_input_tokens and decoder_causal_attention "
             "of the same shape [batch, length] with length >= 1");
  const at::NoGradGuard no_grad;
  const int64_t batch = inputs.size(0), length = inputs.size(1);
  const at::Tensor tokens = inputs.to(at::kLong);
  // t5x: the prompt's length excludes the initial BOS.
  const at::Tensor lengths = (tokens.narrow(1, 1, length - 1) != 0).sum(1);
  PrefilledCache out;
  out.initial_index = lengths;
  decoding::Cache& cache = out.cache;
  cache[kCacheIndex] = lengths.clone();
  if (!use_cache) {
    cache[kTokens] = tokens.clone();
    if (bidirectional) cache[kCausalAttention] = causal_attention;
    return out;
  }
  const DecoderOnlyConfig& c = net.config();
  const at::ScalarType dt = ActivationDtype(c.dtype);
  // Positions 0..initial_index[b] take part; the rest are masked out.
  const int64_t span = batch == 0 ? 1 : lengths.max().item<int64_t>() + 1;
  const at::Tensor valid = causal_attention.narrow(1, 0, span) > 0;
  // t5x's make_decoder_mask with decoder_target_tokens = the causal
  // attention mask: causal [or bidirectional within the prompt] and both
  // positions in it.
  at::Tensor mask = MakeCausalMask(span, tokens.device());
  if (bidirectional) mask = at::logical_or(mask, MakeAttentionMask(valid, valid));
  mask = at::logical_and(mask, MakeAttentionMask(valid, valid));
  const at::Tensor bias =
      MaskToBias(mask, dt) + RelativePositionBias(p.hooks().Weight(p.GetParam(kDecoderRelEmbedding)),
                                                  span, span, /*bidirectional=*/false,
                                                  c.relative_attention_num_buckets,
                                                  c.relative_attention_max_distance, dt);
  FillCache(net, p, tokens.narrow(1, 0, span), length, bias, cache);
  // t5x's update_cache_prefill keeps positions < initial_index only: the
  // prompt's last token is fed again as the first decode step's token.
  const at::Tensor keep =
      (at::arange(length, tokens.options()).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(-1);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string self = DecoderLayerPrefix(i) + ".self_attention";
    for (const std::string& name : {CachedKeyName(self), CachedValueName(self)}) {
      at::Tensor& t = cache[name];
      t = at::where(keep, t, at::zeros({}, t.options()));
    }
  }
  return out;
}

at::Tensor DecoderOnlyDecodeStep(const DecoderOnlyTransformer& net, const ParamStore& p,
                                 const at::Tensor& cur_token, decoding::Cache& cache) {
  const at::NoGradGuard no_grad;
  return cache.count(kTokens) ? StepWithoutCache(net, p, cur_token, cache)
                              : StepWithCache(net, p, cur_token, cache);
}

at::Tensor RemovePrefix(const at::Tensor& sequences, const at::Tensor& prefix_length) {
  const int64_t length = sequences.size(-1);
  std::vector<int64_t> shape(sequences.dim(), 1);
  shape[0] = sequences.size(0);
  // Position j takes the token at j + prefix, or 0 past the end.
  const at::Tensor source =
      at::arange(length, sequences.options().dtype(at::kLong)) +
      prefix_length.to(at::kLong).view(shape);
  const at::Tensor inside = source < length;
  const at::Tensor gathered =
      sequences.gather(-1, at::clamp_max(source, length - 1).expand(sequences.sizes()));
  return gathered * inside.to(sequences.scalar_type());
}

}  // namespace t5xx::models
