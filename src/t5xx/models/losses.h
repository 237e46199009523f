// t5x's losses (t5x/losses.py): cross-entropy with z-loss and label
// smoothing, summed over tokens and divided by a loss normalizing factor.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace t5xx::models {

// How the summed loss is normalised (t5x's loss_normalizing_factor and
// SpecialLossNormalizingFactor): kNone = raw sum; kConstant = divide by
// `constant`; kNumRealTargetTokens = divide by sum(weights);
// kNumTotalTargetTokens = divide by numel(targets); kAveragePerSequence =
// each sequence's (packed: each segment's) weights are scaled to sum to 1 and
// the sum is divided by the number of sequences with weight.
struct LossNormalizingFactor {
  enum class Kind {
    kNone,
    kConstant,
    kNumRealTargetTokens,
    kNumTotalTargetTokens,
    kAveragePerSequence
  };
  Kind kind = Kind::kNone;
  double constant = 1.0;

  // Parses a gin value's text form: "None", a positive number, or one of
  // NUM_REAL_TARGET_TOKENS / NUM_TOTAL_TARGET_TOKENS / AVERAGE_PER_SEQUENCE.
  // Throws t5xx::Error naming `where` and the accepted values otherwise.
  static LossNormalizingFactor Parse(const std::string& text,
                                     const std::string& where);
  std::string ToString() const;
};

struct LossOutput {
  at::Tensor loss;             // scalar: (sum of cross_ent + z_loss) / factor
  at::Tensor z_loss;           // scalar, part of `loss`, detached
  at::Tensor cross_ent_loss;   // scalar: loss - z_loss, detached
  at::Tensor weight_sum;       // scalar: sum(weights)
  at::Tensor correct;          // scalar: sum(weights * (argmax == target))
  at::Tensor per_token_loss;   // [B, L] cross-entropy + z-loss, unweighted
};

// t5x's get_loss_normalizing_factor_and_weights (t5x/losses.py): the
// per-token weights to use and the number to divide the summed loss by.
// weights: float32 [B, L] or undefined (then targets > 0); segment_ids: int
// [B, L] of a packed batch or undefined. For kAveragePerSequence the weights
// are divided by their sum per row (packed: per (row, segment id); t5x's
// _sum_weights_per_segment), 0/0 becoming 0, and the factor is the sum of the
// new weights; kNone gives factor 1.
struct NormalizedLossWeights {
  at::Tensor weights;   // float32 [B, L]
  double factor = 1.0;  // > 0
};
// compute_factor = false leaves factor at 1 without reading a sum back to
// the host (callers that know the factor already, e.g. the trainer's global
// one, so that a step on a GPU never waits for it).
NormalizedLossWeights GetLossNormalizingFactorAndWeights(
    const LossNormalizingFactor& factor, const at::Tensor& targets,
    const at::Tensor& weights, const at::Tensor& segment_ids = at::Tensor(),
    bool compute_factor = true);

// How the vocabulary dimension of the logits is split (vocabulary-parallel
// cross-entropy, Megatron-LM's VocabParallelCrossEntropy): these logits hold
// columns [offset, offset + logits.size(-1)) of `vocab_size`, and the two
// reductions complete a per-token partial [B, L] over every piece. Unset
// (vocab_size 0): the logits hold the whole vocabulary.
struct VocabPartition {
  int64_t offset = 0;
  int64_t vocab_size = 0;
  // The sum over the pieces; differentiable, with the gradient passed
  // through unchanged (every piece's holder computes the same loss).
  std::function<at::Tensor(const at::Tensor&)> sum;
  // The elementwise maximum over the pieces; no gradient.
  std::function<at::Tensor(const at::Tensor&)> max;
  bool split() const { return vocab_size > 0; }
};

// logits: float32 [B, L, V]; targets: int64 [B, L]; weights: float32 [B, L]
// (0 for padding). Per token: loss = -sum_v soft_target_v * log_softmax_v -
// normalizing_constant + z_loss * logsumexp^2, where soft targets put
// 1 - label_smoothing on the target and label_smoothing / (V - 1) elsewhere
// and normalizing_constant is the soft targets' entropy term (t5x's
// compute_weighted_cross_entropy). Differentiable in logits.
// The loss is divided by `normalizing_factor` (> 0). With a split
// `partition`, logits are this process's vocabulary columns and the result
// is the whole vocabulary's (the same on every piece's holder): logsumexp as
// max + log(sum(exp(logits - max))) with the max and the sum completed over
// the pieces, the target logit and the logits' sum completed by sums, and
// argmax as the first index of the global maximum.
LossOutput ComputeWeightedCrossEntropy(const at::Tensor& logits,
                                       const at::Tensor& targets,
                                       const at::Tensor& weights,
                                       double label_smoothing, double z_loss,
                                       double normalizing_factor,
                                       const VocabPartition& partition = {});

// The same after GetLossNormalizingFactorAndWeights(factor, targets, weights)
// (an unpacked batch: kAveragePerSequence normalises per row).
LossOutput ComputeWeightedCrossEntropy(const at::Tensor& logits,
                                       const at::Tensor& targets,
                                       const at::Tensor& weights,
                                       double label_smoothing, double z_loss,
                                       const LossNormalizingFactor& factor);

}  // namespace t5xx::models
