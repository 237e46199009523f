// See model.h.
#include "t5xx/run/model.h"

#include <exception>
#include <string>

#include "t5xx/models/decoder_only_model.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/util/error.h"

namespace t5xx::run {

std::unique_ptr<models::BaseTransformerModel> CreateModel(const ModelConfig& m) {
  std::unique_ptr<models::BaseTransformerModel> model;
  if (m.kind == ModelKind::kEncoderDecoder) {
    model = std::make_unique<models::EncoderDecoderModel>(
        models::Transformer(m.t5_config), m.z_loss, m.label_smoothing, m.loss_normalizing_factor);
  } else {
    model = std::make_unique<models::DecoderOnlyModel>(
        models::DecoderOnlyTransformer(m.decoder_only_config), m.inputs_bidirectional_attention,
        m.z_loss, m.label_smoothing, m.loss_normalizing_factor);
  }
  model->set_decode_fn(m.decode_fn);
  return model;
}

models::ParamStore InitParams(const models::BaseTransformerModel& model, uint64_t seed,
                              partitioning::BasePartitioner* partitioner, bool uninitialized) {
  try {
    if (partitioner) return partitioning::InitPlacedParams(*partitioner, model, seed, uninitialized);
    const models::UninitializedPlacement unset;
    return model.InitParams(seed, uninitialized ? &unset : nullptr);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // e.g. libtorch's allocation failure
    std::string what = e.what();
    throw Error("cannot allocate the model's parameters (" + what.substr(0, what.find('\n')) +
                "); use a smaller model (network config sizes)");
  }
}

}  // namespace t5xx::run
