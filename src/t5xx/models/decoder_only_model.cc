// DecoderOnlyModel -- the implementation of decoder_only_model.h.
#include "t5xx/models/decoder_only_model.h"

#include "t5xx/models/decoder_only_decoding.h"
#include "t5xx/models/flops.h"
#include <ATen/core/grad_mode.h>
#include "t5xx/util/error.h"

namespace t5xx::models {

DecoderOnlyModel::DecoderOnlyModel(DecoderOnlyTransformer module,
                                   bool inputs_bidirectional_attention, double z_loss,
                                   double label_smoothing,
                                   LossNormalizingFactor loss_normalizing_factor)
    : BaseTransformerModel(z_loss, label_smoothing, loss_normalizing_factor,
                           decoding::DecodeFnConfig::Kind::kTemperatureSample),
      module_(std::move(module)),
      inputs_bidirectional_attention_(inputs_bidirectional_attention) {}

PredictionsWithAux DecoderOnlyModel::PredictBatchWithAux(
    const ParamStore& params, const FeatureBatch& batch, at::Generator* rng,
    std::optional<bool> return_all_decodes, std::optional<int64_t> num_decodes,
    bool prompt_with_targets) const {
  T5XX_CHECK(!prompt_with_targets,
             "DecoderOnlyModel.predict_batch_with_aux has no prompt_with_targets: its prompt "
             "is the batch's inputs, marked by decoder_causal_attention");
  const int64_t decodes = num_decodes.value_or(1);
  T5XX_CHECK(decodes >= 1, "predict_batch_with_aux needs num_decodes >= 1, got " +
                               std::to_string(decodes));
  T5XX_CHECK(batch.count("decoder_causal_attention"),
             "DecoderOnlyModel decoding needs the batch's decoder_causal_attention (which "
             "positions are the prompt): give the task both 'inputs' and 'targets' feature "
             "lengths so that its feature converter is the PrefixLMFeatureConverter");
  const at::Tensor causal = batch.at("decoder_causal_attention").to(at::kLong);
  // t5x: decoder_input_tokens is shifted right and decoder_causal_attention
  // has one more 1 than the inputs, so the product keeps BOS + the inputs.
  const at::Tensor inputs =
      RequireFeature(batch, "decoder_input_tokens").to(at::kLong) * causal;
  const at::NoGradGuard no_grad;
  PrefilledCache prefilled = PrefillDecoderOnlyCache(
      module_, params, inputs, causal, inputs_bidirectional_attention_, use_decode_cache());
  decoding::DecodeFnConfig fn = decode_fn();
  fn.temperature_sample.initial_index = prefilled.initial_index;
  fn.beam_search.initial_index = prefilled.initial_index;
  const decoding::TokensToLogits step = [&](decoding::DecodingState& state) {
    return DecoderOnlyDecodeStep(module_, params, state.cur_token, *state.cache);
  };
  const decoding::DecodeResult r =
      decoding::Decode(fn, inputs, std::move(prefilled.cache), step, eos_id(), decodes, rng);
  // The decodes are ascending by score: the best is the last.
  if (return_all_decodes.value_or(false)) {
    return {RemovePrefix(r.sequences, prefilled.initial_index), {{"scores", r.scores}}};
  }
  return {RemovePrefix(r.sequences.select(1, -1), prefilled.initial_index),
          {{"scores", r.scores.select(1, -1)}}};
}

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
