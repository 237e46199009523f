// T5's span-corruption objective: noise masks, sentinels, span_corruption (see
// span_corruption.h).
#include "t5xx/data/preprocessors/span_corruption.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <sstream>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/data_threads.h"
#include "t5xx/data/pipeline/seed_purposes.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

// Round half to even, as Python's round() and tf.round.
int64_t RoundHalfEven(double x) {
  double r = std::nearbyint(x);  // default FE_TONEAREST = half-to-even
  return static_cast<int64_t>(r);
}

void CheckDensityAndMean(double noise_density, double mean, const char* who) {
  T5XX_CHECK(noise_density >= 0.0 && noise_density < 1.0,
        std::string(who) + ": noise_density must be in [0, 1), got " +
            std::to_string(noise_density));
  T5XX_CHECK(mean > 0.0, std::string(who) + ": mean_noise_span_length must be > 0, "
                                       "got " + std::to_string(mean));
}

// Splits n items into k non-empty consecutive runs, uniformly over all
// compositions: choose k-1 distinct cut points among the n-1 gaps.
std::vector<int64_t> RandomSegmentLengths(int64_t n, int64_t k,
                                          StatelessRng rng) {
  if (k <= 1) return {n};
  std::vector<int64_t> gaps(static_cast<size_t>(n - 1));
  for (int64_t i = 0; i < n - 1; ++i) gaps[i] = i + 1;
  for (int64_t i = 0; i < k - 1; ++i) {
    const int64_t j = i + rng.UniformInt(n - 1 - i);
    std::swap(gaps[i], gaps[j]);
  }
  std::vector<int64_t> cuts(gaps.begin(), gaps.begin() + (k - 1));
  std::sort(cuts.begin(), cuts.end());
  std::vector<int64_t> lengths;
  int64_t prev = 0;
  for (int64_t c : cuts) {
    lengths.push_back(c - prev);
    prev = c;
  }
  lengths.push_back(n - prev);
  return lengths;
}

void CheckSameLength(const Tokens& tokens, const NoiseMask& mask,
                     const char* who) {
  T5XX_CHECK(tokens.size() == mask.size(),
        std::string(who) + ": tokens have length " +
            std::to_string(tokens.size()) + " but the noise mask has length " +
            std::to_string(mask.size()));
}

// Replaces the first token of each run of positions whose mask bit equals
// `selected` by a sentinel (unique: vocab_size - k for the k-th run; else
// vocab_size - 1) and drops the rest of the run.
Tokens RunsToSentinels(const Tokens& tokens, const NoiseMask& mask, bool selected,
                       int32_t vocab_size, bool unique) {
  Tokens out(tokens.size());
  int32_t* o = out.data();
  int32_t run = 0;
  bool prev = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const bool sel = mask[i] == selected;
    if (!sel) {
      *o++ = tokens[i];
    } else if (!prev) {
      ++run;
      *o++ = unique ? vocab_size - run : vocab_size - 1;
    }
    prev = sel;
  }
  out.resize(static_cast<size_t>(o - out.data()));
  return out;
}

// The four *span_to_*sentinel functions: checks the lengths (errors name
// `who`), then replaces each noise run (noise) or each non-noise run (!noise)
// by one sentinel.
Tokens SpansToSentinels(const Tokens& tokens, const NoiseMask& mask,
                        int32_t vocab_size, const char* who, bool noise,
                        bool unique) {
  CheckSameLength(tokens, mask, who);
  return RunsToSentinels(tokens, mask, /*selected=*/noise, vocab_size, unique);
}

// drop_noise_tokens / drop_nonnoise_tokens: checks the lengths (errors name
// `who`), then keeps the tokens whose mask bit equals `keep`.
Tokens KeepTokens(const Tokens& tokens, const NoiseMask& mask, const char* who,
                  bool keep) {
  CheckSameLength(tokens, mask, who);
  Tokens out;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (mask[i] == keep) out.push_back(tokens[i]);
  return out;
}

}  // namespace

std::pair<int64_t, int64_t> RandomSpansHelper(
    int64_t inputs_length, double noise_density, double mean_noise_span_length,
    int64_t extra_tokens_per_span_inputs,
    int64_t extra_tokens_per_span_targets) {
  T5XX_CHECK(inputs_length >= 1, "random_spans_helper: inputs_length must be >= 1, "
                            "got " + std::to_string(inputs_length));
  CheckDensityAndMean(noise_density, mean_noise_span_length,
                      "random_spans_helper");
  // Lengths after corruption of t raw tokens (both include one EOS).
  auto corrupted = [&](int64_t t) {
    const int64_t noise = RoundHalfEven(static_cast<double>(t) * noise_density);
    const int64_t spans =
        RoundHalfEven(static_cast<double>(noise) / mean_noise_span_length);
    return std::make_pair(
        (t - noise) + spans * extra_tokens_per_span_inputs + 1,
        noise + spans * extra_tokens_per_span_targets + 1);
  };
  int64_t t = inputs_length - 1;
  while (corrupted(t + 1).first <= inputs_length) ++t;
  int64_t targets_length = corrupted(t).second;
  const int64_t in_len = corrupted(t).first;
  if (noise_density == 0.5 && targets_length > in_len) {
    --t;
    --targets_length;
  }
  return {t, targets_length};
}

NoiseSpanCounts RandomSpansNoiseCounts(int64_t length, double noise_density,
                                       double mean_noise_span_length) {
  T5XX_CHECK(length >= 0, "random_spans_noise_mask: length must be >= 0, got " +
                         std::to_string(length));
  CheckDensityAndMean(noise_density, mean_noise_span_length,
                      "random_spans_noise_mask");
  NoiseSpanCounts c;
  c.padded_length = std::max<int64_t>(length, 2);
  if (noise_density == 0.0) return c;
  // t5 computes these in float32.
  const float lf = static_cast<float>(c.padded_length);
  const float df = static_cast<float>(noise_density);
  int64_t noise = RoundHalfEven(static_cast<double>(lf * df));
  noise = std::min(std::max<int64_t>(noise, 1), c.padded_length - 1);
  const float mf = static_cast<float>(mean_noise_span_length);
  int64_t spans =
      RoundHalfEven(static_cast<double>(static_cast<float>(noise) / mf));
  spans = std::max<int64_t>(spans, 1);
  spans = std::min({spans, noise, c.padded_length - noise});
  c.num_noise_tokens = noise;
  c.num_noise_spans = spans;
  return c;
}

namespace {

// The runs of RandomSpansNoiseMask before it is cut to `length`: clean[s]
// clean tokens, then noise[s] noise tokens, for each span s (every run
// non-empty). Empty when the mask is all clean (no noise tokens).
struct NoiseRuns {
  int64_t padded_length = 0;
  std::vector<int64_t> clean, noise;
};

NoiseRuns RandomSpansNoiseRuns(int64_t length, double noise_density, uint64_t seed,
                               double mean_noise_span_length) {
  const NoiseSpanCounts c =
      RandomSpansNoiseCounts(length, noise_density, mean_noise_span_length);
  NoiseRuns r;
  r.padded_length = c.padded_length;
  if (c.num_noise_tokens == 0) return r;
  r.noise = RandomSegmentLengths(c.num_noise_tokens, c.num_noise_spans,
                                 StatelessRng(seed, 0, seed_purpose::kSpanNoiseSegments));
  r.clean = RandomSegmentLengths(c.padded_length - c.num_noise_tokens, c.num_noise_spans,
                                 StatelessRng(seed, 0, seed_purpose::kSpanCleanSegments));
  return r;
}

}  // namespace

NoiseMask RandomSpansNoiseMask(int64_t length, double noise_density,
                               uint64_t seed, double mean_noise_span_length) {
  const NoiseRuns r = RandomSpansNoiseRuns(length, noise_density, seed, mean_noise_span_length);
  if (r.noise.empty()) return NoiseMask(static_cast<size_t>(length), false);
  NoiseMask mask;
  mask.reserve(static_cast<size_t>(r.padded_length));
  for (size_t s = 0; s < r.noise.size(); ++s) {
    mask.insert(mask.end(), static_cast<size_t>(r.clean[s]), false);
    mask.insert(mask.end(), static_cast<size_t>(r.noise[s]), true);
  }
  mask.resize(static_cast<size_t>(length));
  return mask;
}

Tokens NoiseTokenToSentinel(const Tokens& tokens, const NoiseMask& mask,
                            int32_t vocab_size) {
  CheckSameLength(tokens, mask, "noise_token_to_sentinel");
  Tokens out = tokens;
  for (size_t i = 0; i < out.size(); ++i)
    if (mask[i]) out[i] = vocab_size - 1;
  return out;
}

Tokens NoiseSpanToSentinel(const Tokens& tokens, const NoiseMask& mask,
                           int32_t vocab_size) {
  return SpansToSentinels(tokens, mask, vocab_size, "noise_span_to_sentinel",
                          /*noise=*/true, /*unique=*/false);
}

Tokens NonnoiseSpanToSentinel(const Tokens& tokens, const NoiseMask& mask,
                              int32_t vocab_size) {
  return SpansToSentinels(tokens, mask, vocab_size, "nonnoise_span_to_sentinel",
                          /*noise=*/false, /*unique=*/false);
}

Tokens NoiseSpanToUniqueSentinel(const Tokens& tokens, const NoiseMask& mask,
                                 int32_t vocab_size) {
  return SpansToSentinels(tokens, mask, vocab_size,
                          "noise_span_to_unique_sentinel", /*noise=*/true,
                          /*unique=*/true);
}

Tokens NonnoiseSpanToUniqueSentinel(const Tokens& tokens, const NoiseMask& mask,
                                    int32_t vocab_size) {
  return SpansToSentinels(tokens, mask, vocab_size,
                          "nonnoise_span_to_unique_sentinel", /*noise=*/false,
                          /*unique=*/true);
}

Tokens DropNoiseTokens(const Tokens& tokens, const NoiseMask& mask, int32_t) {
  return KeepTokens(tokens, mask, "drop_noise_tokens", /*keep=*/false);
}

Tokens DropNonnoiseTokens(const Tokens& tokens, const NoiseMask& mask, int32_t) {
  return KeepTokens(tokens, mask, "drop_nonnoise_tokens", /*keep=*/true);
}

// ---------------------------------------------------------------------------

namespace {


class ReduceConcatDataset : public Dataset {
 public:
  ReduceConcatDataset(DatasetPtr input, int64_t batch_size, std::string key)
      : input_(std::move(input)), batch_size_(batch_size), key_(std::move(key)) {}
  std::optional<Example> Next() override {
    Tokens all;
    int64_t n = 0;
    while (n < batch_size_) {
      auto ex = input_->Next();
      if (!ex) break;
      ++n;
      for (int32_t t : GetTokens(*ex, key_))
        if (t != 0) all.push_back(t);
    }
    if (n == 0) return std::nullopt;
    Example out;
    out[key_] = std::move(all);
    return out;
  }
  nlohmann::json SaveState() const override {
    return {{"input", input_->SaveState()}};
  }
  void RestoreState(const nlohmann::json& state) override {
    input_->RestoreState(StateField(state, "input", "reduce_concat_tokens"));
  }

 private:
  DatasetPtr input_;
  int64_t batch_size_;
  std::string key_;
};

}  // namespace

DatasetPtr SelectRandomChunk(DatasetPtr input, uint64_t seed,
                             int64_t max_length,
                             const std::string& feature_key) {
  T5XX_CHECK(max_length >= 1, "select_random_chunk: max_length must be >= 1, got " +
                             std::to_string(max_length));
  return MapIndexed(
      std::move(input),
      [=](Example ex, uint64_t index) -> std::optional<Example> {
        const Tokens& t = GetTokens(ex, feature_key);
        const int64_t n = static_cast<int64_t>(t.size());
        if (n == 0) return std::nullopt;
        const int64_t num_windows = (n + max_length - 1) / max_length;
        StatelessRng rng(seed, index, seed_purpose::kSpanChunk);
        const int64_t start = max_length * rng.UniformInt(num_windows);
        const int64_t end = std::min(start + max_length, n);
        Example out;
        out[feature_key] = Tokens(t.begin() + start, t.begin() + end);
        return out;
      });
}

DatasetPtr ReduceConcatTokens(DatasetPtr input, int64_t batch_size,
                              const std::string& feature_key) {
  T5XX_CHECK(batch_size >= 1, "reduce_concat_tokens: batch_size must be >= 1, got " +
                             std::to_string(batch_size));
  return std::make_unique<ReduceConcatDataset>(std::move(input), batch_size,
                                               feature_key);
}

DatasetPtr SplitTokens(DatasetPtr input, int64_t max_tokens_per_segment,
                       const std::string& feature_key) {
  T5XX_CHECK(max_tokens_per_segment >= 1,
        "split_tokens: max_tokens_per_segment must be >= 1, got " +
            std::to_string(max_tokens_per_segment));
  return FlatMap(std::move(input), [=](Example ex) {
    const Tokens& t = GetTokens(ex, feature_key);
    std::vector<Example> out;
    for (size_t s = 0; s < t.size();
         s += static_cast<size_t>(max_tokens_per_segment)) {
      const size_t e =
          std::min(t.size(), s + static_cast<size_t>(max_tokens_per_segment));
      Example piece;
      piece[feature_key] = Tokens(t.begin() + s, t.begin() + e);
      out.push_back(std::move(piece));
    }
    return out;
  });
}

DatasetPtr Denoise(DatasetPtr input, const OutputFeatures& output_features,
                   uint64_t seed, double noise_density,
                   double mean_noise_span_length, NoiseFn inputs_fn,
                   NoiseFn targets_fn, const std::string& inputs_key,
                   const std::string& targets_key, int num_threads) {
  T5XX_CHECK(num_threads >= 0, "denoise: num_threads must be >= 0, got " +
                              std::to_string(num_threads));
  auto it = output_features.find(targets_key);
  T5XX_CHECK(it != output_features.end() && it->second.vocabulary != nullptr,
        "denoise: output feature '" + targets_key +
            "' with a vocabulary is required (its vocab_size() places the "
            "sentinels)");
  CheckDensityAndMean(noise_density, mean_noise_span_length, "denoise");
  const int32_t vocab_size = it->second.vocabulary->vocab_size();
  // span_corruption's pair of functions is computed from the mask's runs
  // directly (the same tokens as through the mask, without building it).
  using Fn = Tokens (*)(const Tokens&, const NoiseMask&, int32_t);
  const Fn* in_fn = inputs_fn.target<Fn>();
  const Fn* tg_fn = targets_fn.target<Fn>();
  const bool unique_pair = in_fn && tg_fn && *in_fn == &NoiseSpanToUniqueSentinel &&
                           *tg_fn == &NonnoiseSpanToUniqueSentinel;
  // A pure function of (example, index): safe to run on worker threads.
  auto denoise_one = [=](Example ex, uint64_t index) -> Example {
    const Tokens tokens = std::move(GetMutableTokens(ex, targets_key));
    const int64_t length = static_cast<int64_t>(tokens.size());
    const uint64_t mask_seed = HashSeed(seed, index, seed_purpose::kSpanMask);
    if (unique_pair && length >= 2) {
      // The mask is clean[0] noise[0] clean[1] noise[1] ... uncut (length
      // >= 2): the k-th noise run becomes vocab_size - k in the inputs, the
      // k-th clean run vocab_size - k in the targets.
      const NoiseRuns r =
          RandomSpansNoiseRuns(length, noise_density, mask_seed, mean_noise_span_length);
      if (!r.noise.empty()) {
        Tokens inputs, targets;
        inputs.reserve(tokens.size());
        targets.reserve(tokens.size());
        auto at = tokens.begin();
        for (size_t s = 0; s < r.noise.size(); ++s) {
          const int32_t sentinel = vocab_size - static_cast<int32_t>(s + 1);
          inputs.insert(inputs.end(), at, at + r.clean[s]);
          targets.push_back(sentinel);
          at += r.clean[s];
          inputs.push_back(sentinel);
          targets.insert(targets.end(), at, at + r.noise[s]);
          at += r.noise[s];
        }
        ex[inputs_key] = std::move(inputs);
        ex[targets_key] = std::move(targets);
        return ex;
      }
    }
    const NoiseMask mask =
        RandomSpansNoiseMask(length, noise_density, mask_seed, mean_noise_span_length);
    ex[inputs_key] = inputs_fn(tokens, mask, vocab_size);
    ex[targets_key] = targets_fn(tokens, mask, vocab_size);
    return ex;
  };
  return ParallelMapIndexed(std::move(input), denoise_one, ResolveDataThreads(num_threads));
}

DatasetPtr SpanCorruption(DatasetPtr input, const FeatureLengths& sequence_length,
                          const OutputFeatures& output_features, uint64_t seed,
                          double mean_noise_span_length, double noise_density,
                          int num_threads) {
  auto in_it = sequence_length.find("inputs");
  auto tg_it = sequence_length.find("targets");
  T5XX_CHECK(in_it != sequence_length.end() && tg_it != sequence_length.end(),
        "span_corruption: sequence_length must give both 'inputs' and "
        "'targets'");
  const auto [tokens_length, targets_length] = RandomSpansHelper(
      in_it->second, noise_density, mean_noise_span_length);
  if (tg_it->second < targets_length) {
    std::ostringstream msg;
    msg << "span_corruption: targets sequence length " << tg_it->second
        << " is too small: inputs length " << in_it->second
        << " with noise_density " << noise_density
        << " and mean_noise_span_length " << mean_noise_span_length
        << " needs targets length >= " << targets_length;
    throw Error(msg.str());
  }
  DatasetPtr ds = SelectRandomChunk(std::move(input), HashSeed(seed, seed_purpose::kSpanStepChunk),
                                    65536, "targets");
  ds = ReduceConcatTokens(std::move(ds), 128, "targets");
  ds = SplitTokens(std::move(ds), tokens_length, "targets");
  return Denoise(std::move(ds), output_features, HashSeed(seed, seed_purpose::kSpanStepDenoise),
                 noise_density, mean_noise_span_length,
                 NoiseSpanToUniqueSentinel, NonnoiseSpanToUniqueSentinel,
                 "inputs", "targets", num_threads);
}

Preprocessor SpanCorruptionPreprocessor(double mean_noise_span_length,
                                        double noise_density, int num_threads) {
  return [=](DatasetPtr ds, const PreprocessContext& ctx) {
    return SpanCorruption(std::move(ds), ctx.sequence_length,
                          ctx.output_features, ctx.seed, mean_noise_span_length,
                          noise_density, num_threads);
  };
}

}  // namespace t5xx::seqio
