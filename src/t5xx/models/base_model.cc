// The model interface the trainer and inference drive -- the implementation
// of base_model.h.
#include "t5xx/models/base_model.h"

#include <ATen/core/grad_mode.h>
#include <stdexcept>

namespace t5xx::models {

int64_t TaskLength(const std::map<std::string, int64_t>& task_feature_lengths,
                   const std::string& feature) {
  auto it = task_feature_lengths.find(feature);
  return it == task_feature_lengths.end() ? int64_t{0} : it->second;
}

const at::Tensor& RequireFeature(const FeatureBatch& batch, const std::string& key) {
  auto it = batch.find(key);
  if (it == batch.end()) {
    throw std::invalid_argument("model feature '" + key + "' is missing from the batch");
  }
  return it->second;
}

at::Tensor OptionalFeature(const FeatureBatch& batch, const std::string& key) {
  auto it = batch.find(key);
  return it == batch.end() ? at::Tensor() : it->second;
}

std::vector<ParamSpec> BaseTransformerModel::ParamSpecs() const {
  const SpecsOnlyPlacement specs_only;
  return InitParams(0, &specs_only).Specs();
}

NormalizedLossWeights BaseTransformerModel::LossWeights(const FeatureBatch& batch) const {
  return GetLossNormalizingFactorAndWeights(
      loss_normalizing_factor_, RequireFeature(batch, "decoder_target_tokens"),
      OptionalFeature(batch, "decoder_loss_weights"), OptionalFeature(batch, "decoder_segment_ids"));
}

LossOutput BaseTransformerModel::Loss(const ParamStore& params, const FeatureBatch& batch,
                                      bool train, at::Generator* rng,
                                      std::optional<double> normalizing_factor) const {
  // A given factor (the trainer's, of the global batch) needs no sum read
  // back from the device.
  NormalizedLossWeights w = GetLossNormalizingFactorAndWeights(
      loss_normalizing_factor_, RequireFeature(batch, "decoder_target_tokens"),
      OptionalFeature(batch, "decoder_loss_weights"), OptionalFeature(batch, "decoder_segment_ids"),
      /*compute_factor=*/!normalizing_factor.has_value());
  at::Tensor logits = ComputeLogits(params, batch, train, rng);
  return ComputeWeightedCrossEntropy(logits, batch.at("decoder_target_tokens"), w.weights,
                                     label_smoothing_, z_loss_,
                                     normalizing_factor.value_or(w.factor),
                                     params.hooks().VocabPartitionOf(logits));
}

ScoreBatchOutput BaseTransformerModel::ScoreBatch(const ParamStore& params,
                                                  const FeatureBatch& batch,
                                                  bool return_intermediates) const {
  const at::Tensor& targets = RequireFeature(batch, "decoder_target_tokens");
  const at::Tensor& weights = RequireFeature(batch, "decoder_loss_weights");
  const at::NoGradGuard no_grad;
  const at::Tensor logits = ComputeLogits(params, batch, /*train=*/false, nullptr);
  // t5x: -cross_entropy_with_logits(logits, onehot(targets), z_loss=0) *
  // weights, i.e. log_softmax(logits)[target] * weights (the loss's
  // per-token cross-entropy without label smoothing or z-loss, which also
  // handles a vocabulary split over processes).
  const LossOutput ce = ComputeWeightedCrossEntropy(
      logits, targets, weights.to(at::kFloat), /*label_smoothing=*/0.0, /*z_loss=*/0.0,
      /*normalizing_factor=*/1.0, params.hooks().VocabPartitionOf(logits));
  const at::Tensor token_scores = -ce.per_token_loss * weights.to(at::kFloat);
  ScoreBatchOutput out;
  out.sequence_scores = token_scores.sum(-1);
  if (return_intermediates) {
    out.intermediates["decoder.target_tokens"] = targets;
    out.intermediates["decoder.loss_weights"] = weights;
    out.intermediates["decoder.token_scores"] = token_scores;
  }
  return out;
}

}  // namespace t5xx::models
