// T5's language-modeling objectives: prefix_lm, full_lm, iid_denoising (see
// lm_preprocessors.h).
#include "t5xx/data/preprocessors/lm_preprocessors.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/seed_purposes.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

int64_t RequireLength(const FeatureLengths& sequence_length,
                      const std::string& key, const char* who) {
  auto it = sequence_length.find(key);
  T5XX_CHECK(it != sequence_length.end(),
        std::string(who) + ": sequence_length has no '" + key +
            "' entry (give the task a sequence length for '" + key + "')");
  return it->second;
}

}  // namespace

NoiseMask RandomPrefixNoiseMask(int64_t length, double noise_density,
                                uint64_t seed) {
  T5XX_CHECK(length >= 0, "random_prefix_noise_mask: length must be >= 0, got " +
                         std::to_string(length));
  T5XX_CHECK(noise_density >= 0.0 && noise_density <= 0.5,
        "random_prefix_noise_mask: noise_density must be in [0, 0.5], got " +
            std::to_string(noise_density));
  NoiseMask mask(static_cast<size_t>(length), false);
  if (length == 0) return mask;
  const int64_t max_input = length - 1;
  const int64_t lo = std::min<int64_t>(
      max_input,
      std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(
                               (1.0 - 2.0 * noise_density) *
                               static_cast<double>(max_input)))));
  StatelessRng rng(seed, 0, seed_purpose::kLmPrefix);
  const int64_t k = lo + rng.UniformInt(max_input - lo + 1);
  for (int64_t i = 0; i < k; ++i) mask[static_cast<size_t>(i)] = true;
  return mask;
}

NoiseMask IidNoiseMask(int64_t length, double noise_density, uint64_t seed) {
  T5XX_CHECK(length >= 0,
        "iid_noise_mask: length must be >= 0, got " + std::to_string(length));
  T5XX_CHECK(noise_density >= 0.0 && noise_density <= 1.0,
        "iid_noise_mask: noise_density must be in [0, 1], got " +
            std::to_string(noise_density));
  NoiseMask mask(static_cast<size_t>(length), false);
  StatelessRng rng(seed, 0, seed_purpose::kLmIid);
  for (int64_t i = 0; i < length; ++i)
    mask[static_cast<size_t>(i)] = rng.Uniform01() < noise_density;
  return mask;
}

int64_t InputsSegmentLength(const FeatureLengths& sequence_length,
                            const OutputFeatures& output_features,
                            const char* who) {
  int64_t n = RequireLength(sequence_length, "inputs", who);
  auto it = output_features.find("inputs");
  if (it != output_features.end() && it->second.add_eos) n -= 1;
  T5XX_CHECK(n >= 1, std::string(who) +
                    ": sequence_length['inputs'] leaves no room for tokens "
                    "(need >= 1 token besides EOS), got " +
                    std::to_string(RequireLength(sequence_length, "inputs", who)));
  return n;
}

DatasetPtr PrefixLm(DatasetPtr input, const FeatureLengths& sequence_length,
                    const OutputFeatures& output_features, uint64_t seed,
                    double noise_density) {
  const int64_t segment = InputsSegmentLength(sequence_length, output_features, "prefix_lm");
  T5XX_CHECK(noise_density >= 0.0 && noise_density <= 0.5,
        "prefix_lm: noise_density must be in [0, 0.5], got " +
            std::to_string(noise_density));
  DatasetPtr ds = SelectRandomChunk(std::move(input), HashSeed(seed, seed_purpose::kLmStepChunk),
                                    65536, "targets");
  ds = SplitTokens(std::move(ds), segment, "targets");
  const uint64_t mask_seed = HashSeed(seed, seed_purpose::kLmStepMask);
  return MapIndexed(std::move(ds), [=](Example ex, uint64_t index) {
    const Tokens tokens = GetTokens(ex, "targets");
    const NoiseMask mask = RandomPrefixNoiseMask(
        static_cast<int64_t>(tokens.size()), noise_density,
        HashSeed(mask_seed, index, seed_purpose::kLmPrefix));
    ex["inputs"] = DropNonnoiseTokens(tokens, mask);
    ex["targets"] = DropNoiseTokens(tokens, mask);
    return ex;
  });
}

Preprocessor PrefixLmPreprocessor(double noise_density) {
  return [noise_density](DatasetPtr ds, const PreprocessContext& ctx) {
    return PrefixLm(std::move(ds), ctx.sequence_length, ctx.output_features,
                    ctx.seed, noise_density);
  };
}

DatasetPtr FullLm(DatasetPtr input, const FeatureLengths& sequence_length,
                  const OutputFeatures& output_features, uint64_t seed) {
  const int64_t length = RequireLength(sequence_length, "targets", "full_lm");
  T5XX_CHECK(length >= 1, "full_lm: sequence_length['targets'] must be >= 1, got " +
                         std::to_string(length));
  DatasetPtr ds = SelectRandomChunk(std::move(input), HashSeed(seed, seed_purpose::kLmStepChunk),
                                    65536, "targets");
  ds = AppendEos(std::move(ds), output_features);
  ds = ReduceConcatTokens(std::move(ds), 128, "targets");
  return SplitTokens(std::move(ds), length, "targets");
}

Preprocessor FullLmPreprocessor() {
  return [](DatasetPtr ds, const PreprocessContext& ctx) {
    return FullLm(std::move(ds), ctx.sequence_length, ctx.output_features, ctx.seed);
  };
}

DatasetPtr IidDenoising(DatasetPtr input, const FeatureLengths& sequence_length,
                        const OutputFeatures& output_features, uint64_t seed,
                        double noise_density) {
  const int64_t segment =
      InputsSegmentLength(sequence_length, output_features, "iid_denoising");
  auto it = output_features.find("targets");
  T5XX_CHECK(it != output_features.end() && it->second.vocabulary != nullptr,
        "iid_denoising: output feature 'targets' with a vocabulary is required "
        "(its vocab_size() places the sentinels)");
  T5XX_CHECK(noise_density >= 0.0 && noise_density <= 1.0,
        "iid_denoising: noise_density must be in [0, 1], got " +
            std::to_string(noise_density));
  const int32_t vocab_size = it->second.vocabulary->vocab_size();
  DatasetPtr ds = SelectRandomChunk(std::move(input), HashSeed(seed, seed_purpose::kLmStepChunk),
                                    65536, "targets");
  ds = ReduceConcatTokens(std::move(ds), 128, "targets");
  ds = SplitTokens(std::move(ds), segment, "targets");
  const uint64_t mask_seed = HashSeed(seed, seed_purpose::kLmStepMask);
  return MapIndexed(std::move(ds), [=](Example ex, uint64_t index) {
    const Tokens tokens = GetTokens(ex, "targets");
    const NoiseMask mask =
        IidNoiseMask(static_cast<int64_t>(tokens.size()), noise_density,
                     HashSeed(mask_seed, index, seed_purpose::kLmIid));
    ex["inputs"] = NoiseSpanToUniqueSentinel(tokens, mask, vocab_size);
    ex["targets"] = NonnoiseSpanToUniqueSentinel(tokens, mask, vocab_size);
    return ex;
  });
}

Preprocessor IidDenoisingPreprocessor(double noise_density) {
  return [noise_density](DatasetPtr ds, const PreprocessContext& ctx) {
    return IidDenoising(std::move(ds), ctx.sequence_length, ctx.output_features,
                        ctx.seed, noise_density);
  };
}

}  // namespace t5xx::seqio
