// t5x's losses (t5x/losses.py) -- the implementation of losses.h.
#include "t5xx/models/losses.h"

#include <ATen/core/grad_mode.h>
#include <cmath>
#include <cstdlib>

#include "t5xx/kernels/fused_logsumexp.h"
#include "t5xx/util/error.h"

namespace t5xx::models {

LossNormalizingFactor LossNormalizingFactor::Parse(const std::string& text,
                                                   const std::string& where) {
  LossNormalizingFactor f;
  std::string t = text;
  if (t.size() >= 2 && (t.front() == '\'' || t.front() == '"')) {
    t = t.substr(1, t.size() - 2);
  }
  if (t == "None" || t.empty()) return f;
  if (t == "NUM_REAL_TARGET_TOKENS") {
    f.kind = Kind::kNumRealTargetTokens;
    return f;
  }
  if (t == "NUM_TOTAL_TARGET_TOKENS") {
    f.kind = Kind::kNumTotalTargetTokens;
    return f;
  }
  if (t == "AVERAGE_PER_SEQUENCE") {
    f.kind = Kind::kAveragePerSequence;
    return f;
  }
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end != '\0' || !(v > 0.0)) {
    throw Error(where + ": loss_normalizing_factor must be None, a positive "
                "number, NUM_REAL_TARGET_TOKENS, NUM_TOTAL_TARGET_TOKENS or "
                "AVERAGE_PER_SEQUENCE; got '" + text + "'");
  }
  f.kind = Kind::kConstant;
  f.constant = v;
  return f;
}

std::string LossNormalizingFactor::ToString() const {
  switch (kind) {
    case Kind::kNone: return "None";
    case Kind::kConstant: return std::to_string(constant);
    case Kind::kNumRealTargetTokens: return "NUM_REAL_TARGET_TOKENS";
    case Kind::kNumTotalTargetTokens: return "NUM_TOTAL_TARGET_TOKENS";
    case Kind::kAveragePerSequence: return "AVERAGE_PER_SEQUENCE";
  }
  return "None";
}

NormalizedLossWeights GetLossNormalizingFactorAndWeights(const LossNormalizingFactor& factor,
                                                         const at::Tensor& targets,
                                                         const at::Tensor& weights,
                                                         const at::Tensor& segment_ids,
                                                         bool compute_factor) {
  at::NoGradGuard no_grad;
  NormalizedLossWeights out;
  out.weights = weights.defined() ? weights.to(at::kFloat) : (targets > 0).to(at::kFloat);
  using K = LossNormalizingFactor::Kind;
  switch (factor.kind) {
    case K::kNone: out.factor = 1.0; break;
    case K::kConstant: out.factor = factor.constant; break;
    case K::kNumRealTargetTokens:
      if (compute_factor) out.factor = out.weights.sum().item<double>();
      break;
    case K::kNumTotalTargetTokens: out.factor = static_cast<double>(targets.numel()); break;
    case K::kAveragePerSequence: {
      at::Tensor norm;
      if (segment_ids.defined()) {
        // Sum per (row, segment id), then read back at every position.
        at::Tensor seg = segment_ids.to(at::kLong);
        // Segment ids are at most the length (no read-back of the maximum,
        // which would wait for a GPU).
        const int64_t groups = seg.size(-1) + 1;
        at::Tensor sums = at::zeros({out.weights.size(0), groups}, out.weights.options())
                              .scatter_add_(1, seg, out.weights);
        // Padding (segment id 0) gets no weight, whatever its input weight.
        norm = sums.gather(1, seg) * (seg != 0).to(at::kFloat);
      } else {
        norm = out.weights.sum(-1, /*keepdim=*/true);
      }
      out.weights = at::nan_to_num(out.weights / norm, 0.0, 0.0, 0.0);
      if (compute_factor) out.factor = out.weights.sum().item<double>();
      break;
    }
  }
  // An all-padding batch under NUM_REAL_TARGET_TOKENS / AVERAGE_PER_SEQUENCE
  // has a zero factor and a zero loss; avoid 0/0.
  if (!(out.factor > 0.0)) out.factor = 1.0;
  return out;
}

LossOutput ComputeWeightedCrossEntropy(const at::Tensor& logits, const at::Tensor& targets,
                                       const at::Tensor& weights, double label_smoothing,
                                       double z_loss, const LossNormalizingFactor& factor) {
  NormalizedLossWeights w = GetLossNormalizingFactorAndWeights(factor, targets, weights);
  return ComputeWeightedCrossEntropy(logits, targets, w.weights, label_smoothing, z_loss,
                                     w.factor);
}

LossOutput ComputeWeightedCrossEntropy(const at::Tensor& logits,
                                       const at::Tensor& targets,
                                       const at::Tensor& weights,
                                       double label_smoothing, double z_loss,
                                       double normalizing_factor,
                                       const VocabPartition& partition) {
  T5XX_CHECK(normalizing_factor > 0.0, "loss normalizing factor must be positive, got " +
                                      std::to_string(normalizing_factor));
  const bool split = partition.split();
  const int64_t vocab = split ? partition.vocab_size : logits.size(-1);
  at::Tensor lse, target_logit, argmax;  // [B, L] each
  if (!split && FusedLogSumExpApplies(logits, targets)) {
    // float32 on the CPU: one read of the logits (fused_logsumexp.h).
    LogSumExpPieces pieces = FusedLogSumExp(logits, targets);
    lse = pieces.lse;
    target_logit = pieces.target_logit;
    argmax = pieces.argmax;
  } else if (!split) {
    lse = at::logsumexp(logits, {-1});
    target_logit = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1);
    argmax = logits.argmax(-1);
  } else {
    const int64_t n = logits.size(-1);
    const at::Tensor local_max = std::get<0>(logits.detach().max(-1));
    const at::Tensor m = partition.max(local_max);
    lse = m + at::log(partition.sum(at::exp(logits - m.unsqueeze(-1)).sum(-1)));
    const at::Tensor local = targets - partition.offset;
    const at::Tensor mine = at::logical_and(local >= 0, local < n);
    target_logit = partition.sum(
        logits.gather(-1, local.clamp(0, n - 1).unsqueeze(-1)).squeeze(-1) * mine.to(logits.dtype()));
    // The first index holding the global maximum (argmax's tie rule): each
    // piece offers its first maximal index, or vocab when it has none; the
    // smallest wins (a minimum as the negated maximum).
    const at::Tensor local_arg = logits.detach().argmax(-1) + partition.offset;
    const at::Tensor offer = at::where(local_max == m, local_arg, at::full_like(local_arg, vocab));
    argmax = -partition.max(-offer.to(at::kDouble));
    argmax = argmax.to(at::kLong);
  }
  at::Tensor ce;
  if (label_smoothing > 0.0) {
    const double confidence = 1.0 - label_smoothing;
    const double low = label_smoothing / static_cast<double>(vocab - 1);
    const double normalizing_constant =
        -(confidence * std::log(confidence) +
          static_cast<double>(vocab - 1) * low * std::log(low + 1e-20));
    // -sum_v q_v (logit_v - lse) = lse - low*sum_v logit_v
    //                              - (confidence - low) * logit_target
    at::Tensor sum_logits = split ? partition.sum(logits.sum({-1})) : logits.sum({-1});
    ce = lse - low * sum_logits - (confidence - low) * target_logit -
         normalizing_constant;
  } else {
    ce = lse - target_logit;
  }
  at::Tensor zl = z_loss * lse.pow(2);
  at::Tensor per_token = ce + zl;
  LossOutput out;
  at::Tensor total = (per_token * weights).sum();
  at::Tensor total_z = (zl * weights).sum();
  const double divisor = normalizing_factor;
  at::Tensor weight_sum = weights.sum();
  out.loss = total / divisor;
  out.z_loss = (total_z / divisor).detach();
  out.cross_ent_loss = (out.loss - out.z_loss).detach();
  out.weight_sum = weight_sum.detach();
  out.correct =
      ((argmax == targets).to(at::kFloat) * weights).sum().detach();
  out.per_token_loss = per_token.detach();
  return out;
}

}  // namespace t5xx::models
