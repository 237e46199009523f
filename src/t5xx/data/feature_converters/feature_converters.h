// seqio feature converters (seqio/feature_converters.py).
//
// A FeatureConverter maps a Task's dataset (features named by TASK_FEATURES,
// e.g. "inputs"/"targets", rank-1 int32) to the model's features (e.g.
// "encoder_input_tokens"), packing or padding every model feature to exactly
// its length. Batching the converted examples is batching.h's (included here
// for the callers that use both).
//
// Deviation from seqio: a task feature longer than its task feature length is
// a t5xx::Error (naming converter, task, example index, feature and lengths)
// raised while iterating, never a silent cut by the packer/padder.
// Framework-free: no libtorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "t5xx/data/pipeline/batching.h"
#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/pipeline/utils.h"

namespace t5xx::seqio {

// What a converter is: its features -- seqio's TASK_FEATURES and
// MODEL_FEATURES class attributes --, how long each model feature is, and
// how a validated dataset is converted (seqio's _convert_features).
struct FeatureConverterSpec {
  std::string name;  // e.g. "EncDecFeatureConverter"
  // seqio's TASK_FEATURES: the keys task_feature_lengths must have exactly.
  std::vector<std::string> task_features;
  // seqio's MODEL_FEATURES, in order.
  std::vector<std::string> model_features;
  // The packing features, appended to model_features when packing.
  std::vector<std::string> packing_features;
  // Length of `model_feature` from task feature lengths that passed
  // ValidateLengths (so every task feature is present).
  int64_t (*model_feature_length)(const std::string& model_feature,
                                  const FeatureLengths& task_feature_lengths) =
      nullptr;
  // Converts a validated dataset (every task feature present, int32, within
  // its length) to the model features, packing when `pack`.
  DatasetPtr (*convert)(DatasetPtr input,
                        const FeatureLengths& task_feature_lengths, bool pack,
                        int32_t bos_id) = nullptr;
};

// Examples a converter reads ahead of its packing on a second thread.
inline constexpr size_t kConverterPrefetch = 256;

class FeatureConverter {
 public:
  // pack: use trim_and_pack (adds *_segment_ids / *_positions model features).
  // bos_id: first token of decoder_input_tokens (and of every packed segment).
  FeatureConverter(FeatureConverterSpec spec, bool pack, int32_t bos_id)
      : spec_(std::move(spec)), pack_(pack), bos_id_(bos_id) {}
  virtual ~FeatureConverter() = default;

  bool pack() const { return pack_; }
  int32_t bos_id() const { return bos_id_; }

  const std::string& name() const { return spec_.name; }
  // seqio's TASK_FEATURES: the keys task_feature_lengths must have exactly.
  const std::vector<std::string>& TaskFeatures() const {
    return spec_.task_features;
  }
  // seqio's MODEL_FEATURES plus, when packing, the packing features.
  std::vector<std::string> ModelFeatures() const;
  // Length of every model feature ([length] int32 each), from the task
  // feature lengths. Throws t5xx::Error as ValidateLengths does.
  // Virtual: PassThrough/Decoder converters compute them otherwise.
  virtual FeatureLengths GetModelFeatureLengths(
      const FeatureLengths& task_feature_lengths) const;

  // Throws t5xx::Error unless the keys of task_feature_lengths equal
  // TaskFeatures() exactly (naming the missing/extra keys) and every length
  // is >= 1.
  // Virtual: PassThrough/Decoder converters accept other key sets.
  virtual void ValidateLengths(const FeatureLengths& task_feature_lengths) const;

  // Validates the lengths up front (above), then returns the lazily converted
  // dataset. Per example, while iterating, throws t5xx::Error naming the
  // converter, `task_name`, the example index and the feature when a task
  // feature is missing, is a string, or is longer than its length, e.g.
  // "... example 0: inputs longer than its task feature length (6 > 5)".
  // Extra input features (e.g. *_pretokenized) are tolerated and dropped.
  // Every output example has exactly ModelFeatures(), each [length] int32.
  // With DataThreads() > 1 (data_threads.h) the input is read on its own
  // thread (Prefetch of kConverterPrefetch examples), so the task's
  // preprocessing runs while this converter packs earlier examples; the
  // stream is the same either way, and so is the saved state's layout.
  // Virtual so PassThrough/Decoder converters can replace the whole flow.
  virtual DatasetPtr operator()(DatasetPtr input,
                                const FeatureLengths& task_feature_lengths,
                                const std::string& task_name = "") const;
  // Eager convenience wrapper over operator().
  std::vector<Example> Convert(std::vector<Example> examples,
                               const FeatureLengths& task_feature_lengths,
                               const std::string& task_name = "") const;

 protected:
  // Converts a validated dataset (every task feature present, int32, within
  // its length): the spec's convert. Virtual: PassThrough/Decoder converters
  // replace the whole flow (operator()) instead.
  virtual DatasetPtr ConvertValidated(
      DatasetPtr input, const FeatureLengths& task_feature_lengths) const;

 private:
  FeatureConverterSpec spec_;
  bool pack_;
  int32_t bos_id_;
};

// EncDecFeatureConverter: task features inputs [I], targets [T] ->
//   encoder_input_tokens [I]   = inputs
//   decoder_target_tokens [T]  = targets
//   decoder_input_tokens [T]   = make_autoregressive_inputs(targets, seg, bos)
//   decoder_loss_weights [T]   = targets != 0
//   packed only: encoder_segment_ids/encoder_positions [I],
//                decoder_segment_ids/decoder_positions [T].
class EncDecFeatureConverter : public FeatureConverter {
 public:
  explicit EncDecFeatureConverter(bool pack = true, int32_t bos_id = 0);
};

// LMFeatureConverter (decoder-only): task feature targets [T] ->
//   decoder_target_tokens, decoder_input_tokens, decoder_loss_weights [T]
//   packed only: decoder_segment_ids, decoder_positions [T].
class LMFeatureConverter : public FeatureConverter {
 public:
  explicit LMFeatureConverter(bool pack = true, int32_t bos_id = 0);
};

// PrefixLMFeatureConverter (loss_on_targets_only=True): task features
// inputs [I], targets [T] -> with L = I + T and x = inputs ++ targets:
//   decoder_target_tokens [L]    = x (padded)
//   decoder_input_tokens [L]     = make_autoregressive_inputs(x, seg, bos)
//   decoder_loss_weights [L]     = (pos < |inputs|) XOR (token != 0)
//   decoder_causal_attention [L] = pos < |inputs| + 1
//   packed only: decoder_segment_ids, decoder_positions [L]
// where pos is the position within the example (packed: within its segment;
// padding has pos 0 and width 0).
class PrefixLMFeatureConverter : public FeatureConverter {
 public:
  explicit PrefixLMFeatureConverter(bool pack = true, int32_t bos_id = 0);
};

// seqio.PassThroughFeatureConverter: passes the task features through
// unchanged (no padding, no packing, no renaming). task_feature_lengths may
// have any keys (each length >= 1); every example must have each listed
// feature as int32 tokens no longer than its length (t5xx::Error otherwise,
// as for the other converters: over-long is an error, never a cut). Features
// not listed are passed through too. pack must be false: the constructor
// throws t5xx::Error otherwise. Stateful stages keep SaveState/RestoreState.
// Any keys are accepted: TaskFeatures()/ModelFeatures() are empty and model
// feature lengths equal the task feature lengths.
class PassThroughFeatureConverter : public FeatureConverter {
 public:
  explicit PassThroughFeatureConverter(bool pack = false, int32_t bos_id = 0);
  // Only checks that every length is >= 1.
  void ValidateLengths(const FeatureLengths& task_feature_lengths) const override;
  FeatureLengths GetModelFeatureLengths(
      const FeatureLengths& task_feature_lengths) const override;
  DatasetPtr operator()(DatasetPtr input,
                        const FeatureLengths& task_feature_lengths,
                        const std::string& task_name = "") const override;

 protected:
  DatasetPtr ConvertValidated(DatasetPtr input,
                              const FeatureLengths& lengths) const override;
};

// seqio.DecoderFeatureConverter: a decoder-only converter that picks its
// delegate from the keys of task_feature_lengths (at every call):
//   exactly {"targets"}           -> LMFeatureConverter
//   exactly {"inputs", "targets"} -> PrefixLMFeatureConverter
// Any other key set is a t5xx::Error naming the keys. pack and bos_id are
// forwarded to the delegate; outputs, errors and states are the delegate's.
// TaskFeatures()/ModelFeatures() report the PrefixLM (superset) sets.
class DecoderFeatureConverter : public FeatureConverter {
 public:
  explicit DecoderFeatureConverter(bool pack = true, int32_t bos_id = 0);
  // Name of the converter chosen for these lengths (throws as above).
  std::string ChosenName(const FeatureLengths& task_feature_lengths) const;
  void ValidateLengths(const FeatureLengths& task_feature_lengths) const override;
  FeatureLengths GetModelFeatureLengths(
      const FeatureLengths& task_feature_lengths) const override;
  DatasetPtr operator()(DatasetPtr input,
                        const FeatureLengths& task_feature_lengths,
                        const std::string& task_name = "") const override;

 protected:
  DatasetPtr ConvertValidated(DatasetPtr input,
                              const FeatureLengths& lengths) const override;

 private:
  const FeatureConverter& Choose(const FeatureLengths& task_feature_lengths) const;
  LMFeatureConverter lm_;
  PrefixLMFeatureConverter prefix_lm_;
};

}  // namespace t5xx::seqio
