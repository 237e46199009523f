// The model interface the trainer and inference drive:
// t5x.models.BaseTransformerModel (t5x/models.py) — parameters, the
// teacher-forced loss of a batch of model features, the FLOPs of a training
// step for MFU, and inference: predict_batch(_with_aux) (decoding with the
// model's decode_fn) and score_batch. EncoderDecoderModel and
// DecoderOnlyModel implement it.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "t5xx/data/feature_converters/feature_converters.h"
#include "t5xx/decoding/decoding.h"
#include "t5xx/models/losses.h"
#include "t5xx/models/param_store.h"

namespace t5xx::models {

// Model features by seqio name: int64 token/segment/position tensors [B, L],
// float32 decoder_loss_weights [B, L].
using FeatureBatch = std::map<std::string, at::Tensor>;

// batch[key]; throws std::invalid_argument "model feature '<key>' is missing
// from the batch" when absent.
const at::Tensor& RequireFeature(const FeatureBatch& batch, const std::string& key);
// batch[key], or an undefined tensor when absent (e.g. the segment ids of an
// unpacked batch).
at::Tensor OptionalFeature(const FeatureBatch& batch, const std::string& key);

// task_feature_lengths[feature], 0 when absent.
int64_t TaskLength(const std::map<std::string, int64_t>& task_feature_lengths,
                   const std::string& feature);

// t5x's predict_batch_with_aux result (predictions, aux).
struct PredictionsWithAux {
  // int64: the best decode [B, L], or every decode [B, num_decodes, L]
  // ascending by score (best last) with return_all_decodes; 0 after EOS.
  at::Tensor predictions;
  // "scores": float32 [B] or [B, num_decodes], the decodes' scores
  // (decoding.h DecodeResult::scores).
  std::map<std::string, at::Tensor> aux;
};

// t5x's score_batch result.
struct ScoreBatchOutput {
  // float32 [B]: sum over positions of log p(decoder_target_tokens) *
  // decoder_loss_weights.
  at::Tensor sequence_scores;
  // return_intermediates only (t5x's intermediates['decoder'][...]):
  // "decoder.target_tokens", "decoder.loss_weights" (the batch's) and
  // "decoder.token_scores" (float32 [B, L], the weighted per-token
  // log-likelihoods that sequence_scores sums).
  std::map<std::string, at::Tensor> intermediates;
};

class BaseTransformerModel {
 public:
  // `default_decode`: the model class's default decode_fn in t5x
  // (EncoderDecoderModel: beam search; DecoderOnlyModel: temperature
  // sampling), with its default options.
  BaseTransformerModel(double z_loss, double label_smoothing,
                       LossNormalizingFactor loss_normalizing_factor,
                       decoding::DecodeFnConfig::Kind default_decode)
      : z_loss_(z_loss),
        label_smoothing_(label_smoothing),
        loss_normalizing_factor_(loss_normalizing_factor) {
    decode_fn_.kind = default_decode;
  }
  virtual ~BaseTransformerModel() = default;

  // t5x's class name, e.g. "EncoderDecoderModel".
  virtual std::string name() const = 0;

  // Fresh float32 parameters with t5x's initialisers, deterministic in seed;
  // each kept as `placement` decides (param_store.h; null: whole).
  virtual ParamStore InitParams(uint64_t seed, const ParamPlacement* placement = nullptr) const = 0;
  // Every parameter's name, global shape and logical axes, without
  // allocating any (InitParams with SpecsOnlyPlacement).
  std::vector<ParamSpec> ParamSpecs() const;

  // Logits [B, L, vocab] (float32) for the batch; dropout (train) draws from
  // rng (null: libtorch's default generator).
  virtual at::Tensor ComputeLogits(const ParamStore& params, const FeatureBatch& batch,
                                   bool train, at::Generator* rng) const = 0;

  // t5x's FEATURE_CONVERTER_CLS: the seqio feature converter that turns
  // task examples (with these task feature lengths, e.g. {"inputs": 512,
  // "targets": 114}) into this model's features; `pack` as
  // utils.DatasetConfig.pack.
  virtual std::shared_ptr<seqio::FeatureConverter> CreateFeatureConverter(
      bool pack, const std::map<std::string, int64_t>& task_feature_lengths) const = 0;

  // The model-feature lengths that CreateFeatureConverter makes of these
  // task feature lengths, as TrainFlops and the memory plan take them (a
  // missing task feature counts 0).
  virtual std::map<std::string, int64_t> ModelFeatureLengths(
      const std::map<std::string, int64_t>& task_feature_lengths) const = 0;

  // Model FLOPs of one training step (3x forward, matmuls only; flops.h) for
  // a batch of these model-feature lengths (e.g. {"encoder_input_tokens":
  // 512, "decoder_target_tokens": 114}).
  virtual double TrainFlops(int64_t batch_size,
                            const std::map<std::string, int64_t>& lengths) const = 0;

  // t5x's loss_fn: cross-entropy with z-loss and label smoothing over
  // decoder_target_tokens, weighted by decoder_loss_weights (default: targets
  // > 0) and normalised by loss_normalizing_factor
  // (GetLossNormalizingFactorAndWeights; packed batches normalise
  // AVERAGE_PER_SEQUENCE per segment). `normalizing_factor` overrides the
  // factor (the trainer passes the whole batch's when it splits it into
  // microbatches, so that their gradients add up to the batch's).
  LossOutput Loss(const ParamStore& params, const FeatureBatch& batch, bool train,
                  at::Generator* rng = nullptr,
                  std::optional<double> normalizing_factor = std::nullopt) const;

  // The normalizing factor and weights of a batch (see Loss).
  NormalizedLossWeights LossWeights(const FeatureBatch& batch) const;

  // t5x's predict_batch: PredictBatchWithAux's predictions.
  at::Tensor PredictBatch(const ParamStore& params, const FeatureBatch& batch,
                          at::Generator* rng = nullptr) const {
    return PredictBatchWithAux(params, batch, rng).predictions;
  }

  // t5x's predict_batch_with_aux: decodes the batch with decode_fn() and
  // eos_id() (t5x's output_vocabulary.eos_id), drawing samples from rng
  // (null: libtorch's default generator; t5x's decode_rng). num_decodes:
  // beams or samples per example; return_all_decodes: return them all
  // rather than the best; unset: the model's defaults (t5x: False and 1, or
  // EncoderDecoderModel's default_decoder_params). prompt_with_targets:
  // EncoderDecoderModel only (see there). Inference only: no gradients,
  // no dropout. Throws std::invalid_argument naming a missing feature and
  // t5xx::Error for bad arguments.
  virtual PredictionsWithAux PredictBatchWithAux(
      const ParamStore& params, const FeatureBatch& batch, at::Generator* rng = nullptr,
      std::optional<bool> return_all_decodes = std::nullopt,
      std::optional<int64_t> num_decodes = std::nullopt,
      bool prompt_with_targets = false) const = 0;

  // t5x's score_batch: the log-likelihood of decoder_target_tokens under the
  // model (teacher-forced, no dropout, no z-loss, no label smoothing),
  // weighted by decoder_loss_weights (required, as in t5x) and summed per
  // sequence. Throws std::invalid_argument naming a missing feature.
  ScoreBatchOutput ScoreBatch(const ParamStore& params, const FeatureBatch& batch,
                              bool return_intermediates = false) const;

  // The decoding function with its arguments (t5x's decode_fn; gin binds it
  // as e.g. `EncoderDecoderModel.decode_fn = @decoding.beam_search`). The
  // default is t5x's: beam_search for EncoderDecoderModel,
  // temperature_sample (greedy with its defaults) for DecoderOnlyModel.
  const decoding::DecodeFnConfig& decode_fn() const { return decode_fn_; }
  void set_decode_fn(decoding::DecodeFnConfig decode_fn) { decode_fn_ = std::move(decode_fn); }
  // The end-of-sequence id decoding stops at (t5x: the output vocabulary's
  // eos_id, 1 for T5's vocabularies; the run layer sets it from the
  // vocabulary).
  int64_t eos_id() const { return eos_id_; }
  void set_eos_id(int64_t eos_id) { eos_id_ = eos_id; }
  // Whether decoding keeps attention keys and values in a cache (default;
  // one position per step) or reruns the decoder over the whole prefix at
  // every step (t5xx only; the same tokens, for tests and benchmarks).
  bool use_decode_cache() const { return use_decode_cache_; }
  void set_use_decode_cache(bool use) { use_decode_cache_ = use; }

  double z_loss() const { return z_loss_; }
  double label_smoothing() const { return label_smoothing_; }
  const LossNormalizingFactor& loss_normalizing_factor() const {
    return loss_normalizing_factor_;
  }

 private:
  double z_loss_;
  double label_smoothing_;
  LossNormalizingFactor loss_normalizing_factor_;
  decoding::DecodeFnConfig decode_fn_;
  int64_t eos_id_ = 1;
  bool use_decode_cache_ = true;
};

}  // namespace t5xx::models
