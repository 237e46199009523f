// DecoderOnlyModel: a decoder-only network plus its loss and its inference
// (predict_batch_with_aux from a prompt, score_batch), as t5x.models.
// DecoderOnlyModel (t5x/models.py), trained on LMFeatureConverter (causal
// LM) or PrefixLMFeatureConverter (prefix LM) batches.
#pragma once

#include "t5xx/models/base_model.h"
#include "t5xx/models/networks/decoder_only_network.h"

namespace t5xx::models {

class DecoderOnlyModel : public BaseTransformerModel {
 public:
  // inputs_bidirectional_attention: as t5x, whether the batch's
  // decoder_causal_attention (prefix-LM inputs) is given to the network; when
  // false every position attends causally. decode_fn starts as t5x's
  // default, decoding.temperature_sample (greedy with its defaults).
  DecoderOnlyModel(DecoderOnlyTransformer module, bool inputs_bidirectional_attention,
                   double z_loss, double label_smoothing,
                   LossNormalizingFactor loss_normalizing_factor);

  std::string name() const override { return "DecoderOnlyModel"; }
  const DecoderOnlyTransformer& module() const { return module_; }
  bool inputs_bidirectional_attention() const { return inputs_bidirectional_attention_; }

  ParamStore InitParams(uint64_t seed, const ParamPlacement* placement = nullptr) const override {
    return module_.InitParams(seed, placement);
  }
  at::Tensor ComputeLogits(const ParamStore& params, const FeatureBatch& batch, bool train,
                           at::Generator* rng) const override;
  // t5x's DecoderOnlyModel.predict_batch_with_aux: the prompt is
  // decoder_input_tokens * decoder_causal_attention (the inputs of a
  // PrefixLMFeatureConverter batch); the cache is prefilled with it
  // (decoder_only_decoding.h) and decode_fn() continues every row from the
  // end of its own prompt (initial_index), up to decoder_input_tokens.shape[1]
  // positions in all. The predictions have the prompt removed and are
  // shifted left by its length (t5x's remove_prefix; RemovePrefix).
  // Unset return_all_decodes / num_decodes: false and 1, as t5x. Throws
  // t5xx::Error when decoder_causal_attention is missing or
  // prompt_with_targets is set (t5x's DecoderOnlyModel has no such
  // argument).
  PredictionsWithAux PredictBatchWithAux(const ParamStore& params, const FeatureBatch& batch,
                                         at::Generator* rng = nullptr,
                                         std::optional<bool> return_all_decodes = std::nullopt,
                                         std::optional<int64_t> num_decodes = std::nullopt,
                                         bool prompt_with_targets = false) const override;
  // lengths: decoder_target_tokens (flops.h).
  double TrainFlops(int64_t batch_size,
                    const std::map<std::string, int64_t>& lengths) const override;
  // seqio's DecoderFeatureConverter as t5x's DecoderOnlyModel uses it: the
  // prefix-LM converter when the task has 'inputs' lengths, else the LM
  // converter.
  std::shared_ptr<seqio::FeatureConverter> CreateFeatureConverter(
      bool pack, const std::map<std::string, int64_t>& task_feature_lengths) const override;
  // decoder_target_tokens = inputs + targets (the prefix-LM converter
  // concatenates them).
  std::map<std::string, int64_t> ModelFeatureLengths(
      const std::map<std::string, int64_t>& task_feature_lengths) const override;

 private:
  DecoderOnlyTransformer module_;
  bool inputs_bidirectional_attention_;
};

}  // namespace t5xx::models
