// Autoregressive decoding of the T5 encoder-decoder network: the decoding
// cache of a batch and the decode step that turns one token per row into
// the logits of the next position (t5x/examples/t5/network.py
// Transformer.decode with decode=True, as t5x.models.EncoderDecoderModel
// drives it through _compute_kv_cache and _compute_logits_from_slice).
//
// Two interchangeable caches (decoding::Cache, dim 0 = the flattened batch):
//  * with the key/value cache (decode_cache.h): each step runs the decoder
//    on one position per row, reading the earlier positions' keys and values
//    from the cache and the encoder output's keys and values computed once;
//  * without it: the cache holds the tokens so far ("decoder_input_tokens"),
//    the encoder output ("encoded") and "encoder_input_tokens", and each step
//    runs Transformer::Decode (the training path) over the whole prefix --
//    slower, and the reference the cached path is tested against.
// Both give the same logits up to float rounding. The prompt of
// prompt_with_targets is teacher-forced by the decoding function, as t5x
// does for this network (its decode has no prefill).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/decoding/decoding.h"
#include "t5xx/models/networks/network.h"
#include "t5xx/models/param_store.h"

namespace t5xx::models {

// The names of the decoder's relative position tables (t5x's parameter
// paths): decoder.relpos_bias.rel_embedding, or one per layer,
// decoder.layers_<i>.relpos_bias.rel_embedding, with
// T5Config::relpos_per_layer (t5x's scalable_t5).
std::vector<std::string> DecoderRelEmbeddings(const T5Config& c);

// The cache of B rows for decoding max_decode_length positions after the
// encoder output `encoded` [B, Le, E] (Transformer::Encode) of
// encoder_input_tokens int64 [B, Le] (0 = padding). Every row starts at
// position 0 (cache_index 0). use_cache: the key/value cache (zeros
// [B, L, H*D] per decoder layer for self-attention, the cross-attention keys
// and values of `encoded`, the encoder padding mask), else the no-cache
// entries (see top). Throws t5xx::Error for max_decode_length < 1 or
// mismatched batch sizes.
decoding::Cache InitEncoderDecoderCache(const Transformer& network, const ParamStore& params,
                                        const at::Tensor& encoded,
                                        const at::Tensor& encoder_input_tokens,
                                        int64_t max_decode_length, bool use_cache);

// One decoding step: cur_token int64 [B'] (or [B', 1]) enters at each row's
// cache_index; returns float32 logits [B', vocab] of the next position and
// advances cache_index by 1. Writes the cache in place (see
// decode_cache.h). A row past the last position (cache_index >= L, which
// only beam_search.max_decode_len > L makes) gets t5x's logits: its token
// attends to all L cached positions with the last position's bias, and
// nothing is written (without the cache: the same, from a cache filled for
// that row by one pass over its L tokens). Throws std::invalid_argument
// when the cache lacks an entry.
at::Tensor EncoderDecoderDecodeStep(const Transformer& network, const ParamStore& params,
                                    const at::Tensor& cur_token, decoding::Cache& cache);

}  // namespace t5xx::models
