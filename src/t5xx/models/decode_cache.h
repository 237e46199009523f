// The attention key/value cache of autoregressive decoding: the pieces both
// networks' decode steps share (t5x/examples/t5/layers.py and
// t5x/examples/decoder_only/layers.py MultiHeadDotProductAttention with
// decode=True / prefill=True, and t5x's "cache" collection).
//
// A cache (decoding::Cache) maps names to tensors whose dim 0 is the
// flattened batch B' (batch * num_decodes once decoding has expanded it), so
// that decoding's expansion and beam reordering apply to every entry:
//   cache_index                          int64 [B']: the position at which
//                                        each row's next token is written
//                                        (t5x's cache_index, one per row)
//   <layer>.self_attention.cached_key    [B', L, H*D] in the activation dtype
//   <layer>.self_attention.cached_value  (L = max decode length; position j
//                                        holds token j's projected key/value;
//                                        not yet written positions are 0)
//   <layer>.encoder_decoder_attention.cached_key:per_example /
//   <layer>.encoder_decoder_attention.cached_value:per_example
//                                        [B, Le, H*D]: the encoder output's
//                                        projections, computed once
//   encoder_decoder_mask:per_example     bool [B, Le]: encoder input > 0
// (":per_example", decoding.h's kPerExampleSuffix: one row per example,
// shared by its beams or decodes, never expanded or reordered.)
// H*D is this process's heads (the key kernel's output through the
// parameters' ShardingHooks). t5x stores [B', H, D, L] (a TPU layout); the
// values are the same.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <string>

#include "t5xx/decoding/decoding.h"
#include "t5xx/models/networks/param_blocks.h"
#include "t5xx/models/param_store.h"

namespace t5xx::models {

// Cache entry names (t5x's cache collection paths joined with '.').
inline const char kCacheIndex[] = "cache_index";
inline const char kEncoderDecoderMask[] = "encoder_decoder_mask:per_example";
std::string CachedKeyName(const std::string& attention_prefix);    // <prefix>.cached_key
std::string CachedValueName(const std::string& attention_prefix);  // <prefix>.cached_value

// What both networks' decoders name alike: the path of decoder layer i
// ("decoder.layers_<i>", t5x's parameter path) and the decoder's relative
// position table.
std::string DecoderLayerPrefix(int64_t i);
inline const char kDecoderRelEmbedding[] = "decoder.relpos_bias.rel_embedding";

// Bytes held by the cache's tensors (the sum of their nbytes).
int64_t CacheBytes(const decoding::Cache& cache);

// cache[name]; throws std::invalid_argument "decoding cache has no '<name>'"
// when absent (a cache from another model or none at all).
at::Tensor& CacheEntry(decoding::Cache& cache, const std::string& name);

// cache[name] made safe to write in place: a tensor that is not contiguous
// (e.g. an expanded view sharing rows) is replaced by a contiguous copy.
at::Tensor& WritableCacheEntry(decoding::Cache& cache, const std::string& name);

// The self-attention bias of one query per row against the first n cached
// positions, as t5x's decode=True attention builds it: the causal mask
// "key position <= cache_index[b]" as MaskToBias (0 / -1e10) plus the
// causal relative position bias of query position cache_index[b] (the row
// cache_index[b] of RelativePositionBias), summed in `dtype` (t5x's
// combine_biases). rel_embedding: [H, num_buckets] float32 (this process's
// heads); cache_index: int64 [B']. A row whose cache_index is >=
// cache_length (one that ran past the end while others continue) sees every
// key, with the position bias of the last row when clamp_past_end (t5x's
// encoder-decoder network slices the bias with lax.dynamic_slice, which
// clamps) or none (its decoder-only network selects it with a one-hot of
// the index, which is all zeros there). Returns [B', H, 1, n] in dtype.
at::Tensor DecodeSelfAttentionBias(const at::Tensor& rel_embedding,
                                   const at::Tensor& cache_index, int64_t n,
                                   int64_t cache_length, int64_t num_buckets,
                                   int64_t max_distance, bool clamp_past_end,
                                   at::ScalarType dtype);

// The self-attention bias of the training path for `length` positions that
// all count (t5x's decode=True masks have no padding): the causal mask,
// or-ed with `bidirectional` [B', length] attending to itself (a prefix
// LM's prompt; undefined: none), as MaskToBias, plus the causal relative
// position bias, in dtype. Returns [B' or 1, H, length, length].
at::Tensor CausalSelfAttentionBias(const at::Tensor& rel_embedding, int64_t length,
                                   const at::Tensor& bidirectional, int64_t num_buckets,
                                   int64_t max_distance, at::ScalarType dtype);

// The cross-attention bias of decoding: 0 where the encoder input is not
// padding, -1e10 where it is (t5x's decode=True encoder_decoder_mask,
// make_attention_mask(ones, encoder_input_tokens > 0)). encoder_mask: bool
// [B', Le]. Returns [B', 1, 1, Le] in dtype.
at::Tensor DecodeCrossAttentionBias(const at::Tensor& encoder_mask, at::ScalarType dtype);

// A pre-LayerNorm self-attention sublayer over the cache (t5x's
// DecoderLayer self-attention with decode=True or prefill=True):
// y = RmsNorm(h); this call's keys and values y @ key/value kernels are
// written into cached_key / cached_value at `positions` (int64 [B', Lq];
// entries >= the cache length L are not written, as t5x's one-hot update),
// then the queries attend over cached positions [0, n) with `bias`
// (broadcastable to [B', H, Lq, n]); returns h + the attention output
// [B', Lq, E] in s.dtype (no dropout: decoding is deterministic).
// cached_key / cached_value: [B', L, H*D] in s.dtype, written in place; an
// undefined tensor is first allocated as zeros [B', cache_length, H*D].
// Throws std::out_of_range naming a missing parameter.
at::Tensor CachedSelfAttentionSublayer(const ParamStore& params, const std::string& norm_scale,
                                       const std::string& prefix, const at::Tensor& h,
                                       const at::Tensor& positions, at::Tensor& cached_key,
                                       at::Tensor& cached_value, int64_t cache_length,
                                       int64_t n, const at::Tensor& bias,
                                       const SublayerSettings& s);

// The encoder output's keys and values for the cross-attention at `prefix`
// (encoded @ key / value kernels), [B, Le, H*D] in dtype: what t5x
// recomputes at every decode step, computed once.
std::pair<at::Tensor, at::Tensor> CrossAttentionKeysValues(const ParamStore& params,
                                                           const std::string& prefix,
                                                           const at::Tensor& encoded,
                                                           at::ScalarType dtype);

// A pre-LayerNorm cross-attention sublayer with precomputed keys and values
// (t5x's DecoderLayer encoder_decoder_attention): h + attention of
// RmsNorm(h) @ query kernel over key / value [B', Le, H*D] with `bias`, then
// the output kernel. h: [B', Lq, E]; returns [B', Lq, E] in s.dtype. key,
// value and bias may instead have one row per example (B rows, B' a
// multiple: decoding's per-example cache entries): row r reads example
// r / (B' / B).
at::Tensor CachedCrossAttentionSublayer(const ParamStore& params, const std::string& norm_scale,
                                        const std::string& prefix, const at::Tensor& h,
                                        const at::Tensor& key, const at::Tensor& value,
                                        const at::Tensor& bias, const SublayerSettings& s);

// The decoders' output head: RmsNorm with `norm_scale`, then float32 logits
// through `logits_kernel` (DenseGeneral(dtype=float32)) or, when
// logits_kernel is empty, the embedding table `embedding`'s transpose
// divided by sqrt(emb_dim) (t5x's logits_via_embedding). x: [..., E] in
// dtype; returns float32 [..., vocab] over the whole vocabulary
// (WholeVocabularyLogits).
at::Tensor DecoderLogits(const ParamStore& params, const at::Tensor& x,
                         const std::string& norm_scale, const std::string& logits_kernel,
                         const std::string& embedding, at::ScalarType dtype);

// The no-cache path's token history: tokens[b, index[b]] = cur_token[b]
// for every row with index[b] < tokens.size(1), in place. tokens: int64
// [B', L]; index: int64 [B']; cur_token: int64 [B'] or [B', 1].
void WriteCurrentToken(at::Tensor& tokens, const at::Tensor& index, const at::Tensor& cur_token);

// The number of positions a decode step attends over: every row's
// [0, index[b]], at most cache_length.
int64_t AttendLength(const at::Tensor& index, int64_t cache_length);

// The cached step's inputs for `rows` (int64 [R]) of a batch whose rows ran
// past the cache's end (PastEndLogits): sets cache[kCacheIndex] to
// history's index at `rows`; returns cur_token's values there ([R]).
at::Tensor SelectStepRows(decoding::Cache& history, const at::Tensor& rows,
                          const at::Tensor& cur_token, decoding::Cache& cache);

// One step of the no-cache path (t5x's decode over the whole history):
// writes cur_token into the history cache[tokens_key] (int64 [B', L]) at
// cache[kCacheIndex], runs `logits_of(prefix)` over the attended prefix
// (int64 [B', n], n = AttendLength) for logits [B', n, V_local], takes each
// row's at its index over the whole vocabulary, replaces the rows at or past
// L with `past_end_logits(rows)` (rows: int64 [R]), and advances the index.
// Returns float32 [B', vocab].
at::Tensor StepOverHistory(const ParamStore& params, decoding::Cache& cache,
                           const std::string& tokens_key, const at::Tensor& cur_token,
                           const std::function<at::Tensor(const at::Tensor&)>& logits_of,
                           const std::function<at::Tensor(const at::Tensor&)>& past_end_logits);

// Logits over the whole vocabulary: `logits` [..., V_local] as they are
// when the parameters' hooks do not split the vocabulary, else this
// process's columns completed with the other processes' through the hooks'
// VocabPartition (a sum of zero-padded pieces). Float32 [..., vocab].
at::Tensor WholeVocabularyLogits(const ParamStore& params, const at::Tensor& logits);

// Logits at each row's position: logits [B', n, V] -> [B', V] taking
// position min(index[b], n - 1) of row b.
at::Tensor LogitsAt(const at::Tensor& logits, const at::Tensor& index);

}  // namespace t5xx::models
