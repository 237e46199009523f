// Autoregressive decoding over a "logits of the next position given the
// cache" callback, as t5x's decoding.py: temperature sampling (greedy with
// topk=1) and beam search. Knows nothing of networks: the model supplies
// TokensToLogits and the cache it reads and writes (models/ builds both;
// decoding never includes a model header). libtorch only.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace t5xx::decoding {

// The model's decoding cache (t5x's flax "cache" collection): named tensors
// whose dim 0 is the flattened batch. Decoding treats it as opaque except
// that it expands dim 0 by num_decodes (each example's rows kept together:
// b0, b0, b1, b1, ... as t5x's flat_batch_beam_expand) and, in beam search,
// reorders dim 0 by the surviving beams (t5x's cache_gather_beams). A
// tensor of 0 dims (e.g. a shared index) is left as it is.
using Cache = std::map<std::string, at::Tensor>;

// t5x's DecodingState, given to TokensToLogits at every step. B' = batch *
// num_decodes (beam search: batch * beams).
struct DecodingState {
  at::Tensor cur_index;  // int64 [B']: the position of cur_token in sequences
  at::Tensor sequences;  // int64 [B', L]: the decoded prefix so far
  at::Tensor cur_token;  // int64 [B']: the token to feed now
  Cache* cache;          // the model's cache for these B' rows (read and written)
};

// Logits (float32 [B', vocab]) of the position after cur_token. May update
// *state.cache in place or replace its entries.
using TokensToLogits = std::function<at::Tensor(DecodingState& state)>;

// t5x decoding.temperature_sample's arguments (defaults as t5x's).
struct TemperatureSampleOptions {
  // Sampling temperature; below 1e-4 the argmax is taken (t5x's rule).
  double temperature = 1.0;
  // Per-example temperatures, float [B] (overrides `temperature`).
  at::Tensor temperatures;
  int64_t topk = 1;     // 1: greedy; 0: no top-k cut
  double topp = 0.0;    // nucleus cut; nonzero together with topk != 0 is an error
  int64_t num_decodes = 1;
  // Per-example start positions int64 [B] (t5x's initial_index: prompt
  // prefill); undefined: start from position 0 with token 0 (BOS).
  at::Tensor initial_index;
  // Decode at most this many tokens after the prompt (t5x's max_decode_steps).
  std::optional<int64_t> max_decode_steps;
  bool rescale_log_probs = true;
};

// t5x decoding.beam_search's arguments (defaults as t5x's).
struct BeamSearchOptions {
  int64_t num_decodes = 4;  // beams
  double alpha = 0.6;       // brevity penalty exponent ((5 + len) / 6)^alpha
  // The decode length; 0: inputs.size(1) (t5x's max_decode_len=None).
  int64_t max_decode_len = 0;
  // Stop after this many steps when > 0 (t5x's max_decode_step).
  int64_t max_decode_step = -1;
  // Stop when no live beam's log-probability, divided by the largest brevity
  // penalty, reaches min_log_prob / that penalty (t5x's min_log_prob).
  double min_log_prob = -1.0e7;
  // Per-example prompt lengths int64 [B] (t5x's initial_index): the cache is
  // prefilled up to them and the prompt is copied into the output.
  at::Tensor initial_index;
};

// Decoded sequences and their scores, as t5x returns them.
struct DecodeResult {
  at::Tensor sequences;  // int64 [B, num_decodes, L], ascending by score (best last)
  at::Tensor scores;     // float32 [B, num_decodes]: log-probabilities (beam
                         // search: with the brevity penalty)
};

// t5x's decode_fn as gin binds it on a model: which function, with which
// arguments (`decoding.temperature_sample.topk = 40`, ...).
struct DecodeFnConfig {
  enum class Kind { kTemperatureSample, kBeamSearch };
  Kind kind = Kind::kTemperatureSample;
  TemperatureSampleOptions temperature_sample;
  BeamSearchOptions beam_search;
};

// t5x decoding.temperature_sample. inputs: int64 [B, L] (0 = to decode;
// nonzero entries are kept, as t5x's teacher-forced prompt positions);
// cache: the model's cache for B rows (expanded here to B * num_decodes).
// Draws from rng (null: libtorch's default generator); the same rng state
// gives the same samples. Tokens after eos_id become 0. Throws t5xx::Error
// for topk and topp both set, a temperatures tensor of the wrong size, or
// num_decodes < 1.
DecodeResult TemperatureSample(const at::Tensor& inputs, Cache cache,
                               const TokensToLogits& tokens_to_logits, int64_t eos_id,
                               const TemperatureSampleOptions& options,
                               at::Generator* rng = nullptr);

// t5x decoding.beam_search. inputs and cache as TemperatureSample; finished
// beams are scored log p / ((5 + length) / 6)^alpha; the search stops early
// when no live beam can beat the worst finished one. Throws t5xx::Error for
// num_decodes < 1.
DecodeResult BeamSearch(const at::Tensor& inputs, Cache cache,
                        const TokensToLogits& tokens_to_logits, int64_t eos_id,
                        const BeamSearchOptions& options);

// Runs config's function with its options, num_decodes replaced by the
// caller's (t5x's models pass predict_batch_with_aux's num_decodes to
// decode_fn).
DecodeResult Decode(const DecodeFnConfig& config, const at::Tensor& inputs, Cache cache,
                    const TokensToLogits& tokens_to_logits, int64_t eos_id,
                    int64_t num_decodes, at::Generator* rng = nullptr);

}  // namespace t5xx::decoding
