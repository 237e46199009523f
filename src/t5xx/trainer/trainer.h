// t5x.trainer.Trainer: one optimisation step = forward, backward, gradient
// reduction through the partitioner, optimizer update (Adafactor or an optax
// optimizer, optim/optimizer.h) with the scheduled learning rate
// (t5x/trainer.py).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/optim/lr_schedule.h"
#include "t5xx/optim/optimizer.h"
#include "t5xx/partitioning/partitioner.h"

namespace t5xx::trainer {

// Metrics of one train or eval step, named as t5x logs them.
struct StepMetrics {
  double loss = 0;            // summed loss / loss_normalizing_factor
  double cross_ent_loss = 0;  // loss - z_loss
  double z_loss = 0;
  double weight_sum = 0;      // non-padding target tokens
  double correct = 0;         // correctly predicted target tokens
  // The rate the optimizer applied (learning_rate_fn(step) for Adafactor,
  // the optax optimizer's own rate otherwise); 0 for eval steps.
  double learning_rate = 0;
  int64_t target_tokens = 0;  // decoder positions incl. padding
  int64_t input_tokens = 0;   // encoder positions incl. padding
  double accuracy() const { return weight_sum > 0 ? correct / weight_sum : 0; }
  // Cross-entropy + z-loss per non-padding target token, independent of the
  // normalizing factor (t5x's loss_per_nonpadding_target_token).
  double loss_per_nonpadding_target_token = 0;
};

class Trainer {
 public:
  // num_microbatches: None or 1 today (gradient accumulation comes later);
  // other values are refused with t5xx::Error. The optimizer is initialised
  // for `params` unless it already is (e.g. restored). Throws t5xx::Error
  // from optimizer->Init.
  Trainer(const models::EncoderDecoderModel& model, models::ParamStore params,
          std::unique_ptr<optim::Optimizer> optimizer, optim::LearningRateSchedule schedule,
          const partitioning::PjitPartitioner& partitioner,
          std::optional<int64_t> num_microbatches = std::nullopt);
  // The same with an Adafactor.
  Trainer(const models::EncoderDecoderModel& model, models::ParamStore params,
          optim::Adafactor optimizer, optim::LearningRateSchedule schedule,
          const partitioning::PjitPartitioner& partitioner,
          std::optional<int64_t> num_microbatches = std::nullopt);

  // One training step on a global batch; returns its metrics.
  StepMetrics TrainStep(const models::FeatureBatch& batch);
  // Teacher-forced loss/accuracy without updating (train=false: no dropout).
  StepMetrics EvalStep(const models::FeatureBatch& batch) const;

  int64_t step() const { return optimizer_->step(); }
  const models::ParamStore& params() const { return params_; }
  const optim::Optimizer& optimizer() const { return *optimizer_; }

 private:
  const models::EncoderDecoderModel& model_;
  models::ParamStore params_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  optim::LearningRateSchedule schedule_;
  const partitioning::PjitPartitioner& partitioner_;
};

}  // namespace t5xx::trainer
