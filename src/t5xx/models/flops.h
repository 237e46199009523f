// Model FLOPs of the T5 encoder-decoder, for MFU.
//
// Formula (matmul FLOPs only, 2 FLOPs per multiply-add; embeddings lookups,
// norms, softmax and elementwise ops are not counted, as in the PaLM paper's
// MFU accounting, arXiv:2204.02311 App. B):
//   encoder, per sequence of Le tokens:
//     Le * n_enc * (2*4*E*HD + 2*A*E*F) + n_enc * 2*2*Le*Le*HD
//   decoder, per sequence of Ld target tokens (with Le encoder tokens):
//     Ld * n_dec * (2*4*E*HD + 2*2*E*HD + 2*A*E*F) + Ld * 2*E*V
//     + Le * n_dec * 2*2*E*HD                       (cross-attention k, v)
//     + n_dec * (2*2*Ld*Ld*HD + 2*2*Ld*Le*HD)       (scores and mixing)
// where E = emb_dim, HD = num_heads*head_dim, F = mlp_dim, A = number of MLP
// input projections + 1 (3 for gated GELU), V = vocab_size. Training counts
// 3x the forward pass (forward + backward for activations and weights).
// Attention is counted over the full padded lengths (no causal halving).
//
// Decoder-only, per sequence of L tokens:
//     L * n * (2*4*E*HD + 2*A*E*F) + L * 2*E*V + n * 2*2*L*L*HD
#pragma once

#include <cstdint>

#include "t5xx/models/networks/decoder_only_network.h"
#include "t5xx/models/networks/t5_config.h"

namespace t5xx::models {

// Forward-pass FLOPs for one sequence pair of lengths (enc_len, dec_len).
double EncoderDecoderForwardFlops(const T5Config& config, int64_t enc_len,
                                  int64_t dec_len);

// Training-step FLOPs (3x forward) for batch_size sequence pairs.
double EncoderDecoderTrainFlops(const T5Config& config, int64_t batch_size,
                                int64_t enc_len, int64_t dec_len);

// Forward-pass FLOPs of the decoder-only network for one sequence of `length`.
double DecoderOnlyForwardFlops(const DecoderOnlyConfig& config, int64_t length);

// Training-step FLOPs (3x forward) for batch_size sequences.
double DecoderOnlyTrainFlops(const DecoderOnlyConfig& config, int64_t batch_size,
                             int64_t length);

}  // namespace t5xx::models
