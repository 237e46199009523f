// The attention key/value cache of autoregressive decoding -- the
// implementation of decode_cache.h.
#include "t5xx/models/decode_cache.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "t5xx/kernels/decode_attention.h"
#include "t5xx/models/networks/layers.h"

namespace t5xx::models {
namespace {
constexpr double kEps = 1e-6;  // t5x LayerNorm's default epsilon
}  // namespace

std::string DecoderLayerPrefix(int64_t i) { return "decoder.layers_" + std::to_string(i); }

std::string CachedKeyName(const std::string& attention_prefix) {
  return attention_prefix + ".cached_key";
}
std::string CachedValueName(const std::string& attention_prefix) {
  return attention_prefix + ".cached_value";
}

int64_t CacheBytes(const decoding::Cache& cache) {
  int64_t bytes = 0;
  for (const auto& [name, t] : cache) {
    if (t.defined()) bytes += static_cast<int64_t>(t.nbytes());
  }
  return bytes;
}

at::Tensor& CacheEntry(decoding::Cache& cache, const std::string& name) {
  auto it = cache.find(name);
  if (it == cache.end() || !it->second.defined()) {
    throw std::invalid_argument("decoding cache has no '" + name +
                                "' (was it made by this model's decoding setup?)");
  }
  return it->second;
}

at::Tensor& WritableCacheEntry(decoding::Cache& cache, const std::string& name) {
  at::Tensor& t = CacheEntry(cache, name);
  if (!t.is_contiguous()) t = t.contiguous();
  return t;
}

at::Tensor DecodeSelfAttentionBias(const at::Tensor& rel_embedding,
                                   const at::Tensor& cache_index, int64_t n,
                                   int64_t cache_length, int64_t num_buckets,
                                   int64_t max_distance, bool clamp_past_end,
                                   at::ScalarType dtype) {
  const int64_t rows = cache_index.size(0);
  const int64_t heads = rel_embedding.size(0);
  const at::Tensor index = cache_index.to(at::kLong).unsqueeze(1);  // [B', 1]
  const at::Tensor keys = at::arange(n, index.options()).unsqueeze(0);  // [1, n]
  // The row cache_index[b] of the causal relative position bias.
  const at::Tensor query = clamp_past_end ? at::clamp_max(index, cache_length - 1) : index;
  const at::Tensor buckets =
      RelativePositionBucket(keys - query, /*bidirectional=*/false, num_buckets, max_distance);
  at::Tensor rel = rel_embedding.index_select(1, buckets.reshape({-1}))
                       .reshape({heads, rows, n})
                       .transpose(0, 1)
                       .unsqueeze(2)
                       .to(dtype);  // [B', H, 1, n]
  if (!clamp_past_end) {
    const at::Tensor in_range = (index < cache_length).view({rows, 1, 1, 1});
    rel = at::where(in_range, rel, at::zeros({}, rel.options()));
  }
  // t5x: arange(length) <= cur_index, every key for a row past the end.
  const at::Tensor mask = at::le(keys, index).view({rows, 1, 1, n});
  // combine_biases: the mask bias and the relative position bias add in dtype.
  return MaskToBias(mask, dtype) + rel;
}

at::Tensor CausalSelfAttentionBias(const at::Tensor& rel_embedding, int64_t length,
                                   const at::Tensor& bidirectional, int64_t num_buckets,
                                   int64_t max_distance, at::ScalarType dtype) {
  at::Tensor mask = MakeCausalMask(length, rel_embedding.device());
  if (bidirectional.defined()) {
    const at::Tensor b = bidirectional > 0;
    mask = at::logical_or(mask, MakeAttentionMask(b, b));
  }
  return MaskToBias(mask, dtype) + RelativePositionBias(rel_embedding, length, length,
                                                        /*bidirectional=*/false, num_buckets,
                                                        max_distance, dtype);
}

at::Tensor DecodeCrossAttentionBias(const at::Tensor& encoder_mask, at::ScalarType dtype) {
  return MaskToBias(encoder_mask.unsqueeze(1).unsqueeze(1), dtype);
}

at::Tensor CachedSelfAttentionSublayer(const ParamStore& p, const std::string& norm_scale,
                                       const std::string& prefix, const at::Tensor& h,
                                       const at::Tensor& positions, at::Tensor& cached_key,
                                       at::Tensor& cached_value, int64_t cache_length,
                                       int64_t n, const at::Tensor& bias,
                                       const SublayerSettings& s) {
  const ShardingHooks& hooks = p.hooks();
  const at::Tensor y = hooks.RmsNorm(h, p.GetParam(norm_scale), kEps, s.dtype);
  const Param& query = p.GetParam(prefix + ".query.kernel");
  const int64_t head_dim = hooks.GlobalShape(query)[1] / s.num_heads;
  const std::vector<at::Tensor> qkv = hooks.DenseEach(
      y, {&query, &p.GetParam(prefix + ".key.kernel"), &p.GetParam(prefix + ".value.kernel")},
      s.dtype);
  const at::Tensor &q = qkv[0], &k = qkv[1], &v = qkv[2];
  const int64_t rows = h.size(0), lq = h.size(1);
  if (!cached_key.defined()) {
    cached_key = at::zeros({rows, cache_length, k.size(-1)}, k.options());
    cached_value = at::zeros({rows, cache_length, v.size(-1)}, v.options());
  }
  // t5x's one-hot update writes nothing for a position past the cache.
  const at::Tensor row_ids =
      at::arange(rows, positions.options()).unsqueeze(1).expand({rows, lq});
  const at::Tensor written = positions < cache_length;
  if (written.all().item<bool>()) {
    cached_key.index_put_({row_ids, positions}, k);
    cached_value.index_put_({row_ids, positions}, v);
  } else {
    const at::Tensor r = row_ids.masked_select(written), c = positions.masked_select(written);
    cached_key.index_put_({r, c}, k.index({written}));
    cached_value.index_put_({r, c}, v.index({written}));
  }
  const at::Tensor out =
      AttentionHeads(q, cached_key.narrow(1, 0, n), cached_value.narrow(1, 0, n),
                     q.size(-1) / head_dim, bias, /*dropout_rate=*/0.0, /*train=*/false,
                     nullptr, s.dtype, s.float32_attention_logits);
  return h + hooks.Dense(out, p.GetParam(prefix + ".out.kernel"), s.dtype);
}

std::pair<at::Tensor, at::Tensor> CrossAttentionKeysValues(const ParamStore& p,
                                                           const std::string& prefix,
                                                           const at::Tensor& encoded,
                                                           at::ScalarType dtype) {
  const ShardingHooks& hooks = p.hooks();
  const std::vector<at::Tensor> kv = hooks.DenseEach(
      encoded, {&p.GetParam(prefix + ".key.kernel"), &p.GetParam(prefix + ".value.kernel")},
      dtype);
  return {kv[0], kv[1]};
}

at::Tensor CachedCrossAttentionSublayer(const ParamStore& p, const std::string& norm_scale,
                                        const std::string& prefix, const at::Tensor& h,
                                        const at::Tensor& key, const at::Tensor& value,
                                        const at::Tensor& bias, const SublayerSettings& s) {
  const ShardingHooks& hooks = p.hooks();
  const at::Tensor y = hooks.RmsNorm(h, p.GetParam(norm_scale), kEps, s.dtype);
  const Param& query = p.GetParam(prefix + ".query.kernel");
  const int64_t head_dim = hooks.GlobalShape(query)[1] / s.num_heads;
  const at::Tensor q = hooks.Dense(y, query, s.dtype);
  const int64_t heads = q.size(-1) / head_dim;
  // key, value and bias may hold one row per example for the rows' beams
  // (decoding's per-example entries): the fused decode attention reads
  // them in place, other paths get them repeated per row.
  const int64_t group = q.size(0) / key.size(0);
  at::Tensor out;
  if (group > 1 && q.size(1) == 1 && s.dtype == at::kFloat) {
    const auto heads_of = [&](const at::Tensor& t) {
      return t.view({t.size(0), t.size(1), heads, head_dim}).transpose(1, 2);
    };
    const at::Tensor bias32 = bias.defined() ? bias.to(at::kFloat) : bias;
    const at::Tensor qh = heads_of(q), kh = heads_of(key), vh = heads_of(value);
    if (DecodeAttentionFused(qh, kh, vh, bias32)) {
      out = DecodeAttention(qh, kh, vh, bias32).view({q.size(0), 1, q.size(-1)});
    }
  }
  if (!out.defined()) {
    const auto rows = [&](const at::Tensor& t) {
      return group > 1 && t.defined() && t.size(0) == key.size(0)
                 ? t.repeat_interleave(group, 0)
                 : t;
    };
    out = AttentionHeads(q, rows(key), rows(value), heads, rows(bias), /*dropout_rate=*/0.0,
                         /*train=*/false, nullptr, s.dtype, s.float32_attention_logits);
  }
  return h + hooks.Dense(out, p.GetParam(prefix + ".out.kernel"), s.dtype);
}

at::Tensor DecoderLogits(const ParamStore& p, const at::Tensor& x,
                         const std::string& norm_scale, const std::string& logits_kernel,
                         const std::string& embedding, at::ScalarType dtype) {
  // float32 logits as the networks' training path (network.cc): the normed
  // activations are cast up before logits_dense / the embedding's attend.
  const ShardingHooks& hooks = p.hooks();
  const at::Tensor y = hooks.RmsNorm(x, p.GetParam(norm_scale), kEps, dtype).to(at::kFloat);
  // (The tied logits' scale is 1/sqrt(emb_dim): the embedding's global
  // width, y may be a slice of it.)
  const Param& table = p.GetParam(embedding);
  const at::Tensor logits =
      logits_kernel.empty()
          ? hooks.Attend(y, table) / std::sqrt(static_cast<double>(hooks.GlobalShape(table)[1]))
          : hooks.Dense(y, p.GetParam(logits_kernel), at::kFloat);
  return WholeVocabularyLogits(p, logits);
}

at::Tensor WholeVocabularyLogits(const ParamStore& p, const at::Tensor& logits) {
  // Decoding picks tokens from the whole vocabulary: when the partitioner
  // splits it (vocabulary-parallel logits), each process's columns go to
  // their place in zeros of the whole width and the pieces are summed.
  const VocabPartition part = p.hooks().VocabPartitionOf(logits);
  if (!part.split()) return logits;
  std::vector<int64_t> shape = logits.sizes().vec();
  shape.back() = part.vocab_size;
  at::Tensor whole = at::zeros(shape, logits.options());
  whole.narrow(-1, part.offset, logits.size(-1)).copy_(logits);
  return part.sum(whole);
}

void WriteCurrentToken(at::Tensor& tokens, const at::Tensor& index, const at::Tensor& cur_token) {
  const at::Tensor written = index < tokens.size(1);
  const at::Tensor rows = at::arange(tokens.size(0), index.options());
  tokens.index_put_({rows.masked_select(written), index.masked_select(written)},
                    cur_token.reshape({-1}).to(at::kLong).masked_select(written));
}

int64_t AttendLength(const at::Tensor& index, int64_t cache_length) {
  return std::min(index.max().item<int64_t>() + 1, cache_length);
}

at::Tensor SelectStepRows(decoding::Cache& history, const at::Tensor& rows,
                          const at::Tensor& cur_token, decoding::Cache& cache) {
  cache[kCacheIndex] = CacheEntry(history, kCacheIndex).index_select(0, rows);
  return cur_token.reshape({-1}).index_select(0, rows);
}

at::Tensor StepOverHistory(const ParamStore& params, decoding::Cache& cache,
                           const std::string& tokens_key, const at::Tensor& cur_token,
                           const std::function<at::Tensor(const at::Tensor&)>& logits_of,
                           const std::function<at::Tensor(const at::Tensor&)>& past_end_logits) {
  at::Tensor& index = CacheEntry(cache, kCacheIndex);
  at::Tensor& tokens = WritableCacheEntry(cache, tokens_key);
  WriteCurrentToken(tokens, index, cur_token);
  const int64_t n = AttendLength(index, tokens.size(1));
  at::Tensor out = WholeVocabularyLogits(params, LogitsAt(logits_of(tokens.narrow(1, 0, n)), index));
  const at::Tensor past = (index >= tokens.size(1)).nonzero().squeeze(1);
  if (past.numel() > 0) out.index_put_({past}, past_end_logits(past));
  index = index + 1;
  return out;
}

at::Tensor LogitsAt(const at::Tensor& logits, const at::Tensor& index) {
  const int64_t n = logits.size(1);
  const at::Tensor pos = at::clamp_max(index.to(at::kLong), n - 1);
  const at::Tensor rows = at::arange(logits.size(0), pos.options());
  return logits.index({rows, pos});
}

}  // namespace t5xx::models
