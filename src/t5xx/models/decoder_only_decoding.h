// Autoregressive decoding of the decoder-only network with a prompt: the
// prompt prefill that fills the decoding cache and the decode step that
// continues each row from the end of its prompt
// (t5x/examples/decoder_only/network.py with prefill=True / decode=True, as
// t5x.models.DecoderOnlyModel drives it through _compute_kv_cache and
// _compute_logits_from_slice).
//
// Prompts come as t5x builds them from a PrefixLMFeatureConverter batch:
// inputs = decoder_input_tokens * decoder_causal_attention (BOS 0, then the
// prompt's tokens, then 0s) and the prompt length of row b,
// initial_index[b] = the number of nonzero inputs after the BOS. Decoding
// starts at position initial_index[b] with the prompt's last token; rows
// with prompts of different lengths decode in one batch.
//
// Two interchangeable caches, as encoder_decoder_decoding.h:
//  * with the key/value cache (decode_cache.h): the prefill runs the
//    decoder once over every row's prompt (positions 0..initial_index[b],
//    attending bidirectionally within them for a prefix LM) and keeps the
//    keys and values of positions < initial_index[b] (t5x's
//    update_cache_prefill); each step then runs one position per row;
//  * without it: the cache holds the tokens so far
//    ("decoder_input_tokens") and, for a prefix LM, the prompt mask
//    ("decoder_causal_attention"); each step runs the whole network (the
//    training path) over the prefix.
#pragma once

#include <ATen/ATen.h>

#include "t5xx/decoding/decoding.h"
#include "t5xx/models/networks/decoder_only_network.h"
#include "t5xx/models/param_store.h"

namespace t5xx::models {

struct PrefilledCache {
  decoding::Cache cache;    // B rows (decode_cache.h, or the no-cache entries)
  at::Tensor initial_index;  // int64 [B]: where each row's decoding starts
};

// t5x's DecoderOnlyModel._compute_kv_cache. inputs: int64 [B, L] as above;
// causal_attention: decoder_causal_attention [B, L] (1 on the BOS, the
// prompt and the position after it). bidirectional: t5x's
// inputs_bidirectional_attention (the prompt attends to itself in both
// directions); else causal attention throughout. The cache has length L.
// Throws t5xx::Error for shapes that differ or are not [B, L].
PrefilledCache PrefillDecoderOnlyCache(const DecoderOnlyTransformer& network,
                                       const ParamStore& params, const at::Tensor& inputs,
                                       const at::Tensor& causal_attention, bool bidirectional,
                                       bool use_cache);

// One decoding step: cur_token int64 [B'] (or [B', 1]) enters at each row's
// cache_index; returns float32 logits [B', vocab] of the next position and
// advances cache_index by 1. Writes the cache in place. A row past the
// last position (cache_index >= L: beam search runs rows with longer
// prompts past it) gets t5x's logits: its token attends to all L cached
// positions without a position bias, and nothing is written (without the
// cache: the same, from a cache filled for that row by one pass over its L
// tokens). Throws std::invalid_argument when the cache lacks an entry.
at::Tensor DecoderOnlyDecodeStep(const DecoderOnlyTransformer& network, const ParamStore& params,
                                 const at::Tensor& cur_token, decoding::Cache& cache);

// t5x's models.remove_prefix: each row of sequences (int64 [B, L] or
// [B, N, L]) with its first prefix_length[b] tokens dropped and the rest
// shifted left, 0-filled at the end. prefix_length: int64 [B].
at::Tensor RemovePrefix(const at::Tensor& sequences, const at::Tensor& prefix_length);

}  // namespace t5xx::models
