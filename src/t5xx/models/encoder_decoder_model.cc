// EncoderDecoderModel -- the implementation of encoder_decoder_model.h.
#include "t5xx/models/encoder_decoder_model.h"

#include "t5xx/models/flops.h"
#include "t5xx/util/error.h"

namespace t5xx::models {

EncoderDecoderModel::EncoderDecoderModel(Transformer module, double z_loss,
                                         double label_smoothing,
                                         LossNormalizingFactor loss_normalizing_factor)
    : BaseTransformerModel(z_loss, label_smoothing, loss_normalizing_factor),
      module_(std::move(module)) {}

double EncoderDecoderModel::TrainFlops(int64_t batch_size,
                                       const std::map<std::string, int64_t>& lengths) const {
  auto enc = lengths.find("encoder_input_tokens");
  auto dec = lengths.find("decoder_target_tokens");
  T5XX_CHECK(enc != lengths.end() && dec != lengths.end(),
        "EncoderDecoderModel FLOPs need the encoder_input_tokens and decoder_target_tokens "
        "lengths");
  return EncoderDecoderTrainFlops(module_.config(), batch_size, enc->second, dec->second);
}

std::shared_ptr<seqio::FeatureConverter> EncoderDecoderModel::CreateFeatureConverter(
    bool pack, const std::map<std::string, int64_t>&) const {
  return std::make_shared<seqio::EncDecFeatureConverter>(pack);
}

std::map<std::string, int64_t> EncoderDecoderModel::ModelFeatureLengths(
    const std::map<std::string, int64_t>& task_feature_lengths) const {
  return {{"encoder_input_tokens", TaskLength(task_feature_lengths, "inputs")},
          {"decoder_target_tokens", TaskLength(task_feature_lengths, "targets")}};
}

}  // namespace t5xx::models
