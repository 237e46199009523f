#include "t5xx/models/encoder_decoder_model.h"

namespace t5xx::models {

EncoderDecoderModel::EncoderDecoderModel(
    Transformer module, double z_loss, double label_smoothing,
    LossNormalizingFactor loss_normalizing_factor)
    : module_(std::move(module)),
      z_loss_(z_loss),
      label_smoothing_(label_smoothing),
      loss_normalizing_factor_(loss_normalizing_factor) {}

LossOutput EncoderDecoderModel::Loss(const ParamStore& params,
                                     const FeatureBatch& batch,
                                     bool train) const {
  at::Tensor logits = module_(params, batch, train);
  const at::Tensor& targets = batch.at("decoder_target_tokens");
  auto it = batch.find("decoder_loss_weights");
  at::Tensor weights = it != batch.end() ? it->second.to(at::kFloat)
                                         : (targets > 0).to(at::kFloat);
  return ComputeWeightedCrossEntropy(logits, targets, weights, label_smoothing_,
                                     z_loss_, loss_normalizing_factor_);
}

}  // namespace t5xx::models
