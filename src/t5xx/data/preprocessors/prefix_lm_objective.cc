// t5's targets_for_prefix_lm_objective, pack_prefix_lm_encoder_decoder,
// pack_prefix_lm_decoder_only and unsupervised (see prefix_lm_objective.h).
#include "t5xx/data/preprocessors/prefix_lm_objective.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/utils.h"
#include "t5xx/data/preprocessors/span_corruption.h"
#include "t5xx/util/error.h"
#include "t5xx/util/hash.h"

namespace t5xx::seqio {
namespace {

// This file's seed streams (t5xx's own; the others are listed in
// data/pipeline/seed_purposes.h).
constexpr uint64_t kStepChunk = 0x706C6D63686E6BULL;    // "plmchnk"
constexpr uint64_t kSplitPoint = 0x706C6D73706C74ULL;   // "plmsplt"
constexpr uint64_t kUnsupervised = 0x756E73757076ULL;   // "unsupv"

// seqio's trim_and_pad_dataset: every feature of the example named in
// `lengths` is cut or zero-padded to its length; others are kept.
Example TrimAndPadPresent(Example ex, const FeatureLengths& lengths) {
  for (auto& [key, value] : ex) {
    auto it = lengths.find(key);
    if (it == lengths.end()) continue;
    Tokens* t = std::get_if<Tokens>(&value);
    T5XX_CHECK(t != nullptr, "trim_and_pad_dataset: feature '" + key +
                                 "' must be int32 tokens, but holds " + DescribeValue(value));
    t->resize(static_cast<size_t>(it->second), 0);
  }
  return ex;
}

void CheckSplit(int64_t length, int64_t split_point, const char* who) {
  T5XX_CHECK(split_point >= 1 && split_point < length,
             std::string(who) + ": split point " + std::to_string(split_point) +
                 " outside [1, " + std::to_string(length) + ")");
}

void CheckLength(const Tokens& t, int64_t length, const char* who, const char* what) {
  T5XX_CHECK(static_cast<int64_t>(t.size()) == length,
             std::string(who) + ": " + what + " has " + std::to_string(t.size()) +
                 " tokens, not the packed length " + std::to_string(length) +
                 " (run t5.data.preprocessors.targets_for_prefix_lm_objective before)");
}

Tokens IotaTokens(int64_t n) {
  Tokens r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) r[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  return r;
}

int64_t DrawSplit(uint64_t seed, uint64_t index, int64_t length) {
  StatelessRng rng(seed, index, kSplitPoint);
  return 1 + rng.UniformInt(length - 1);  // t5: stateless_uniform [1, L)
}

// t5's ds.batch(2) followed by the pair packing.
class PrefixLmPairDataset : public Dataset {
 public:
  PrefixLmPairDataset(DatasetPtr input, int64_t length, uint64_t seed, int32_t pad_id)
      : input_(std::move(input)), length_(length), seed_(seed), pad_id_(pad_id) {}
  std::optional<Example> Next() override {
    const char* who = "pack_prefix_lm_encoder_decoder";
    auto first = input_->Next();
    if (!first) return std::nullopt;
    auto second = input_->Next();
    T5XX_CHECK(second.has_value(),
               std::string(who) + ": example " + std::to_string(2 * pair_) +
                   " is the last of an odd count and has no partner (t5's batch(2) "
                   "gives a batch of one, and its packing fails)");
    const uint64_t pair = pair_++;
    try {
      return PackPrefixLmEncoderDecoderPair(GetTokens(*first, "targets"),
                                            GetTokens(*second, "targets"), length_,
                                            DrawSplit(seed_, pair, length_), pad_id_);
    } catch (const Error& e) {
      throw Error(std::string(who) + ": examples " + std::to_string(2 * pair) + " and " +
                  std::to_string(2 * pair + 1) + ": " + e.what());
    }
  }
  nlohmann::json SaveState() const override {
    return {{"pair", pair_}, {"input", input_->SaveState()}};
  }
  void RestoreState(const nlohmann::json& state) override {
    pair_ = StateCount(state, "pair", "pack_prefix_lm_encoder_decoder");
    input_->RestoreState(StateField(state, "input", "pack_prefix_lm_encoder_decoder"));
  }

 private:
  DatasetPtr input_;
  int64_t length_;
  uint64_t seed_;
  int32_t pad_id_;
  uint64_t pair_ = 0;
};

}  // namespace

DatasetPtr TargetsForPrefixLmObjective(DatasetPtr input, const FeatureLengths& sequence_length,
                                       const OutputFeatures& output_features, uint64_t seed) {
  auto it = sequence_length.find("targets");
  T5XX_CHECK(it != sequence_length.end(),
             "targets_for_prefix_lm_objective: sequence_length has no 'targets' entry");
  T5XX_CHECK(it->second >= 1, "targets_for_prefix_lm_objective: sequence_length['targets'] "
                              "must be >= 1, got " + std::to_string(it->second));
  DatasetPtr ds = SelectRandomChunk(std::move(input), HashSeed(seed, kStepChunk), 65536,
                                    "targets");
  ds = AppendEos(std::move(ds), output_features);
  ds = ReduceConcatTokens(std::move(ds), 128, "targets");
  ds = SplitTokens(std::move(ds), it->second, "targets");
  return Map(std::move(ds), [sequence_length](Example ex) {
    return TrimAndPadPresent(std::move(ex), sequence_length);
  });
}

Preprocessor TargetsForPrefixLmObjectivePreprocessor() {
  return [](DatasetPtr ds, const PreprocessContext& ctx) {
    return TargetsForPrefixLmObjective(std::move(ds), ctx.sequence_length,
                                       ctx.output_features, ctx.seed);
  };
}

int64_t PrefixLmPackedLength(const FeatureLengths& sequence_length, const char* who) {
  T5XX_CHECK(!sequence_length.empty(), std::string(who) + ": sequence_length is empty");
  const int64_t length = sequence_length.begin()->second;
  for (const auto& [key, l] : sequence_length)
    T5XX_CHECK(l == length, std::string(who) + ": every sequence_length must be the same "
                                "packed length (t5 asserts it), but '" + key + "' is " +
                                std::to_string(l) + " and '" +
                                sequence_length.begin()->first + "' " +
                                std::to_string(length));
  T5XX_CHECK(length >= 2 && length % 2 == 0,
             std::string(who) + ": the packed length must be even (t5 asserts it), got " +
                 std::to_string(length));
  return length;
}

Example PackPrefixLmEncoderDecoderPair(const Tokens& t0, const Tokens& t1, int64_t length,
                                       int64_t split_point, int32_t pad_id) {
  const char* who = "pack_prefix_lm_encoder_decoder";
  CheckSplit(length, split_point, who);
  CheckLength(t0, length, who, "the first example's targets");
  CheckLength(t1, length, who, "the second example's targets");
  const auto s = static_cast<size_t>(split_point);
  const auto r = static_cast<size_t>(length - split_point);
  Tokens inputs(t0.begin(), t0.begin() + s);
  inputs.insert(inputs.end(), t1.begin(), t1.begin() + r);
  Tokens targets(t0.begin() + s, t0.end());
  targets.insert(targets.end(), t1.begin() + r, t1.end());
  Tokens enc_seg(static_cast<size_t>(length)), dec_seg(static_cast<size_t>(length));
  Tokens weights(static_cast<size_t>(length));
  for (size_t i = 0; i < static_cast<size_t>(length); ++i) {
    enc_seg[i] = i >= s ? 2 : 1;
    dec_seg[i] = i >= r ? 2 : 1;
    weights[i] = targets[i] != pad_id ? 1 : 0;
  }
  Tokens enc_pos = IotaTokens(split_point), dec_pos = IotaTokens(length - split_point);
  const Tokens tail_enc = IotaTokens(length - split_point), tail_dec = IotaTokens(split_point);
  enc_pos.insert(enc_pos.end(), tail_enc.begin(), tail_enc.end());
  dec_pos.insert(dec_pos.end(), tail_dec.begin(), tail_dec.end());
  Example out;
  out["decoder_input_tokens"] = MakeAutoregressiveInputs(targets, dec_seg, 0);
  out["encoder_input_tokens"] = std::move(inputs);
  out["decoder_target_tokens"] = std::move(targets);
  out["encoder_segment_ids"] = std::move(enc_seg);
  out["encoder_positions"] = std::move(enc_pos);
  out["decoder_segment_ids"] = std::move(dec_seg);
  out["decoder_positions"] = std::move(dec_pos);
  out["decoder_loss_weights"] = std::move(weights);
  return out;
}

DatasetPtr PackPrefixLmEncoderDecoder(DatasetPtr input, const FeatureLengths& sequence_length,
                                      uint64_t seed, int32_t pad_id) {
  const int64_t length = PrefixLmPackedLength(sequence_length, "pack_prefix_lm_encoder_decoder");
  return std::make_unique<PrefixLmPairDataset>(std::move(input), length, seed, pad_id);
}

Preprocessor PackPrefixLmEncoderDecoderPreprocessor(int32_t pad_id) {
  return [pad_id](DatasetPtr ds, const PreprocessContext& ctx) {
    return PackPrefixLmEncoderDecoder(std::move(ds), ctx.sequence_length, ctx.seed, pad_id);
  };
}

Example PackPrefixLmDecoderOnlyExample(const Tokens& targets, int64_t length,
                                       int64_t split_point, bool loss_on_targets_only,
                                       int32_t pad_id) {
  const char* who = "pack_prefix_lm_decoder_only";
  CheckSplit(length, split_point, who);
  CheckLength(targets, length, who, "targets");
  Tokens weights(static_cast<size_t>(length)), causal(static_cast<size_t>(length));
  for (int64_t i = 0; i < length; ++i) {
    const auto k = static_cast<size_t>(i);
    const int32_t w = loss_on_targets_only ? (i >= split_point ? 1 : 0) : 1;
    weights[k] = targets[k] != pad_id ? w : 0;
    causal[k] = i <= split_point ? 1 : 0;
  }
  Example out;
  out["decoder_target_tokens"] = targets;
  out["decoder_input_tokens"] = MakeAutoregressiveInputs(targets, 0);
  out["decoder_loss_weights"] = std::move(weights);
  out["decoder_causal_attention"] = std::move(causal);
  return out;
}

DatasetPtr PackPrefixLmDecoderOnly(DatasetPtr input, const FeatureLengths& sequence_length,
                                   uint64_t seed, bool loss_on_targets_only, int32_t pad_id) {
  const int64_t length = PrefixLmPackedLength(sequence_length, "pack_prefix_lm_decoder_only");
  return MapIndexed(std::move(input), [=](Example ex, uint64_t index) {
    try {
      return PackPrefixLmDecoderOnlyExample(GetTokens(ex, "targets"), length,
                                            DrawSplit(seed, index, length),
                                            loss_on_targets_only, pad_id);
    } catch (const Error& e) {
      throw Error("pack_prefix_lm_decoder_only: example " + std::to_string(index) + ": " +
                  e.what());
    }
  });
}

Preprocessor PackPrefixLmDecoderOnlyPreprocessor(bool loss_on_targets_only, int32_t pad_id) {
  return [=](DatasetPtr ds, const PreprocessContext& ctx) {
    return PackPrefixLmDecoderOnly(std::move(ds), ctx.sequence_length, ctx.seed,
                                   loss_on_targets_only, pad_id);
  };
}

Preprocessor UnsupervisedPreprocessor(std::vector<Preprocessor> steps) {
  return [steps = std::move(steps)](DatasetPtr ds, const PreprocessContext& ctx) {
    for (size_t i = 0; i < steps.size(); ++i) {
      PreprocessContext step_ctx = ctx;
      step_ctx.seed = HashSeed(ctx.seed, i, kUnsupervised);
      ds = steps[i](std::move(ds), step_ctx);
    }
    return ds;
  };
}

}  // namespace t5xx::seqio
