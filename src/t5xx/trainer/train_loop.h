// The training loop of t5x's train() (t5x/train.py), single-process for now:
// steps until total_steps, logs metrics every stats_period steps, saves
// checkpoints every checkpoint period and at the end, and evaluates the
// teacher-forced loss on the eval split every eval_period steps and at the
// end.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "t5xx/trainer/trainer.h"

namespace t5xx::trainer {

// Returns the next global batch, or nullopt when the stream is exhausted.
using BatchFn = std::function<std::optional<models::FeatureBatch>()>;

struct TrainLoopConfig {
  std::string model_dir;
  int64_t total_steps = 0;
  int64_t stats_period = 100;                 // log every N steps (>= 1)
  std::optional<int64_t> checkpoint_period;   // also always saved at the end
  int64_t eval_steps = 10;                    // batches per evaluation
  std::optional<int64_t> eval_period;         // also evaluate every N steps
  std::string eval_task_name = "eval";        // MODEL_DIR/training_eval/<name>
  double train_flops_per_step = 0;            // for reporting model FLOP/s
};

struct TrainResult {
  int64_t steps = 0;
  double first_loss_per_token = 0;  // loss_per_nonpadding_target_token, step 1
  double last_loss_per_token = 0;   // mean over the last stats period
  std::optional<StepMetrics> eval;  // token-weighted over the eval batches
  std::string checkpoint_dir;
  double train_seconds = 0;
};

// Runs the loop. make_eval may be empty (no eval). Throws t5xx::Error when
// the train stream ends before total_steps (naming the step), when a loss is
// NaN (naming the step), or from checkpoint I/O.
TrainResult RunTrainLoop(Trainer& trainer, const BatchFn& next_train_batch,
                         const std::function<BatchFn()>& make_eval,
                         const TrainLoopConfig& config, std::ostream& console);

// Token-weighted averages of eval metrics over a stream of batches (at most
// max_batches; -1 = all).
std::optional<StepMetrics> Evaluate(const Trainer& trainer, const BatchFn& next,
                                    int64_t max_batches);

}  // namespace t5xx::trainer
