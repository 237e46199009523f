// EncoderDecoderModel -- the implementation of encoder_decoder_model.h.
#include "t5xx/models/encoder_decoder_model.h"

#include "t5xx/models/encoder_decoder_decoding.h"
#include "t5xx/models/flops.h"
#include <ATen/core/grad_mode.h>
#include "t5xx/util/error.h"

namespace t5xx::models {

EncoderDecoderModel::EncoderDecoderModel(Transformer module, double z_loss,
                                         double label_smoothing,
                                         LossNormalizingFactor loss_normalizing_factor)
    : BaseTransformerModel(z_loss, label_smoothing, loss_normalizing_factor,
                           decoding::DecodeFnConfig::Kind::kBeamSearch),
      module_(std::move(module)) {}

PredictionsWithAux EncoderDecoderModel::PredictBatchWithAux(
    const ParamStore& params, const FeatureBatch& batch, at::Generator* rng,
    std::optional<bool> return_all_decodes, std::optional<int64_t> num_decodes,
    bool prompt_with_targets) const {
  const bool all = return_all_decodes.value_or(default_decoder_params_.return_all_decodes);
  const int64_t decodes = num_decodes.value_or(default_decoder_params_.num_decodes);
  T5XX_CHECK(decodes >= 1, "predict_batch_with_aux needs num_decodes >= 1, got " +
                               std::to_string(decodes));
  const at::Tensor encoder_tokens = RequireFeature(batch, "encoder_input_tokens").to(at::kLong);
  const at::Tensor decoder_tokens = RequireFeature(batch, "decoder_input_tokens").to(at::kLong);
  T5XX_CHECK(encoder_tokens.dim() == 2 && decoder_tokens.dim() == 2 &&
                 encoder_tokens.size(0) == decoder_tokens.size(0),
             "encoder_input_tokens and decoder_input_tokens must be [batch, length] of one batch");
  const at::NoGradGuard no_grad;
  // t5x: the prompt is decoder_input_tokens with the EOS stripped, so that
  // decoding does not stop after it.
  const at::Tensor prompt = prompt_with_targets
                                ? decoder_tokens * (decoder_tokens != eos_id())
                                : at::zeros_like(decoder_tokens);
  const at::Tensor encoded =
      module_.Encode(params, encoder_tokens, at::Tensor(), /*train=*/false, nullptr);
  decoding::Cache cache = InitEncoderDecoderCache(module_, params, encoded, encoder_tokens,
                                                  decoder_tokens.size(1), use_decode_cache());
  const decoding::TokensToLogits step = [&](decoding::DecodingState& state) {
    return EncoderDecoderDecodeStep(module_, params, state.cur_token, *state.cache);
  };
  const decoding::DecodeResult r =
      decoding::Decode(decode_fn(), prompt, std::move(cache), step, eos_id(), decodes, rng);
  // The decodes are ascending by score: the best is the last.
  if (all) return {r.sequences, {{"scores", r.scores}}};
  return {r.sequences.select(1, -1), {{"scores", r.scores.select(1, -1)}}};
}

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
