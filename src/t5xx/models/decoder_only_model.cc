// DecoderOnlyModel -- the implementation of decoder_only_model.h.
#include "t5xx/models/decoder_only_model.h"

#include "t5xx/models/flops.h"
#include "t5xx/util/error.h"

namespace t5xx::models {

DecoderOnlyModel::DecoderOnlyModel(DecoderOnlyTransformer module,
                                   bool inputs_bidirectional_attention, double z_loss,
                                   double label_smoothing,
                                   LossNormalizingFactor loss_normalizing_factor)
    : BaseTransformerModel(z_loss, label_smoothing, loss_normalizing_factor),
      module_(std::move(module)),
      inputs_bidirectional_attention_(inputs_bidirectional_attention) {}

at::Tensor DecoderOnlyModel::ComputeLogits(const ParamStore& params, const FeatureBatch& batch,
                                           bool train, at::Generator* rng) const {
  if (inputs_bidirectional_attention_ || !batch.count("decoder_causal_attention")) {
    return module_(params, batch, train, rng);
  }
  FeatureBatch causal = batch;
  causal.erase("decoder_causal_attention");
  return module_(params, causal, train, rng);
}

double DecoderOnlyModel::TrainFlops(int64_t batch_size,
                                    const std::map<std::string, int64_t>& lengths) const {
  auto it = lengths.find("decoder_target_tokens");
  T5XX_CHECK(it != lengths.end(), "DecoderOnlyModel FLOPs need the decoder_target_tokens length");
  return DecoderOnlyTrainFlops(module_.config(), batch_size, it->second);
}

std::shared_ptr<seqio::FeatureConverter> DecoderOnlyModel::CreateFeatureConverter(
    bool pack, const std::map<std::string, int64_t>& task_feature_lengths) const {
  if (task_feature_lengths.count("inputs")) {
    return std::make_shared<seqio::PrefixLMFeatureConverter>(pack);
  }
  return std::make_shared<seqio::LMFeatureConverter>(pack);
}

std::map<std::string, int64_t> DecoderOnlyModel::ModelFeatureLengths(
    const std::map<std::string, int64_t>& task_feature_lengths) const {
  return {{"decoder_target_tokens", TaskLength(task_feature_lengths, "inputs") +
                                        TaskLength(task_feature_lengths, "targets")}};
}

}  // namespace t5xx::models
