// seqio feature converters (seqio/feature_converters.py) and batching.
//
// A FeatureConverter maps a Task's dataset (features named by TASK_FEATURES,
// e.g. "inputs"/"targets", rank-1 int32) to the model's features (e.g.
// "encoder_input_tokens"), packing or padding every model feature to exactly
// its length. Batching stacks converted examples row-major with
// drop_remainder semantics (seqio's get_dataset batches with
// drop_remainder=True).
//
// Deviation from seqio: a task feature longer than its task feature length is
// a t5xx::Error (naming converter, task, example index, feature and lengths)
// raised while iterating, never a silent cut by the packer/padder.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "t5xx/data/dataset.h"
#include "t5xx/data/utils.h"

namespace t5xx::seqio {

// What a converter declares about its features -- seqio's TASK_FEATURES and
// MODEL_FEATURES class attributes -- and how long each model feature is.
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
};

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
  // its length).
  virtual DatasetPtr ConvertValidated(
      DatasetPtr input, const FeatureLengths& task_feature_lengths) const = 0;

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

 protected:
  DatasetPtr ConvertValidated(DatasetPtr input,
                              const FeatureLengths& lengths) const override;
};

// LMFeatureConverter (decoder-only): task feature targets [T] ->
//   decoder_target_tokens, decoder_input_tokens, decoder_loss_weights [T]
//   packed only: decoder_segment_ids, decoder_positions [T].
class LMFeatureConverter : public FeatureConverter {
 public:
  explicit LMFeatureConverter(bool pack = true, int32_t bos_id = 0);

 protected:
  DatasetPtr ConvertValidated(DatasetPtr input,
                              const FeatureLengths& lengths) const override;
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

 protected:
  DatasetPtr ConvertValidated(DatasetPtr input,
                              const FeatureLengths& lengths) const override;
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

// ---------------------------------------------------------------------------
// Batching.

// A batch of converted examples.
struct Batch {
  int64_t batch_size = 0;
  // Feature -> row-major [batch_size, lengths[feature]] int32.
  std::map<std::string, std::vector<int32_t>> features;
  std::map<std::string, int64_t> lengths;

  // Copy of row `r` of `feature` ([lengths[feature]] int32). Throws
  // t5xx::Error for an unknown feature or r outside [0, batch_size).
  std::vector<int32_t> Row(const std::string& feature, int64_t r) const;
};

// Stacks `batch_size` consecutive examples per batch; a final partial batch
// is dropped (drop_remainder=True). Features in `lengths` are batched (others
// are ignored); with empty `lengths` every token feature of the first example
// is batched with its size as length. Throws t5xx::Error (naming the feature,
// the example's index and the lengths) when an example lacks a feature, or a
// feature is a string or not exactly its length; and if batch_size < 1.
class BatchIterator {
 public:
  BatchIterator(DatasetPtr input, int64_t batch_size,
                FeatureLengths lengths = {});
  BatchIterator(BatchIterator&&) = default;
  BatchIterator& operator=(BatchIterator&&) = default;

  // The next full batch, or std::nullopt once fewer than batch_size examples
  // remain.
  std::optional<Batch> Next();
  // True if NextBatch() will return a batch (reads ahead one batch).
  bool HasNext();
  // The next full batch; throws t5xx::Error when the dataset is exhausted.
  Batch NextBatch();

  int64_t batch_size() const { return batch_size_; }

  // Checkpointing: a root state ({"version": 1, "state": ...}, see
  // WrapRootState) holding the counters, a read-ahead batch if any, and the
  // input pipeline's state. RestoreState must be called on a freshly built
  // identical iterator (same pipeline, seeds and batch size); it throws
  // t5xx::Error for a newer state version or a mismatched pipeline.
  nlohmann::json SaveState() const;
  void RestoreState(const nlohmann::json& root);

 private:
  DatasetPtr input_;
  int64_t batch_size_;
  FeatureLengths lengths_;
  int64_t examples_read_ = 0;
  std::optional<Batch> lookahead_;
  bool done_ = false;
};

}  // namespace t5xx::seqio
