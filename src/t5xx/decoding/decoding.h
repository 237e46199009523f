// Autoregressive decoding over a "logits of the next position given the
// cache" callback, as t5x's decoding.py: temperature sampling (greedy with
// topk=1) and beam search. Knows nothing of networks: the model supplies
// TokensToLogits and the cache it reads and writes (models/ builds both;
// decoding never includes a model header). libtorch only.
//
// Conventions shared by both functions (t5x's):
// * inputs int64 [B, L] is shifted right like decoder_input_tokens:
//   inputs[:, 0] is the BOS slot and is never output; output position j
//   (0-based, sequences[..., j]) corresponds to inputs[:, j + 1]. A nonzero
//   inputs[:, j + 1] is teacher-forced: the output holds it whatever the
//   model says, and it adds nothing to the log-probability. 0 = decode here.
// * Decoding without initial_index starts by feeding token 0 (BOS) at
//   position 0. With initial_index (the prompt lengths, t5x's prefill:
//   inputs = [0, p1 .. pk, 0 ...], initial_index = k) the model's cache must
//   already hold positions < k, and the first token fed is inputs[b, k] = pk.
// * Rows are flattened example-major: row b * n + j is decode/beam j of
//   example b (t5x's flat_batch_beam_expand order b0, b0, b1, b1, ...).
// * inputs, the cache and the logits live on one device; results come back
//   on it. The loop syncs with the host once or twice per step (its stop
//   test), as t5x's lax.while_loop does.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace t5xx::decoding {

// The model's decoding cache (t5x's flax "cache" collection): named tensors
// whose dim 0 is the batch (B rows when given to TemperatureSample or
// BeamSearch, B' rows inside the loop). Decoding treats it as opaque except
// that every tensor with >= 1 dims is expanded on dim 0 by num_decodes (b0,
// b0, b1, b1, ...) and, in beam search, reordered on dim 0 after every step
// by the surviving beams (index_select; t5x's cache_gather_beams). Tensors of
// 0 dims (a shared scalar index) are left as they are. A tensor with dims
// whose dim 0 is not B is a programming error (std::invalid_argument). A
// tensor whose name ends with kPerExampleSuffix holds what every beam or
// decode of an example shares (the encoder output's cross-attention keys
// and values, its mask): it keeps one row per example, neither expanded nor
// reordered (reordering only permutes an example's own beams), and the
// model reads row r / (B' / B) of it for row r.
using Cache = std::map<std::string, at::Tensor>;
inline constexpr char kPerExampleSuffix[] = ":per_example";
// Whether `name` ends with kPerExampleSuffix.
bool IsPerExampleEntry(const std::string& name);

// t5x's DecodingState, given to TokensToLogits once per step for all B' =
// B * num_decodes rows (beam search: B * beams) together. The tensors are
// valid during the call (sequences may be a view that decoding later
// updates); read them, do not write them.
//
// TemperatureSample: sequences is [B', L] (the inputs with the tokens
//   decoded so far: position 0 is BOS, sequences[:, p] for p >= 1 is output
//   position p - 1). cur_index[r] is the per-row loop index i, and
//   cur_token[r] == sequences[r, i] (BOS 0 at i = 0): the model feeds it at
//   position i and returns the logits for position i + 1. i starts at 0 or
//   initial_index and grows by one per step. A row that has reached the end
//   (i >= L, possible only once it has ended) keeps being fed 0 with cur_index
//   L + 1 (t5x's "garbage" slot) until every row is done; its logits are
//   ignored and its cache writes must not fail (e.g. drop writes at
//   positions >= the cache length, as flax's one-hot update does).
// BeamSearch: sequences is [B', max_decode_len + 1] (the live beams: a
//   dummy first position, then the tokens so far), cur_index is the loop
//   step s for every row and cur_token == sequences[:, s]. Without
//   initial_index the token is fed at position s. With initial_index the
//   beams are rebased: sequences[:, 0] is the prompt's last token, and row
//   r's absolute position is initial_index[r / beams] + s. (t5x's models
//   ignore cur_index and keep their own per-row position in the cache.)
struct DecodingState {
  at::Tensor cur_index;  // int64 [B']: the position of cur_token in sequences
  at::Tensor sequences;  // int64 [B', width]: the decoded prefix so far
  at::Tensor cur_token;  // int64 [B']: the token to feed now
  Cache* cache;          // the model's cache for these B' rows (read and written)
};

// Logits (any float dtype, [B', vocab]) of the position after cur_token.
// May update *state.cache in place or replace its entries (same names and
// row count).
using TokensToLogits = std::function<at::Tensor(DecodingState& state)>;

// t5x decoding.temperature_sample's arguments (defaults as t5x's).
struct TemperatureSampleOptions {
  // Sampling temperature; at or below 1e-4 the argmax is taken and the log
  // probability added is 0 (rescaled) or log_softmax(logits) (t5x's rule).
  double temperature = 1.0;
  // Per-example temperatures, float [B] (overrides `temperature`; each
  // example's decodes use its own).
  at::Tensor temperatures;
  // Keep the topk largest logits (ties with the k-th kept). The default 1
  // is greedy; 0: no cut.
  int64_t topk = 1;
  // Nucleus: keep the most probable tokens up to total probability >= topp.
  // Nonzero together with a nonzero topk is an error (set topk = 0).
  double topp = 0.0;
  int64_t num_decodes = 1;
  // Per-example prompt lengths int64 [B] (t5x's initial_index; see the
  // conventions above); undefined: start at position 0 with BOS.
  at::Tensor initial_index;
  // Decode at most this many tokens after the prompt: row b ends after
  // min(L, nonzero(inputs[b]) + max_decode_steps) positions (t5x's rule).
  std::optional<int64_t> max_decode_steps;
  // Log-probabilities of the temperature-scaled, topk/topp-masked
  // distribution (true) or of the model's raw logits (false).
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
  // int64 [B, num_decodes, length], ascending by score: [:, -1] is the best.
  // Tokens after an EOS are 0. length: L (TemperatureSample), max_decode_len
  // or L (BeamSearch). With initial_index, BeamSearch's rows are the prompt
  // (without BOS) followed by the continuation, cut to length.
  at::Tensor sequences;
  // float32 [B, num_decodes]: TemperatureSample: the summed log-probability
  // of the sampled (not forced) tokens. BeamSearch: finished beams' log-prob
  // / ((5 + len) / 6)^alpha, len = initial_index + tokens decoded incl. EOS;
  // an example without any finished beam returns its live beams and their
  // raw log-probs; unused slots score -1e7.
  at::Tensor scores;
};

// t5x's decode_fn as gin binds it on a model: which function, with which
// arguments (`decoding.temperature_sample.topk = 40`, ...).
struct DecodeFnConfig {
  enum class Kind { kTemperatureSample, kBeamSearch };
  Kind kind = Kind::kTemperatureSample;
  TemperatureSampleOptions temperature_sample;
  BeamSearchOptions beam_search;
};

// t5x decoding.temperature_sample. inputs: int64 (or int32) [B, L]; cache:
// the model's cache for B rows (expanded here to B * num_decodes). A row ends
// at an EOS beyond those its inputs already hold, or at its last position;
// the loop ends when all rows have. Draws from rng (null: libtorch's default
// generator for the logits' device); a generator on another device than the
// logits draws there and copies. The same generator state gives the same
// samples; JAX's samples are not reproduced. Throws t5xx::Error for topk and
// topp both set, a temperatures or initial_index tensor of the wrong size,
// max_decode_steps > L, or num_decodes < 1.
DecodeResult TemperatureSample(const at::Tensor& inputs, Cache cache,
                               const TokensToLogits& tokens_to_logits, int64_t eos_id,
                               const TemperatureSampleOptions& options,
                               at::Generator* rng = nullptr);

// t5x decoding.beam_search. inputs and cache as TemperatureSample. Keeps
// `beams` live and `beams` finished hypotheses from the top 2 * beams
// candidates of each step; stops at max_decode_len, or early when no live
// beam's log-prob / ((5 + max_decode_len + 1) / 6)^alpha beats the worst
// finished score (once every finished slot is filled). Inside a forced
// input only the best candidate survives and the forced token adds 0.
// Throws t5xx::Error for num_decodes < 1 or an initial_index of the wrong
// size.
DecodeResult BeamSearch(const at::Tensor& inputs, Cache cache,
                        const TokensToLogits& tokens_to_logits, int64_t eos_id,
                        const BeamSearchOptions& options);

// Runs config's function with its options, num_decodes replaced by the
// caller's (t5x's models pass predict_batch_with_aux's num_decodes to
// decode_fn).
DecodeResult Decode(const DecodeFnConfig& config, const at::Tensor& inputs, Cache cache,
                    const TokensToLogits& tokens_to_logits, int64_t eos_id,
                    int64_t num_decodes, at::Generator* rng = nullptr);

// x [B, ...] -> [B * n, ...], each row repeated n times in place (b0, b0, b1,
// b1, ...: t5x's flat_batch_beam_expand), for per-example tensors a model
// keeps outside the cache (e.g. encoder outputs). n == 1 returns x.
at::Tensor FlatBatchBeamExpand(const at::Tensor& x, int64_t n);

}  // namespace t5xx::decoding
