// The model interface the trainer drives: t5x.models.BaseTransformerModel
// (t5x/models.py) — parameters, the teacher-forced loss of a batch of model
// features, and the FLOPs of a training step for MFU. EncoderDecoderModel and
// DecoderOnlyModel implement it.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "t5xx/data/feature_converters.h"
#include "t5xx/models/losses.h"
#include "t5xx/models/param_store.h"

namespace t5xx::models {

// Model features by seqio name: int64 token/segment/position tensors [B, L],
// float32 decoder_loss_weights [B, L].
using FeatureBatch = std::map<std::string, at::Tensor>;

// batch[key]; throws std::invalid_argument "model feature '<key>' is missing
// from the batch" when absent.
const at::Tensor& RequireFeature(const FeatureBatch& batch, const std::string& key);
// batch[key], or an undefined tensor when absent (e.g. the segment ids of an
// unpacked batch).
at::Tensor OptionalFeature(const FeatureBatch& batch, const std::string& key);

// task_feature_lengths[feature], 0 when absent.
int64_t TaskLength(const std::map<std::string, int64_t>& task_feature_lengths,
                   const std::string& feature);

class BaseTransformerModel {
 public:
  BaseTransformerModel(double z_loss, double label_smoothing,
                       LossNormalizingFactor loss_normalizing_factor)
      : z_loss_(z_loss),
        label_smoothing_(label_smoothing),
        loss_normalizing_factor_(loss_normalizing_factor) {}
  virtual ~BaseTransformerModel() = default;

  // t5x's class name, e.g. "EncoderDecoderModel".
  virtual std::string name() const = 0;

  // Fresh float32 parameters with t5x's initialisers, deterministic in seed.
  virtual ParamStore InitParams(uint64_t seed) const = 0;

  // Logits [B, L, vocab] (float32) for the batch; dropout (train) draws from
  // rng (null: libtorch's default generator).
  virtual at::Tensor ComputeLogits(const ParamStore& params, const FeatureBatch& batch,
                                   bool train, at::Generator* rng) const = 0;

  // t5x's FEATURE_CONVERTER_CLS: the seqio feature converter that turns
  // task examples (with these task feature lengths, e.g. {"inputs": 512,
  // "targets": 114}) into this model's features; `pack` as
  // utils.DatasetConfig.pack.
  virtual std::shared_ptr<seqio::FeatureConverter> CreateFeatureConverter(
      bool pack, const std::map<std::string, int64_t>& task_feature_lengths) const = 0;

  // The model-feature lengths that CreateFeatureConverter makes of these
  // task feature lengths, as TrainFlops and the memory plan take them (a
  // missing task feature counts 0).
  virtual std::map<std::string, int64_t> ModelFeatureLengths(
      const std::map<std::string, int64_t>& task_feature_lengths) const = 0;

  // Model FLOPs of one training step (3x forward, matmuls only; flops.h) for
  // a batch of these model-feature lengths (e.g. {"encoder_input_tokens":
  // 512, "decoder_target_tokens": 114}).
  virtual double TrainFlops(int64_t batch_size,
                            const std::map<std::string, int64_t>& lengths) const = 0;

  // t5x's loss_fn: cross-entropy with z-loss and label smoothing over
  // decoder_target_tokens, weighted by decoder_loss_weights (default: targets
  // > 0) and normalised by loss_normalizing_factor
  // (GetLossNormalizingFactorAndWeights; packed batches normalise
  // AVERAGE_PER_SEQUENCE per segment). `normalizing_factor` overrides the
  // factor (the trainer passes the whole batch's when it splits it into
  // microbatches, so that their gradients add up to the batch's).
  LossOutput Loss(const ParamStore& params, const FeatureBatch& batch, bool train,
                  at::Generator* rng = nullptr,
                  std::optional<double> normalizing_factor = std::nullopt) const;

  // The normalizing factor and weights of a batch (see Loss).
  NormalizedLossWeights LossWeights(const FeatureBatch& batch) const;

  double z_loss() const { return z_loss_; }
  double label_smoothing() const { return label_smoothing_; }
  const LossNormalizingFactor& loss_normalizing_factor() const {
    return loss_normalizing_factor_;
  }

 private:
  double z_loss_;
  double label_smoothing_;
  LossNormalizingFactor loss_normalizing_factor_;
};

}  // namespace t5xx::models
