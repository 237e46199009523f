// EncoderDecoderModel: a T5 network plus its loss, as t5x.models.
// EncoderDecoderModel (t5x/models.py) — the object gin's MODEL macro builds.
#pragma once

#include "t5xx/models/base_model.h"
#include "t5xx/models/network.h"

namespace t5xx::models {

class EncoderDecoderModel : public BaseTransformerModel {
 public:
  EncoderDecoderModel(Transformer module, double z_loss, double label_smoothing,
                      LossNormalizingFactor loss_normalizing_factor);

  std::string name() const override { return "EncoderDecoderModel"; }
  const Transformer& module() const { return module_; }

  ParamStore InitParams(uint64_t seed) const override { return module_.InitParams(seed); }
  // Needs encoder_input_tokens, decoder_input_tokens, decoder_target_tokens
  // (and the segment ids of a packed batch); see Transformer.
  at::Tensor ComputeLogits(const ParamStore& params, const FeatureBatch& batch, bool train,
                           at::Generator* rng) const override {
    return module_(params, batch, train, rng);
  }
  // seqio's EncDecFeatureConverter.
  std::shared_ptr<seqio::FeatureConverter> CreateFeatureConverter(
      bool pack, const std::map<std::string, int64_t>& task_feature_lengths) const override;
  // encoder_input_tokens = inputs, decoder_target_tokens = targets.
  std::map<std::string, int64_t> ModelFeatureLengths(
      const std::map<std::string, int64_t>& task_feature_lengths) const override;
  // lengths: encoder_input_tokens and decoder_target_tokens (flops.h).
  double TrainFlops(int64_t batch_size,
                    const std::map<std::string, int64_t>& lengths) const override;

 private:
  Transformer module_;
};

}  // namespace t5xx::models
