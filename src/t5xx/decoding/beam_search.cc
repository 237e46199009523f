// BeamSearch -- t5x decoding.beam_search, step for step, over libtorch
// tensors. Beams live flattened as rows b * beams + j of the cache and the
// sequences; [batch, beams, ...] views of them are reshapes.
#include <cmath>
#include <string>

#include "t5xx/decoding/decoding.h"
#include "t5xx/decoding/cache_ops.h"
#include "t5xx/decoding/selection.h"
#include "t5xx/util/error.h"

namespace t5xx::decoding {
namespace {

// t5x's brevity_penalty ((5 + length) / 6)^alpha, in float32 as jnp computes
// it. length: any shape, integer.
at::Tensor BrevityPenalty(double alpha, const at::Tensor& length) {
  return ((length.to(at::kFloat) + 5.0) / 6.0).pow(alpha);
}

// Shifts each row of x [R, N] right by shifts[r] (zeros enter on the left).
at::Tensor ShiftRight(const at::Tensor& x, const at::Tensor& shifts) {
  const int64_t n = x.size(1);
  at::Tensor source = at::arange(n, x.options().dtype(at::kLong)).unsqueeze(0) - shifts.unsqueeze(1);
  at::Tensor valid = source >= 0;
  return at::where(valid, x.gather(1, source.clamp_min(0)), at::zeros_like(x));
}

// Shifts each row of x [R, N] left by shifts[r] (zeros enter on the right).
at::Tensor ShiftLeft(const at::Tensor& x, const at::Tensor& shifts) {
  const int64_t n = x.size(1);
  at::Tensor source = at::arange(n, x.options().dtype(at::kLong)).unsqueeze(0) + shifts.unsqueeze(1);
  at::Tensor valid = source < n;
  return at::where(valid, x.gather(1, source.clamp_max(n - 1)), at::zeros_like(x));
}

// t5x's _right_align_prompts: each row's last nonzero token moves to the
// last column.
at::Tensor RightAlignPrompts(const at::Tensor& prompts) {
  const int64_t n = prompts.size(1);
  at::Tensor positions = at::arange(n, prompts.options().dtype(at::kLong)).unsqueeze(0);
  at::Tensor last_nonzero = ((prompts != 0) * positions).argmax(1);
  return ShiftRight(prompts, n - last_nonzero - 1);
}

// t5x's _left_align_prompts: each row's first nonzero token moves to column
// 0 (rows of zeros stay).
at::Tensor LeftAlignPrompts(const at::Tensor& prompts) {
  const int64_t n = prompts.size(1);
  at::Tensor positions = at::arange(n, prompts.options().dtype(at::kLong)).unsqueeze(0);
  at::Tensor first_nonzero = at::where(prompts != 0, positions, at::full({}, n, positions.options()))
                                 .argmin(1);
  return ShiftLeft(prompts, first_nonzero);
}

// x [B, old, ...] -> [B, new, ...]: x[b, indices[b, j]] (t5x's gather_beams).
at::Tensor GatherBeams(const at::Tensor& x, const at::Tensor& indices) {
  if (x.dim() == 2) return x.gather(1, indices);
  return x.gather(1, indices.unsqueeze(2).expand({indices.size(0), indices.size(1), x.size(2)}));
}

// The search's state between steps (t5x's BeamState), [batch, beams, ...].
struct BeamState {
  at::Tensor live_seqs, live_logprobs;
  at::Tensor finished_seqs, finished_scores, finished_flags;
};

// What every step reads.
struct BeamSearchContext {
  int64_t batch, length, beams, max_len;
  double alpha;
  int64_t eos_id;
  at::Tensor forced;                   // teacher-forced tokens (t5x's `inputs`)
  at::Tensor initial_index;            // [batch]
  at::Tensor inside_prompt_log_probs;  // [1, 2 * beams]
  at::Tensor beam_offsets;             // [batch, 1]
  at::Tensor min_brevity_penalty;      // scalar
  at::TensorOptions long_options, float_options;
};

// t5x's beam_search_loop_cond_fn: false once no live beam can beat the
// finished ones (or, after the first step, all are below min_log_prob).
bool KeepSearching(const BeamState& st, const BeamSearchContext& c, int64_t cur,
                   const BeamSearchOptions& options, int64_t min_initial_index) {
  if (cur + min_initial_index >= c.max_len - 1) return false;
  if (options.max_decode_step > 0 && cur >= options.max_decode_step) return false;
  at::Tensor best_live_scores = st.live_logprobs.narrow(1, c.beams - 1, 1) / c.min_brevity_penalty;
  at::Tensor worst_finished_scores = std::get<0>(st.finished_scores.min(1, /*keepdim=*/true));
  worst_finished_scores =
      at::where(st.finished_flags, worst_finished_scores, at::full({}, kNegInf, c.float_options));
  at::Tensor stop = (worst_finished_scores > best_live_scores).all();
  if (cur > 0) {
    at::Tensor raw_min_log_prob =
        at::scalar_tensor(options.min_log_prob, c.float_options) / c.min_brevity_penalty;
    stop = stop | (best_live_scores < raw_min_log_prob).all();
  }
  return !stop.item<bool>();
}

// t5x's beam_search_loop_body_fn: one step of every beam.
void BeamStep(BeamState& st, const BeamSearchContext& c, int64_t cur, Cache& cache,
              const TokensToLogits& tokens_to_logits) {
  const int64_t batch = c.batch, beams = c.beams;
  DecodingState state{at::full({batch * beams}, cur, c.long_options),
                      st.live_seqs.view({batch * beams, c.max_len}),
                      st.live_seqs.select(2, cur).reshape({batch * beams}), &cache};
  at::Tensor logits = tokens_to_logits(state).to(at::kFloat);
  const int64_t vocab = logits.size(-1);
  at::Tensor log_probs =
      at::log_softmax(logits, -1).view({batch, beams, vocab}) + st.live_logprobs.unsqueeze(2);
  // The top 2 * beams candidates, so that beams remain alive even when the
  // best `beams` all end with EOS here.
  auto [topk_log_probs, topk_indices] = StableTopK(log_probs.view({batch, beams * vocab}), 2 * beams);
  at::Tensor topk_ids = topk_indices.remainder(vocab);
  at::Tensor topk_beam_indices = topk_indices.div(vocab, "floor");
  // Teacher forcing: jnp indexing clamps cur + 1 into inputs.
  at::Tensor next_input_token = c.forced.select(1, std::min(cur + 1, c.length - 1)).unsqueeze(1);
  at::Tensor out_of_prompt = next_input_token == 0;
  topk_log_probs = at::where(out_of_prompt, topk_log_probs, c.inside_prompt_log_probs);
  topk_ids = at::where(out_of_prompt, topk_ids, next_input_token);
  at::Tensor topk_seq = GatherBeams(st.live_seqs, topk_beam_indices);
  topk_seq.select(2, cur + 1).copy_(topk_ids);

  // Live beams: the best `beams` candidates that did not just end.
  at::Tensor newly_finished = topk_ids == c.eos_id;
  at::Tensor new_log_probs = topk_log_probs + newly_finished.to(at::kFloat) * kNegInf;
  at::Tensor new_topk_indices = StableTopK(new_log_probs, beams).second.flip(1);
  st.live_seqs = GatherBeams(topk_seq, new_topk_indices);
  st.live_logprobs = new_log_probs.gather(1, new_topk_indices);
  at::Tensor top_alive_indices = topk_beam_indices.gather(1, new_topk_indices);
  GatherCache(cache, (c.beam_offsets + top_alive_indices).reshape({batch * beams}));

  // Finished beams: the best `beams` of the old ones and the candidates
  // that just ended, scored with the brevity penalty (prompt included).
  at::Tensor lengths = c.initial_index.unsqueeze(1) + (cur + 1);
  at::Tensor new_scores = topk_log_probs / BrevityPenalty(c.alpha, lengths) +
                          (~newly_finished).to(at::kFloat) * kNegInf;
  at::Tensor all_seqs = at::cat({st.finished_seqs, topk_seq}, 1);
  at::Tensor all_scores = at::cat({st.finished_scores, new_scores}, 1);
  at::Tensor all_flags = at::cat({st.finished_flags, newly_finished}, 1);
  at::Tensor keep = StableTopK(all_scores, beams).second.flip(1);
  st.finished_seqs = GatherBeams(all_seqs, keep);
  st.finished_scores = all_scores.gather(1, keep);
  st.finished_flags = all_flags.gather(1, keep);
}

// The finished beams (the live ones of an example with none), without the
// dummy first position; with prompts, prompt + continuation left-aligned.
DecodeResult FinalBeams(const BeamState& st, const BeamSearchContext& c,
                        const at::Tensor& right_aligned) {
  const int64_t batch = c.batch, beams = c.beams;
  at::Tensor any_finished = st.finished_flags.any(1);
  at::Tensor seqs = at::where(any_finished.view({batch, 1, 1}), st.finished_seqs, st.live_seqs);
  at::Tensor scores =
      at::where(any_finished.view({batch, 1}), st.finished_scores, st.live_logprobs);
  seqs = seqs.narrow(2, 1, c.max_len - 1);
  if (right_aligned.defined()) {
    // Prompt + continuation, left-aligned, cut to the decode length.
    at::Tensor joined =
        at::cat({right_aligned.unsqueeze(1).expand({batch, beams, c.length}), seqs}, 2);
    joined = LeftAlignPrompts(joined.reshape({batch * beams, joined.size(2)}));
    seqs = joined.reshape({batch, beams, -1}).narrow(2, 0, c.max_len - 1);
  }
  return {seqs.contiguous(), scores};
}

}  // namespace

DecodeResult BeamSearch(const at::Tensor& inputs, Cache cache,
                        const TokensToLogits& tokens_to_logits, int64_t eos_id,
                        const BeamSearchOptions& options) {
  T5XX_CHECK(inputs.dim() == 2, "beam_search: inputs must be [batch, length], got " +
                                    std::to_string(inputs.dim()) + " dims");
  T5XX_CHECK(options.num_decodes >= 1, "beam_search: num_decodes (beams) must be >= 1, got " +
                                           std::to_string(options.num_decodes));
  T5XX_CHECK(options.max_decode_len >= 0, "beam_search: max_decode_len must be >= 0, got " +
                                              std::to_string(options.max_decode_len));
  BeamSearchContext c;
  c.batch = inputs.size(0);
  c.length = inputs.size(1);
  c.beams = options.num_decodes;
  c.alpha = options.alpha;
  c.eos_id = eos_id;
  const int64_t batch = c.batch, beams = c.beams, length = c.length;
  // One dummy first position (BOS, or the prompt's last token).
  c.max_len = (options.max_decode_len > 0 ? options.max_decode_len : length) + 1;
  c.long_options = inputs.options().dtype(at::kLong);
  c.float_options = inputs.options().dtype(at::kFloat);

  c.forced = inputs.to(at::kLong);  // t5x's `inputs` inside the loop
  at::Tensor right_aligned;
  BeamState st;
  st.live_seqs = at::zeros({batch, beams, c.max_len}, c.long_options);
  if (options.initial_index.defined()) {
    T5XX_CHECK(options.initial_index.numel() == batch,
               "beam_search: initial_index has " + std::to_string(options.initial_index.numel()) +
                   " entries, the batch has " + std::to_string(batch) + " examples");
    c.initial_index = options.initial_index.reshape({batch}).to(inputs.device(), at::kLong);
    // The prompts end at the last column; decoding starts from their last
    // token and teacher-forces nothing.
    right_aligned = RightAlignPrompts(c.forced);
    at::Tensor last = right_aligned.select(1, length - 1);
    c.forced = at::zeros_like(c.forced);
    c.forced.select(1, 0).copy_(last);
    st.live_seqs.select(2, 0).copy_(last.unsqueeze(1).expand({batch, beams}));
  } else {
    c.initial_index = at::zeros({batch}, c.long_options);
  }
  const int64_t min_initial_index = c.initial_index.min().item<int64_t>();

  ExpandCache(cache, beams, batch);
  // Only beam 0 is alive at first: the others would repeat it.
  at::Tensor dead_beams = at::full({1, beams}, kNegInf, c.float_options);
  dead_beams.select(1, 0).fill_(0.0);
  st.live_logprobs = dead_beams.expand({batch, beams}).clone();
  st.finished_scores = at::full({batch, beams}, kNegInf, c.float_options);
  st.finished_seqs = at::zeros({batch, beams, c.max_len}, c.long_options);
  st.finished_flags = at::zeros({batch, beams}, c.long_options.dtype(at::kBool));
  // Inside a forced prompt only the best candidate survives (t5x: two beams
  // with one prefix would decode alike).
  c.inside_prompt_log_probs = at::full({1, 2 * beams}, kNegInf, c.float_options);
  c.inside_prompt_log_probs.select(1, 0).fill_(0.0);
  c.beam_offsets = (at::arange(batch, c.long_options) * beams).unsqueeze(1);
  c.min_brevity_penalty = BrevityPenalty(c.alpha, at::scalar_tensor(c.max_len, c.long_options));

  for (int64_t cur = 0; KeepSearching(st, c, cur, options, min_initial_index); ++cur) {
    BeamStep(st, c, cur, cache, tokens_to_logits);
  }
  return FinalBeams(st, c, right_aligned);
}

}  // namespace t5xx::decoding
