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

}  // namespace t5xx::models
