// T5's language-modeling objectives (t5/data/preprocessors.py): prefix_lm,
// full_lm and iid_denoising, plus the noise masks they use
// (random_prefix_noise_mask, iid_noise_mask).
//
// All inputs are tokenized "targets" features (rank-1 int32 Tokens). As in
// span_corruption.h, randomness is counter-based: every per-example draw is
// keyed by HashSeed(step seed, example index in the stream, purpose), so the
// output depends only on the seed and the stream order, never on batching or
// threads -- but it is not bit-equal to t5's TF Philox draws.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/preprocessors/preprocessors.h"
#include "t5xx/data/preprocessors/span_corruption.h"

namespace t5xx::seqio {

// random_prefix_noise_mask (t5): a [length] mask whose first k positions are
// true ("noise" = the prefix that becomes the inputs), with k uniform in
// [lo, length - 1], lo = min(length - 1, max(1, round_half_even((1 - 2d) *
// (length - 1)))). For d = 0.5 (t5's only value) k is uniform in
// [1, length - 1]; length 1 gives k = 0; length 0 gives an empty mask.
// Throws t5xx::Error if length < 0 or noise_density is outside [0, 0.5].
NoiseMask RandomPrefixNoiseMask(int64_t length, double noise_density,
                                uint64_t seed);

// iid_noise_mask (t5): a [length] mask, each position independently true
// with probability noise_density. Throws t5xx::Error if length < 0 or
// noise_density is outside [0, 1].
NoiseMask IidNoiseMask(int64_t length, double noise_density, uint64_t seed);

// split_tokens_to_inputs_length (t5): the segment length t5 uses when the
// raw tokens become "inputs": sequence_length["inputs"], minus 1 when
// output_features["inputs"] has add_eos (room for EOS). Throws t5xx::Error
// naming the key when sequence_length has no "inputs" or the result is < 1.
int64_t InputsSegmentLength(const FeatureLengths& sequence_length,
                            const OutputFeatures& output_features,
                            const char* who);

// prefix_lm (t5/data/preprocessors.py):
//   SelectRandomChunk(65536) -> SplitTokens(InputsSegmentLength)
//   -> per example, mask = RandomPrefixNoiseMask(n, noise_density);
//      inputs = the masked prefix (drop_nonnoise_tokens) [k],
//      targets = the rest (drop_noise_tokens) [n - k].
// As in t5 there is no reduce_concat_tokens step, and EOS is not appended
// (follow with AppendEosAfterTrim). Other features are dropped by
// SelectRandomChunk. Throws t5xx::Error if sequence_length lacks "inputs".
DatasetPtr PrefixLm(DatasetPtr input, const FeatureLengths& sequence_length,
                    const OutputFeatures& output_features, uint64_t seed,
                    double noise_density = 0.5);
Preprocessor PrefixLmPreprocessor(double noise_density = 0.5);

// full_lm (t5/data/preprocessors.py), targets only:
//   SelectRandomChunk(65536) -> AppendEos (targets, if add_eos)
//   -> ReduceConcatTokens(128) -> SplitTokens(sequence_length["targets"]).
// EOS thus marks document boundaries only. Output: {"targets": [<= L]}.
// Throws t5xx::Error if sequence_length lacks "targets".
DatasetPtr FullLm(DatasetPtr input, const FeatureLengths& sequence_length,
                  const OutputFeatures& output_features, uint64_t seed);
Preprocessor FullLmPreprocessor();

// iid_denoising (t5/data/preprocessors.py):
//   SelectRandomChunk(65536) -> ReduceConcatTokens(128)
//   -> SplitTokens(InputsSegmentLength)
//   -> per example, mask = IidNoiseMask(n, noise_density);
//      inputs  = NoiseSpanToUniqueSentinel(targets, mask, V),
//      targets = NonnoiseSpanToUniqueSentinel(targets, mask, V),
// V = output_features["targets"].vocabulary->vocab_size(). t5 fixes
// noise_density at 0.15. An all-clean mask gives inputs = the tokens and
// targets = [V-1] (as t5). An iid mask may start noisy; then, as in t5,
// the k-th sentinel in inputs marks the k-th noise run while targets begin
// with that run unmarked, so sentinel numbers do not pair up. Throws t5xx::Error if sequence_length lacks "inputs"
// or "targets" has no vocabulary.
DatasetPtr IidDenoising(DatasetPtr input, const FeatureLengths& sequence_length,
                        const OutputFeatures& output_features, uint64_t seed,
                        double noise_density = 0.15);
Preprocessor IidDenoisingPreprocessor(double noise_density = 0.15);

}  // namespace t5xx::seqio
