// The model interface the trainer drives -- the implementation of
// base_model.h.
#include "t5xx/models/base_model.h"

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

NormalizedLossWeights BaseTransformerModel::LossWeights(const FeatureBatch& batch) const {
  return GetLossNormalizingFactorAndWeights(
      loss_normalizing_factor_, RequireFeature(batch, "decoder_target_tokens"),
      OptionalFeature(batch, "decoder_loss_weights"), OptionalFeature(batch, "decoder_segment_ids"));
}

LossOutput BaseTransformerModel::Loss(const ParamStore& params, const FeatureBatch& batch,
                                      bool train, at::Generator* rng,
                                      std::optional<double> normalizing_factor) const {
  NormalizedLossWeights w = LossWeights(batch);
  at::Tensor logits = ComputeLogits(params, batch, train, rng);
  return ComputeWeightedCrossEntropy(logits, batch.at("decoder_target_tokens"), w.weights,
                                     label_smoothing_, z_loss_,
                                     normalizing_factor.value_or(w.factor),
                                     params.hooks().VocabPartitionOf(logits));
}

}  // namespace t5xx::models
