// Autoregressive decoding of the T5 encoder-decoder network -- the
// implementation of encoder_decoder_decoding.h.
#include "t5xx/models/encoder_decoder_decoding.h"

#include <ATen/core/grad_mode.h>
#include <algorithm>
#include <string>

#include "t5xx/models/decode_cache.h"
#include "t5xx/models/few_row_decoder.h"
#include "t5xx/models/networks/layers.h"
#include "t5xx/util/error.h"

namespace t5xx::models {
namespace {

// The no-cache entries.
constexpr char kDecoderInputTokens[] = "decoder_input_tokens";
constexpr char kEncoded[] = "encoded";
constexpr char kEncoderTokens[] = "encoder_input_tokens";

// The cache's names of the encoder output's cross-attention keys and values
// of the attention `cross`: the same for an example's beams, never reordered
// (decoding.h's kPerExampleSuffix).
std::string CrossKeyName(const std::string& cross) {
  return CachedKeyName(cross) + decoding::kPerExampleSuffix;
}
std::string CrossValueName(const std::string& cross) {
  return CachedValueName(cross) + decoding::kPerExampleSuffix;
}

// The decoder's output head over its last layer's x [R, Lq, E]: float32
// logits [R, Lq, vocab] (decode_cache.h's DecoderLogits with this
// network's names).
at::Tensor DecoderHead(const T5Config& c, const ParamStore& p, const at::Tensor& x) {
  return DecoderLogits(p, x, "decoder.decoder_norm.scale",
                       c.logits_via_embedding ? "" : "decoder.logits_dense.kernel",
                       "token_embedder.embedding", ActivationDtype(c.dtype));
}

// The decoder over the key/value cache: tokens int64 [R, Lq] enter at
// `positions` [R, Lq] (their keys and values are written there), attending
// over cached positions [0, n) with self_bias (one, or one per layer);
// returns float32 logits [R, Lq, vocab].
at::Tensor CachedDecoder(const Transformer& net, const ParamStore& p, const at::Tensor& tokens,
                         const at::Tensor& positions, int64_t n,
                         const std::vector<at::Tensor>& self_bias, decoding::Cache& cache) {
  const T5Config& c = net.config();
  const at::ScalarType dt = ActivationDtype(c.dtype);
  const SublayerSettings s{c.num_heads, &c.mlp_activations, 0.0, c.float32_attention_logits,
                           dt, /*train=*/false, nullptr};
  const int64_t length = CacheEntry(cache, CachedKeyName(DecoderLayerPrefix(0) + ".self_attention")).size(1);
  const at::Tensor cross_bias =
      DecodeCrossAttentionBias(CacheEntry(cache, kEncoderDecoderMask), dt);
  at::Tensor x = p.hooks().Embed(p.GetParam("token_embedder.embedding"), tokens).to(dt);
  for (int64_t i = 0; i < c.num_decoder_layers; ++i) {
    const std::string pre = DecoderLayerPrefix(i);
    const std::string self = pre + ".self_attention", cross = pre + ".encoder_decoder_attention";
    x = CachedSelfAttentionSublayer(p, pre + ".pre_self_attention_layer_norm.scale", self, x,
                                    positions, WritableCacheEntry(cache, CachedKeyName(self)),
                                    WritableCacheEntry(cache, CachedValueName(self)), length, n,
                                    self_bias[self_bias.size() == 1 ? 0 : i], s);
    x = CachedCrossAttentionSublayer(p, pre + ".pre_cross_attention_layer_norm.scale", cross, x,
                                     CacheEntry(cache, CrossKeyName(cross)),
                                     CacheEntry(cache, CrossValueName(cross)), cross_bias, s);
    x = MlpSublayer(p, pre + ".pre_mlp_layer_norm.scale", pre + ".mlp", x, s);
  }
  return DecoderHead(c, p, x);
}

at::Tensor StepWithCache(const Transformer& net, const ParamStore& p,
                         const at::Tensor& cur_token, decoding::Cache& cache) {
  const T5Config& c = net.config();
  at::Tensor& index = CacheEntry(cache, kCacheIndex);
  const int64_t length = CacheEntry(cache, CachedKeyName(DecoderLayerPrefix(0) + ".self_attention")).size(1);
  const int64_t n = AttendLength(index, length);
  std::vector<at::Tensor> self_bias;
  for (const std::string& table : DecoderRelEmbeddings(c)) {
    self_bias.push_back(DecodeSelfAttentionBias(
        p.hooks().Weight(p.GetParam(table)), index, n, length, c.relative_attention_num_buckets,
        c.relative_attention_max_distance, /*clamp_past_end=*/true, ActivationDtype(c.dtype)));
  }
  const at::Tensor tokens = cur_token.reshape({-1, 1});
  // A few rows: the layers as plain loops (few_row_decoder.h), the same bits.
  const at::Tensor x = FewRowDecoderLayers(c, p, tokens, index, n, self_bias, cache);
  const at::Tensor logits =
      x.defined() ? DecoderHead(c, p, x)
                  : CachedDecoder(net, p, tokens, index.unsqueeze(1), n, self_bias, cache);
  index = index + 1;
  return logits.squeeze(1);
}

// The cached path's logits for rows that ran past the last position (only
// beam_search.max_decode_len > L makes them): the cache those rows would
// hold, filled by one pass over their L tokens, then the cached step.
at::Tensor PastEndLogits(const Transformer& net, const ParamStore& p, const at::Tensor& rows,
                         const at::Tensor& cur_token, decoding::Cache& history) {
  const T5Config& c = net.config();
  const at::Tensor tokens = CacheEntry(history, kDecoderInputTokens).index_select(0, rows);
  const int64_t length = tokens.size(1);
  decoding::Cache cache = InitEncoderDecoderCache(
      net, p, CacheEntry(history, kEncoded).index_select(0, rows),
      CacheEntry(history, kEncoderTokens).index_select(0, rows), length, /*use_cache=*/true);
  std::vector<at::Tensor> bias;
  for (const std::string& table : DecoderRelEmbeddings(c)) {
    bias.push_back(CausalSelfAttentionBias(p.hooks().Weight(p.GetParam(table)), length,
                                           at::Tensor(), c.relative_attention_num_buckets,
                                           c.relative_attention_max_distance,
                                           ActivationDtype(c.dtype)));
  }
  const at::Tensor positions =
      at::arange(length, tokens.options()).unsqueeze(0).expand(tokens.sizes());
  CachedDecoder(net, p, tokens, positions, length, bias, cache);
  return StepWithCache(net, p, SelectStepRows(history, rows, cur_token, cache), cache);
}

at::Tensor StepWithoutCache(const Transformer& net, const ParamStore& p,
                            const at::Tensor& cur_token, decoding::Cache& cache) {
  return StepOverHistory(
      p, cache, kDecoderInputTokens, cur_token,
      [&](const at::Tensor& prefix) {
        // t5x's decode=True masks: no padding mask on the decoder side (all
        // targets count as present), the encoder's padding on the cross side.
        return net.Decode(p, CacheEntry(cache, kEncoded), CacheEntry(cache, kEncoderTokens), prefix,
                          at::ones_like(prefix), at::Tensor(), at::Tensor(), /*train=*/false);
      },
      [&](const at::Tensor& rows) { return PastEndLogits(net, p, rows, cur_token, cache); });
}

}  // namespace

std::vector<std::string> DecoderRelEmbeddings(const T5Config& c) {
  if (!c.relpos_per_layer) return {kDecoderRelEmbedding};
  std::vector<std::string> out;
  for (int64_t i = 0; i < c.num_decoder_layers; ++i) {
    out.push_back(DecoderLayerPrefix(i) + ".relpos_bias.rel_embedding");
  }
  return out;
}

decoding::Cache InitEncoderDecoderCache(const Transformer& net, const ParamStore& p,
                                        const at::Tensor& encoded,
                                        const at::Tensor& encoder_input_tokens,
                                        int64_t max_decode_length, bool use_cache) {
  T5XX_CHECK(max_decode_length >= 1, "decoding needs a decoder length of at least 1 (the "
                                     "batch's decoder_input_tokens have " +
                                         std::to_string(max_decode_length) + " columns)");
  T5XX_CHECK(encoded.dim() == 3 && encoder_input_tokens.dim() == 2 &&
                 encoded.size(0) == encoder_input_tokens.size(0) &&
                 encoded.size(1) == encoder_input_tokens.size(1) + net.config().prompt_length,
             "the encoder output and encoder_input_tokens must be [B, P + Le, E] and [B, Le] "
             "of the same batch (P: the prompt's length)");
  const int64_t batch = encoder_input_tokens.size(0);
  decoding::Cache cache;
  cache[kCacheIndex] = at::zeros({batch}, encoder_input_tokens.options().dtype(at::kLong));
  if (!use_cache) {
    cache[kDecoderInputTokens] = at::zeros({batch, max_decode_length}, cache[kCacheIndex].options());
    cache[kEncoded] = encoded;
    cache[kEncoderTokens] = encoder_input_tokens;
    return cache;
  }
  const T5Config& c = net.config();
  const at::ScalarType dt = ActivationDtype(c.dtype);
  cache[kEncoderDecoderMask] = net.EncoderValid(encoder_input_tokens);
  for (int64_t i = 0; i < c.num_decoder_layers; ++i) {
    const std::string cross = DecoderLayerPrefix(i) + ".encoder_decoder_attention";
    auto [key, value] = CrossAttentionKeysValues(p, cross, encoded, dt);
    // Self-attention: this process's heads, the cross-attention's layout.
    const std::string self = DecoderLayerPrefix(i) + ".self_attention";
    cache[CachedKeyName(self)] = at::zeros({batch, max_decode_length, key.size(-1)}, key.options());
    cache[CachedValueName(self)] =
        at::zeros({batch, max_decode_length, value.size(-1)}, value.options());
    cache[CrossKeyName(cross)] = key;
    cache[CrossValueName(cross)] = value;
  }
  return cache;
}

at::Tensor EncoderDecoderDecodeStep(const Transformer& net, const ParamStore& p,
                                    const at::Tensor& cur_token, decoding::Cache& cache) {
  const at::NoGradGuard no_grad;
  return cache.count(kDecoderInputTokens) ? StepWithoutCache(net, p, cur_token, cache)
                              : StepWithCache(net, p, cur_token, cache);
}

}  // namespace t5xx::models
