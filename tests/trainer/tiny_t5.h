// A tiny T5 and a learnable synthetic batch, shared by the trainer and
// optimizer tests (tests/ is on their include path).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

#include "t5xx/models/base_model.h"
#include "t5xx/models/networks/t5_config.h"

namespace t5xx::testing {

// vocab 64, emb 32, 2 heads x 16, one encoder and one decoder layer, mlp 64.
inline models::T5Config TinyT5Config(double dropout_rate = 0.0) {
  models::T5Config c;
  c.vocab_size = 64;
  c.emb_dim = 32;
  c.num_heads = 2;
  c.head_dim = 16;
  c.num_encoder_layers = 1;
  c.num_decoder_layers = 1;
  c.mlp_dim = 64;
  c.mlp_activations = {"gelu", "linear"};
  c.dropout_rate = dropout_rate;
  return c;
}

// 8 sequences of 6 random tokens in [3, 64) (a generator seeded with
// `seed`); targets = inputs reversed, decoder inputs shifted right with 0
// (BOS), all weights 1.
inline models::FeatureBatch ReverseBatch(int64_t seed) {
  at::Generator g = at::detail::createCPUGenerator(static_cast<uint64_t>(seed));
  at::Tensor in = at::randint(3, 64, {8, 6}, g, at::kLong);
  at::Tensor tg = in.flip({1});
  at::Tensor dec_in = at::cat({at::zeros({8, 1}, at::kLong), tg.narrow(1, 0, 5)}, 1);
  return {{"encoder_input_tokens", in},
          {"decoder_target_tokens", tg},
          {"decoder_input_tokens", dec_in},
          {"decoder_loss_weights", at::ones({8, 6})}};
}

}  // namespace t5xx::testing
