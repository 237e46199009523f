// t5x's train and train-eval metrics: per-batch counts, their accumulation
// over the steps of one summary (t5x/models.py compute_base_metrics, clu
// metrics merged in t5x/trainer.py). The peak FLOP/s MFU is measured against
// is matmul_peak.h's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "t5xx/trainer/trainer.h"

namespace t5xx::trainer {

// The per-batch counts t5x's compute_base_metrics derives from the batch.
struct BatchCounts {
  int64_t examples = 0;       // rows
  int64_t target_tokens = 0;  // decoder_target_tokens.size (padding included)
  struct Feature {
    int64_t non_padding = 0;      // segment id != 0
    int64_t size = 0;             // all positions
    int64_t packed_examples = 0;  // models.count_packed_examples
  };
  // By t5x's name: "encoder"/"decoder" from <name>_segment_ids (packed);
  // else "encoder_input_tokens"/"decoder_target_tokens" from tokens != 0.
  std::map<std::string, Feature> features;
};
BatchCounts CountBatch(const models::FeatureBatch& batch);

// t5x's models.count_packed_examples for a [B, L] integer tensor:
// #(nonzero first differences along L) + B - #(rows whose last id is 0).
int64_t CountPackedExamples(const at::Tensor& segment_ids);

// Accumulates step metrics the way t5x merges clu metrics over the steps of
// one summary, and computes them (names as in t5x; per-step averages divide
// by the number of steps, clu Averages divide the summed totals):
//   accuracy                               sum(correct) / sum(weights)
//   loss, z_loss                           sum(x) / steps
//   cross_ent_loss                         sum(loss - z_loss) / steps
//   loss_per_nonpadding_target_token       sum(loss) / sum(weights)
//   loss_per_all_target_tokens             sum(loss) / sum(target tokens)
//   z_loss_per_all_target_tokens,
//   cross_ent_loss_per_all_target_tokens   likewise
//   non_padding_fraction/loss_weights      sum(weights) / sum(target tokens)
//   non_padding_fraction/<feature>, /overall   non-padding / size
//   effective_batch_size/<feature>         sum(packed examples) / steps
//   timing/seconds                         the duration given (s)
//   timing/seqs                            sum(examples)
//   timing/steps_per_second, timing/seqs_per_second,
//   timing/target_tokens_per_second        (and *_per_core: / num_devices)
//   learning_rate                          mean of the steps' rates (train)
//   learning_rate/current                  the last step's rate (train)
//   timing/model_flops_per_second          t5xx: flops_per_step * steps / s
//   timing/mfu                             t5xx: model FLOP/s / peak FLOP/s
// "weights" are the loss weights (decoder_loss_weights), "loss" t5x's loss
// (summed over tokens, divided by loss_normalizing_factor).
class MetricsAccumulator {
 public:
  explicit MetricsAccumulator(bool train) : train_(train) {}
  // Steps whose metrics are still on a GPU (StepMetrics::pending) are kept
  // there until Compute or FirstNonFiniteLoss reads them all with one copy.
  void Add(const StepMetrics& m, const BatchCounts& counts);
  int64_t steps() const { return steps_; }
  // Throws std::logic_error when no step was added.
  std::map<std::string, double> Compute(double seconds, int64_t num_devices = 1,
                                        double flops_per_step = 0,
                                        double peak_flops_per_second = 0) const;
  // The first added step whose loss is NaN or infinite: its position among
  // the added steps (0-based) and its loss; nullopt when none.
  std::optional<std::pair<int64_t, double>> FirstNonFiniteLoss() const;
  // Whether any added step counted a stop request (StepMetrics::
  // stop_requests), reading pending steps as FirstNonFiniteLoss does.
  bool StopRequested() const;

 private:
  void AddValues(const StepMetrics& m) const;
  void ResolvePending() const;
  bool train_;
  int64_t steps_ = 0, examples_ = 0, target_tokens_ = 0;
  double lr_sum_ = 0, lr_last_ = 0;
  std::map<std::string, BatchCounts::Feature> features_;
  // Filled from each step's values, at Add or (pending steps) when read.
  mutable double loss_ = 0, z_loss_ = 0, weights_ = 0, correct_ = 0, stop_requests_ = 0;
  mutable std::optional<std::pair<int64_t, double>> first_non_finite_;
  mutable std::vector<std::pair<int64_t, StepMetrics>> pending_;  // (position, step)
};

// A metric value as the console lines print it (5 significant digits).
std::string FormatMetric(double v);

}  // namespace t5xx::trainer
