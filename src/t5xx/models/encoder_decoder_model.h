// EncoderDecoderModel: a T5 network plus its loss, as t5x.models.
// EncoderDecoderModel (t5x/models.py) — the object gin's MODEL macro builds.
#pragma once

#include "t5xx/models/losses.h"
#include "t5xx/models/network.h"

namespace t5xx::models {

class EncoderDecoderModel {
 public:
  EncoderDecoderModel(Transformer module, double z_loss, double label_smoothing,
                      LossNormalizingFactor loss_normalizing_factor);

  const Transformer& module() const { return module_; }
  double z_loss() const { return z_loss_; }
  double label_smoothing() const { return label_smoothing_; }
  const LossNormalizingFactor& loss_normalizing_factor() const {
    return loss_normalizing_factor_;
  }

  // Teacher-forced loss on a batch of EncDecFeatureConverter features
  // (see FeatureBatch). decoder_loss_weights defaults to targets > 0.
  LossOutput Loss(const ParamStore& params, const FeatureBatch& batch,
                  bool train) const;

 private:
  Transformer module_;
  double z_loss_;
  double label_smoothing_;
  LossNormalizingFactor loss_normalizing_factor_;
};

}  // namespace t5xx::models
