// EncoderDecoderModel: a T5 network plus its loss and its inference
// (predict_batch_with_aux, score_batch), as t5x.models.EncoderDecoderModel
// (t5x/models.py) — the object gin's MODEL macro builds.
#pragma once

#include "t5xx/models/base_model.h"
#include "t5xx/models/networks/network.h"

namespace t5xx::models {

// t5x.models.DecoderParams: EncoderDecoderModel's defaults for
// predict_batch_with_aux's return_all_decodes and num_decodes (gin:
// EncoderDecoderModel.default_decoder_params).
struct DecoderParams {
  bool return_all_decodes = false;
  int64_t num_decodes = 1;
};

class EncoderDecoderModel : public BaseTransformerModel {
 public:
  // decode_fn starts as t5x's default, decoding.beam_search.
  EncoderDecoderModel(Transformer module, double z_loss, double label_smoothing,
                      LossNormalizingFactor loss_normalizing_factor);

  std::string name() const override { return "EncoderDecoderModel"; }
  const Transformer& module() const { return module_; }

  ParamStore InitParams(uint64_t seed, const ParamPlacement* placement = nullptr) const override {
    return module_.InitParams(seed, placement);
  }
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
  // t5x's EncoderDecoderModel.predict_batch_with_aux: encodes
  // encoder_input_tokens once, then decodes decoder_input_tokens.shape[1]
  // positions with decode_fn() (decoding::Decode) over the decoding cache
  // (encoder_decoder_decoding.h), the encoder output's keys and values
  // computed once and expanded with the cache to num_decodes rows per
  // example. prompt_with_targets: decoder_input_tokens, EOS ids zeroed, are
  // the decoding inputs (teacher-forced where nonzero), else zeros. Needs
  // encoder_input_tokens and decoder_input_tokens (int64 [B, Le], [B, L]);
  // segment ids are not used (t5x encodes without them). Unset
  // return_all_decodes / num_decodes take default_decoder_params().
  PredictionsWithAux PredictBatchWithAux(const ParamStore& params, const FeatureBatch& batch,
                                         at::Generator* rng = nullptr,
                                         std::optional<bool> return_all_decodes = std::nullopt,
                                         std::optional<int64_t> num_decodes = std::nullopt,
                                         bool prompt_with_targets = false) const override;

  const DecoderParams& default_decoder_params() const { return default_decoder_params_; }
  void set_default_decoder_params(DecoderParams params) { default_decoder_params_ = params; }

  // lengths: encoder_input_tokens and decoder_target_tokens (flops.h).
  double TrainFlops(int64_t batch_size,
                    const std::map<std::string, int64_t>& lengths) const override;

 private:
  Transformer module_;
  DecoderParams default_decoder_params_;
};

}  // namespace t5xx::models
