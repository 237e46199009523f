// TemperatureSample -- t5x decoding.temperature_sample and
// _temperature_sample_single_trial, step for step, over libtorch tensors.
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "t5xx/decoding/decoding.h"
#include "t5xx/decoding/cache_ops.h"
#include "t5xx/decoding/selection.h"
#include "t5xx/util/error.h"

namespace t5xx::decoding {
namespace {

// t5x's MIN_TEMPERATURE: at or below it the argmax is taken.
constexpr double kMinTemperature = 1e-4;
// t5x appends two positions to the sequences: the one after the last real
// position, and a garbage slot that rows already at their end overwrite.
constexpr int64_t kExtraInputTokens = 2;

// Gumbel noise for categorical sampling (jax.random.categorical is
// argmax(logits + gumbel)), drawn from rng on the rng's device and moved to
// `like`'s device (so a CPU generator gives the same samples on any device).
at::Tensor GumbelNoise(const at::Tensor& like, at::Generator* rng) {
  const double tiny = std::numeric_limits<float>::min();
  at::Tensor u;
  if (rng != nullptr) {
    u = at::empty(like.sizes(), like.options().dtype(at::kFloat).device(rng->device()));
    u.uniform_(tiny, 1.0, *rng);
    if (u.device() != like.device()) u = u.to(like.device());
  } else {
    u = at::empty(like.sizes(), like.options().dtype(at::kFloat));
    u.uniform_(tiny, 1.0);
  }
  return -at::log(-at::log(u));
}

// The log-probability of each row's `token` under log_softmax(logits).
at::Tensor LogProbOf(const at::Tensor& logits, const at::Tensor& token) {
  return at::log_softmax(logits, -1).gather(1, token.unsqueeze(1)).squeeze(1);
}

// Draws one token per row among candidates: cand [R, c] the scaled logits
// of the only tokens that can be drawn (others of them masked to kNegInf),
// index [R, c] their vocabulary ids. The same draw as over the whole masked
// row: there every other entry is kNegInf, which exp() turns into exactly 0
// in the log-softmax and which no Gumbel noise (< 17) lifts past a kept
// logit. One candidate needs no noise.
std::pair<at::Tensor, at::Tensor> DrawAmong(const at::Tensor& cand, const at::Tensor& index,
                                            const at::Tensor& logits,
                                            const TemperatureSampleOptions& o,
                                            at::Generator* rng) {
  at::Tensor pick = cand.size(1) == 1 ? at::zeros({cand.size(0), 1}, index.options())
                                      : (cand + GumbelNoise(cand, rng)).argmax(-1, true);
  at::Tensor token = index.gather(1, pick).squeeze(1);
  at::Tensor log_prob = o.rescale_log_probs
                            ? at::log_softmax(cand, -1).gather(1, pick).squeeze(1)
                            : LogProbOf(logits, token);
  return {token, log_prob};
}

// t5x's sample_logits_with_nonzero_temperature. temperature: a scalar or a
// [rows, 1] tensor. Draws among the topk (or top-p) candidates only when
// they are exactly the tokens t5x's masks keep; else over the masked row.
std::pair<at::Tensor, at::Tensor> SampleNonzero(const at::Tensor& logits,
                                                const at::Tensor& temperature,
                                                const TemperatureSampleOptions& o,
                                                at::Generator* rng) {
  at::Tensor scaled = logits / at::clamp_min(temperature, kMinTemperature);
  const int64_t vocab = scaled.size(-1);
  if (o.topk > 0 && o.topk < vocab) {
    const int64_t k = o.topk;
    // k + 1 values: a (k+1)-th equal to the k-th means more than k tokens
    // tie at the cut, all of which t5x's topk_mask keeps.
    auto [values, indices] = at::topk(scaled, k + 1, -1, true, true);
    if (!values.select(1, k).eq(values.select(1, k - 1)).any().item<bool>()) {
      return DrawAmong(values.narrow(1, 0, k), indices.narrow(1, 0, k), logits, o, rng);
    }
    scaled = TopKMask(scaled, k, kNegInf);
  }
  if (o.topp != 0.0) {
    at::Tensor probs = at::softmax(scaled, -1);
    TopPCut cut = TopPThreshold(probs, o.topp);
    const int64_t c = cut.values.size(-1);
    // Every kept token is in the prefix when its last entry is below the
    // threshold in every row.
    if (c < vocab && (cut.values.narrow(-1, c - 1, 1) < cut.threshold).all().item<bool>()) {
      at::Tensor cand = at::where(cut.values >= cut.threshold, scaled.gather(-1, cut.indices),
                                  at::full({}, kNegInf, scaled.options()));
      return DrawAmong(cand, cut.indices, logits, o, rng);
    }
    scaled = at::where(probs >= cut.threshold, scaled, at::full({}, kNegInf, scaled.options()));
  }
  at::Tensor token = (scaled + GumbelNoise(scaled, rng)).argmax(-1);
  at::Tensor log_prob = LogProbOf(o.rescale_log_probs ? scaled : logits, token);
  return {token, log_prob};
}

// t5x's sample_logits_with_zero_temperature: greedy whatever topk and topp.
std::pair<at::Tensor, at::Tensor> SampleZero(const at::Tensor& logits,
                                             const TemperatureSampleOptions& o) {
  at::Tensor token = logits.argmax(-1);
  at::Tensor log_prob =
      o.rescale_log_probs ? at::zeros({logits.size(0)}, logits.options()) : LogProbOf(logits, token);
  return {token, log_prob};
}

// The temperatures of the rows: one for all, or one per row (already
// expanded), split by which side of kMinTemperature they fall (computed
// once, not per step).
struct RowTemperatures {
  at::Tensor per_row;  // float [rows], or undefined: `scalar` for all rows
  at::Tensor hot;      // bool [rows]: per_row > kMinTemperature
  bool any_hot = false;
  bool all_hot = false;
};

// One step's tokens and their log-probabilities for logits [rows, vocab].
std::pair<at::Tensor, at::Tensor> SampleLogits(const at::Tensor& logits, const RowTemperatures& t,
                                               const TemperatureSampleOptions& o,
                                               at::Generator* rng) {
  if (!t.per_row.defined()) {
    if (o.temperature > kMinTemperature) {
      return SampleNonzero(logits, at::scalar_tensor(o.temperature, logits.options()), o, rng);
    }
    return SampleZero(logits, o);
  }
  // Per example (t5x's vmapped lax.cond): each row by its own temperature.
  if (t.all_hot) return SampleNonzero(logits, t.per_row.unsqueeze(1), o, rng);
  if (!t.any_hot) return SampleZero(logits, o);
  auto [hot_token, hot_log_prob] = SampleNonzero(logits, t.per_row.unsqueeze(1), o, rng);
  auto [cold_token, cold_log_prob] = SampleZero(logits, o);
  return {at::where(t.hot, hot_token, cold_token), at::where(t.hot, hot_log_prob, cold_log_prob)};
}

// The arguments' checks; throws t5xx::Error naming the argument.
void CheckSampleArguments(const at::Tensor& inputs, const TemperatureSampleOptions& options) {
  T5XX_CHECK(inputs.dim() == 2, "temperature_sample: inputs must be [batch, length], got " +
                                    std::to_string(inputs.dim()) + " dims");
  T5XX_CHECK(options.num_decodes >= 1, "temperature_sample: num_decodes must be >= 1, got " +
                                           std::to_string(options.num_decodes));
  T5XX_CHECK(!(options.topk != 0 && options.topp != 0.0),
             "temperature_sample: at most one of topk and topp may be nonzero (got topk=" +
                 std::to_string(options.topk) + ", topp=" + std::to_string(options.topp) +
                 "); set topk=0 to use topp");
  const int64_t batch = inputs.size(0);
  const int64_t length = inputs.size(1);
  if (options.temperatures.defined()) {
    T5XX_CHECK(options.temperatures.numel() == batch,
               "temperature_sample: temperatures has " +
                   std::to_string(options.temperatures.numel()) +
                   " entries, the batch has " + std::to_string(batch) + " examples");
  }
  if (options.max_decode_steps) {
    T5XX_CHECK(*options.max_decode_steps <= length,
               "temperature_sample: cannot decode more steps (max_decode_steps=" +
                   std::to_string(*options.max_decode_steps) + ") than the sequence length " +
                   std::to_string(length));
  }
  if (options.initial_index.defined()) {
    T5XX_CHECK(options.initial_index.numel() == batch,
               "temperature_sample: initial_index has " +
                   std::to_string(options.initial_index.numel()) + " entries, the batch has " +
                   std::to_string(batch) + " examples");
  }
}

// options.temperatures (one per example) expanded to the rows; undefined
// when one temperature serves all.
RowTemperatures ExpandTemperatures(const TemperatureSampleOptions& options, int64_t batch,
                                   const at::Device& device) {
  RowTemperatures temperatures;
  if (options.temperatures.defined()) {
    temperatures.per_row = FlatBatchBeamExpand(
        options.temperatures.reshape({batch}).to(device, at::kFloat), options.num_decodes);
    temperatures.hot = temperatures.per_row > kMinTemperature;
    temperatures.any_hot = temperatures.hot.any().item<bool>();
    temperatures.all_hot = temperatures.hot.all().item<bool>();
  }
  return temperatures;
}

// Drops the BOS position and the two extra ones; sorts each example's
// decodes by log-probability, ascending (jnp.argsort is stable).
DecodeResult SortedDecodes(const at::Tensor& sequences, const at::Tensor& log_prob, int64_t batch,
                           int64_t n, int64_t length) {
  at::Tensor decodes = sequences.narrow(1, 1, length).reshape({batch, n, length});
  at::Tensor scores = log_prob.reshape({batch, n});
  at::Tensor order = std::get<1>(scores.sort(/*stable=*/true, /*dim=*/1, /*descending=*/false));
  return {decodes.gather(1, order.unsqueeze(2).expand({batch, n, length})),
          scores.gather(1, order)};
}

}  // namespace

DecodeResult TemperatureSample(const at::Tensor& inputs, Cache cache,
                               const TokensToLogits& tokens_to_logits, int64_t eos_id,
                               const TemperatureSampleOptions& options, at::Generator* rng) {
  CheckSampleArguments(inputs, options);
  const int64_t batch = inputs.size(0);
  const int64_t length = inputs.size(1);
  const int64_t n = options.num_decodes;
  const at::TensorOptions long_options = inputs.options().dtype(at::kLong);

  // [batch, length] -> [batch * n, length]: b0, b0, b1, b1, ...
  at::Tensor expanded = FlatBatchBeamExpand(inputs.to(at::kLong), n);
  ExpandCache(cache, n, batch);
  const int64_t rows = batch * n;
  const RowTemperatures temperatures = ExpandTemperatures(options, batch, inputs.device());

  // The per-row last position (t5x's max_decode_len, a vector only with
  // max_decode_steps: prompt tokens plus the steps, capped at length).
  at::Tensor max_len;
  if (options.max_decode_steps) {
    max_len = at::clamp_max((expanded != 0).sum(1) + *options.max_decode_steps, length);
  } else {
    max_len = at::full({rows}, length, long_options);
  }

  at::Tensor sequences =
      at::cat({expanded, at::zeros({rows, kExtraInputTokens}, long_options)}, 1);
  at::Tensor index;  // the loop index i: the position of `token` in sequences
  at::Tensor token;
  if (options.initial_index.defined()) {
    index = FlatBatchBeamExpand(options.initial_index.reshape({batch}).to(inputs.device(), at::kLong), n);
    token = sequences.gather(1, index.unsqueeze(1)).squeeze(1);
  } else {
    index = at::zeros({rows}, long_options);
    token = at::zeros({rows}, long_options);
  }
  at::Tensor ended = at::zeros({rows}, long_options.dtype(at::kBool));
  at::Tensor log_prob = at::zeros({rows}, long_options.dtype(at::kFloat));
  // Sequences end at an EOS beyond those already in the prompt (t5x counts).
  const at::Tensor initial_eos_count = (sequences == eos_id).sum(1);
  at::Tensor eos_count = initial_eos_count.clone();

  while (!ended.all().item<bool>()) {
    DecodingState state{index, sequences.narrow(1, 0, length), token, &cache};
    at::Tensor logits = tokens_to_logits(state).to(at::kFloat);
    auto [next_token, next_log_prob] = SampleLogits(logits, temperatures, options, rng);

    // Rows past their end keep writing the garbage slot (t5x's clamp).
    at::Tensor i = at::minimum(index, max_len);
    at::Tensor target = (i + 1).unsqueeze(1);
    // Teacher forcing: a nonzero input at the next position wins.
    at::Tensor next_input_token = sequences.gather(1, target).squeeze(1);
    at::Tensor out_of_prompt = next_input_token == 0;
    next_token = at::where(out_of_prompt, next_token, next_input_token);
    // Only sampled positions of live rows add to the log-probability.
    log_prob = log_prob + at::where(out_of_prompt & ~ended, next_log_prob, at::zeros_like(next_log_prob));
    at::Tensor written = at::where(ended, at::zeros_like(next_token), next_token);
    sequences.scatter_(1, target, written.unsqueeze(1));
    // t5x recounts EOS over the row; only the written slot changed.
    eos_count = eos_count + (written == eos_id).to(at::kLong) - (next_input_token == eos_id).to(at::kLong);
    ended = ended | (eos_count > initial_eos_count) | (i >= max_len - 1);
    index = i + 1;
    token = written;
  }

  return SortedDecodes(sequences, log_prob, batch, n, length);
}

}  // namespace t5xx::decoding
