#include "t5xx/models/base_model.h"

#include <stdexcept>

namespace t5xx::models {

NormalizedLossWeights BaseTransformerModel::LossWeights(const FeatureBatch& batch) const {
  auto find = [&](const char* k) {
    auto it = batch.find(k);
    return it == batch.end() ? at::Tensor() : it->second;
  };
  at::Tensor targets = find("decoder_target_tokens");
  if (!targets.defined()) {
    throw std::invalid_argument("model feature 'decoder_target_tokens' is missing from the batch");
  }
  return GetLossNormalizingFactorAndWeights(loss_normalizing_factor_, targets,
                                            find("decoder_loss_weights"),
                                            find("decoder_segment_ids"));
}

LossOutput BaseTransformerModel::Loss(const ParamStore& params, const FeatureBatch& batch,
                                      bool train, at::Generator* rng,
                                      std::optional<double> normalizing_factor) const {
  NormalizedLossWeights w = LossWeights(batch);
  at::Tensor logits = ComputeLogits(params, batch, train, rng);
  return ComputeWeightedCrossEntropy(logits, batch.at("decoder_target_tokens"), w.weights,
                                     label_smoothing_, z_loss_,
                                     normalizing_factor.value_or(w.factor));
}

}  // namespace t5xx::models
