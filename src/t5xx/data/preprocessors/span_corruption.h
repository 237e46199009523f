// T5's span-corruption objective (t5/data/preprocessors.py): noise masks,
// sentinel replacement, chunk/concat/split, and the span_corruption chain.
//
// Token sequences are rank-1 int32 (Tokens). A noise mask is a
// std::vector<bool> of the same length (true = noise). Sentinel ids count
// down from the top of the vocabulary: the k-th span (k from 1) gets
// vocab_size - k, where vocab_size is Vocabulary::vocab_size() (extra ids
// included). Randomness is counter-based (see utils.h): each example's draws
// depend only on (seed, its index in the stream, purpose), not on TF's Philox,
// so masks are not bit-equal to t5's -- only their counts and structure.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/preprocessors/preprocessors.h"

namespace t5xx::seqio {

using NoiseMask = std::vector<bool>;

// random_spans_helper (t5/data/preprocessors.py). Returns
// (tokens_length, targets_length): the largest raw token count t whose
// span-corrupted inputs, (t - noise) + spans * extra_tokens_per_span_inputs
// + 1 (EOS), fit in inputs_length, and the matching targets length
// noise + spans * extra_tokens_per_span_targets + 1, with
// noise = round_half_even(t * noise_density) and
// spans = round_half_even(noise / mean_noise_span_length) computed in double
// (as t5 does in Python). When noise_density == 0.5 and targets would exceed
// inputs, both values are reduced by 1 (t5's adjustment).
// Throws t5xx::Error if inputs_length < 1, noise_density is outside [0, 1)
// or mean_noise_span_length <= 0.
std::pair<int64_t, int64_t> RandomSpansHelper(
    int64_t inputs_length, double noise_density, double mean_noise_span_length,
    int64_t extra_tokens_per_span_inputs = 1,
    int64_t extra_tokens_per_span_targets = 1);

// The counts random_spans_noise_mask uses for a sequence of `length` tokens,
// computed as t5 does in float32: L = max(length, 2);
// num_noise_tokens = clamp(round_half_even(L * d), 1, L - 1);
// num_noise_spans = max(round_half_even(num_noise_tokens / mean), 1).
// Deviation (degenerate settings only, e.g. d > 0.5 with mean ~1): spans are
// additionally capped at min(num_noise_tokens, L - num_noise_tokens) so that
// every span is non-empty; t5 would produce empty spans there.
// With noise_density == 0 all counts are 0 (an all-clean mask).
struct NoiseSpanCounts {
  int64_t padded_length = 0;     // L = max(length, 2)
  int64_t num_noise_tokens = 0;  // within L
  int64_t num_noise_spans = 0;
};
NoiseSpanCounts RandomSpansNoiseCounts(int64_t length, double noise_density,
                                       double mean_noise_span_length = 3.0);

// random_spans_noise_mask (t5/data/preprocessors.py): a [length] bool mask.
// The noise and the non-noise tokens of L = max(length, 2) positions are each
// split into num_noise_spans non-empty runs by a uniformly random partition
// (seeded from `seed`), interleaved clean, noise, clean, noise, ..., and cut
// back to `length`. So for length >= 2 the mask starts clean and ends noisy.
// Throws t5xx::Error on length < 0, noise_density outside [0, 1) or
// mean_noise_span_length <= 0.
NoiseMask RandomSpansNoiseMask(int64_t length, double noise_density,
                               uint64_t seed,
                               double mean_noise_span_length = 3.0);

// Sentinel replacements (t5/data/preprocessors.py). `tokens` and `mask` must
// have equal length (t5xx::Error otherwise). sentinel = vocab_size - 1.
//   NoiseTokenToSentinel:        every noise token -> sentinel (same length).
//   NoiseSpanToSentinel:         each noise run -> one sentinel.
//   NonnoiseSpanToSentinel:      each clean run -> one sentinel.
//   NoiseSpanToUniqueSentinel:   k-th noise run -> vocab_size - k.
//   NonnoiseSpanToUniqueSentinel: k-th clean run -> vocab_size - k.
//   DropNoiseTokens / DropNonnoiseTokens: remove those tokens.
Tokens NoiseTokenToSentinel(const Tokens& tokens, const NoiseMask& mask,
                            int32_t vocab_size);
Tokens NoiseSpanToSentinel(const Tokens& tokens, const NoiseMask& mask,
                           int32_t vocab_size);
Tokens NonnoiseSpanToSentinel(const Tokens& tokens, const NoiseMask& mask,
                              int32_t vocab_size);
Tokens NoiseSpanToUniqueSentinel(const Tokens& tokens, const NoiseMask& mask,
                                 int32_t vocab_size);
Tokens NonnoiseSpanToUniqueSentinel(const Tokens& tokens, const NoiseMask& mask,
                                    int32_t vocab_size);
Tokens DropNoiseTokens(const Tokens& tokens, const NoiseMask& mask,
                       int32_t vocab_size = 0);
Tokens DropNonnoiseTokens(const Tokens& tokens, const NoiseMask& mask,
                          int32_t vocab_size = 0);

using NoiseFn =
    std::function<Tokens(const Tokens&, const NoiseMask&, int32_t vocab_size)>;

// select_random_chunk (t5): drops examples whose `feature_key` tokens are
// empty, then keeps a random window [s, min(s + max_length, n)) with s a
// uniformly drawn multiple of max_length. Output examples hold only
// `feature_key`. Throws t5xx::Error if max_length < 1.
DatasetPtr SelectRandomChunk(DatasetPtr input, uint64_t seed,
                             int64_t max_length = 65536,
                             const std::string& feature_key = "targets");

// reduce_concat_tokens (t5): concatenates `feature_key` of each run of
// `batch_size` consecutive examples (the last run may be shorter), dropping
// 0 (padding) tokens. Output examples hold only `feature_key`.
DatasetPtr ReduceConcatTokens(DatasetPtr input, int64_t batch_size = 128,
                              const std::string& feature_key = "targets");

// split_tokens (t5, fixed length): splits `feature_key` into consecutive
// pieces of max_tokens_per_segment tokens (the last may be shorter; an empty
// sequence gives no piece). Output examples hold only `feature_key`.
DatasetPtr SplitTokens(DatasetPtr input, int64_t max_tokens_per_segment,
                       const std::string& feature_key = "targets");

// denoise (t5) with a random-spans mask: for each example, mask =
// RandomSpansNoiseMask(|targets|, ...), seeded by (seed, example index);
// inputs = inputs_fn(targets, mask, V), targets = targets_fn(targets, mask, V)
// with V = output_features[targets_key].vocabulary->vocab_size(). Other
// features are kept. The per-example work runs through ParallelMapIndexed on
// num_threads threads, 0 = DataThreads() (data_threads.h); indices are
// assigned in input order before the parallel work, so the output and the
// saved state's layout are the same for every thread count. Throws
// t5xx::Error if targets_key has no vocabulary or num_threads < 0.
DatasetPtr Denoise(DatasetPtr input, const OutputFeatures& output_features,
                   uint64_t seed, double noise_density = 0.15,
                   double mean_noise_span_length = 3.0,
                   NoiseFn inputs_fn = NoiseSpanToUniqueSentinel,
                   NoiseFn targets_fn = NonnoiseSpanToUniqueSentinel,
                   const std::string& inputs_key = "inputs",
                   const std::string& targets_key = "targets",
                   int num_threads = 0);

// span_corruption (t5/data/preprocessors.py), for tokenized "targets":
//   (t, targets_len) = RandomSpansHelper(sequence_length["inputs"], d, mean)
//   -> SelectRandomChunk(max_length 65536) -> ReduceConcatTokens(128)
//   -> SplitTokens(t) -> Denoise(unique sentinels).
// Outputs "inputs" and "targets" ([<= inputs_len - 1] and
// [<= targets_len - 1] int32, EOS not yet appended: follow with
// AppendEosAfterTrim as t5's tasks do).
// Throws t5xx::Error if sequence_length lacks "inputs" or "targets", or if
// sequence_length["targets"] < targets_len. num_threads is passed to Denoise
// (the per-example mask/sentinel step; 0 = DataThreads(); output identical
// for any value).
DatasetPtr SpanCorruption(DatasetPtr input, const FeatureLengths& sequence_length,
                          const OutputFeatures& output_features, uint64_t seed,
                          double mean_noise_span_length = 3.0,
                          double noise_density = 0.15, int num_threads = 0);
// Preprocessor form (sequence_length, output_features, seed from the context;
// num_threads 0 is resolved when the preprocessor is applied).
Preprocessor SpanCorruptionPreprocessor(double mean_noise_span_length = 3.0,
                                        double noise_density = 0.15,
                                        int num_threads = 0);

}  // namespace t5xx::seqio
