// The training loop of t5x's train() (t5x/train.py), single-process:
//
//  * the run ends at total_steps, or at start + relative_steps when
//    relative_steps is set (t5x: "If this is set, total_steps is ignored");
//    the start step is the trainer's step (0 for a fresh run);
//  * steps are grouped in t5x's artificial "epochs" of
//    min(eval_period, checkpoint period) steps (the whole run when neither is
//    set); eval_period and the checkpoint period must be multiples of that
//    (t5x raises ValueError otherwise);
//  * within an epoch, metrics are summarized every stats_period steps (None:
//    once per epoch, as t5x) and at the epoch's end;
//  * at the end of an epoch whose step is a multiple of the checkpoint
//    period, and of the last epoch, a checkpoint is saved; then, at a
//    multiple of eval_period and at the end, the teacher-forced train-eval
//    runs over eval_steps batches of each train-eval dataset;
//  * run_eval_before_training evaluates once at the start step; with a
//    checkpoint period a checkpoint is saved at the start step (t5x's
//    "Saving checkpoint before the training loop starts");
//  * actions (t5x's trainer.EarlyStoppingAction / TerminateOnNanAction) run
//    on the train summaries (mode TRAIN) or the train-eval summaries
//    (TRAIN_EVAL) and may stop training.
//
// Metrics use t5x's names and definitions (models.compute_base_metrics,
// trainer.py; see MetricsAccumulator) and go, per collection, to
// MODEL_DIR/train/ and MODEL_DIR/training_eval/<task>/ as TensorBoard event
// files and metrics.jsonl (MetricsWriter), plus a progress line on the
// console. The operative gin config is written to MODEL_DIR/train/ as the
// text summary "config" at the start step (t5x's summarize_gin_config).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "t5xx/trainer/trainer.h"

namespace t5xx::trainer {

// Returns the next global batch, or nullopt when the stream is exhausted.
using BatchFn = std::function<std::optional<models::FeatureBatch>()>;

// t5x's train_eval_datasets: (task name, a function that starts the task's
// eval stream from its beginning), in evaluation order. For a mixture t5x
// evaluates every sub-task having the split, then the mixture itself
// (utils.get_training_eval_datasets).
using EvalDatasets = std::vector<std::pair<std::string, std::function<BatchFn()>>>;

// One of t5x's trainer actions (t5x/trainer.py), run after a train summary
// (mode TRAIN; metrics keyed by task "train") or after a train-eval
// (TRAIN_EVAL; keyed by eval task name). Returns true to stop training.
struct ActionConfig {
  enum class Kind { kEarlyStopping, kTerminateOnNan };
  Kind kind = Kind::kEarlyStopping;
  std::string gin_name;  // for messages, e.g. "trainer.EarlyStoppingAction"
  std::string task;      // metric = (task, metric) in t5x
  std::string metric = "loss";
  // EarlyStoppingAction only.
  std::string mode = "min";  // "min" or "max"
  int64_t patience = 3;
  double atol = 0, rtol = 0;
};

struct TrainLoopConfig {
  std::string model_dir;
  int64_t total_steps = 0;               // the step to stop after (absolute)
  std::optional<int64_t> relative_steps;  // set: stop at start + this
  // Steps between summaries; None = t5x's default, once per epoch.
  std::optional<int64_t> stats_period;
  // utils.CheckpointConfig.save: false = no checkpoints at all (save=None).
  bool save_checkpoints = true;
  // utils.SaveCheckpointConfig.period; None = save once, at the end (t5xx;
  // t5x saves nothing without a period).
  std::optional<int64_t> checkpoint_period;
  // utils.SaveCheckpointConfig.keep: after each save, delete the oldest
  // checkpoint_<N> directories beyond this many. None = keep all.
  std::optional<int64_t> keep;
  int64_t eval_steps = 10;               // batches per train-eval dataset
  std::optional<int64_t> eval_period;    // None = evaluate only at the end
  bool run_eval_before_training = false;
  std::vector<ActionConfig> train_actions;       // actions['TRAIN']
  std::vector<ActionConfig> train_eval_actions;  // actions['TRAIN_EVAL']
  // Throw t5xx::Error when a train step's loss is NaN or infinite (false
  // when the optimizer skips such updates, Adafactor.skip_nan_updates).
  bool stop_on_nan = true;
  // The operative gin config, written as the text summary "config" (Markdown
  // as gin.markdown makes it); empty = none.
  std::string operative_config;
  // Model FLOPs of one train step (models/flops.h) and the measured peak
  // FLOP/s (MeasureMatmulPeakFlops); 0 = not reported.
  double train_flops_per_step = 0;
  double peak_flops_per_second = 0;
  int64_t num_devices = 1;  // for t5x's timing/*_per_core
};

struct TrainResult {
  int64_t start_step = 0;
  int64_t steps = 0;  // the step reached
  // loss_per_nonpadding_target_token of the first and the last train summary.
  double first_loss_per_token = 0;
  double last_loss_per_token = 0;
  // The last train-eval summary of each task (t5x metric name -> value).
  std::map<std::string, std::map<std::string, double>> eval;
  std::string checkpoint_dir;  // the last checkpoint saved; empty if none
  bool stopped_early = false;  // an action requested stop_training
  double train_seconds = 0;
};

// Runs the loop. Throws t5xx::Error (naming the gin keys) for inconsistent
// periods, total_steps below the start step, an action naming an unknown
// task or metric; when the train stream ends before the last step (naming the
// step); when a train loss is NaN/Inf with stop_on_nan (naming the step and
// the last checkpoint, which is left as it was); or from checkpoint and
// summary I/O.
TrainResult RunTrainLoop(Trainer& trainer, const BatchFn& next_train_batch,
                         const EvalDatasets& eval_datasets,
                         const TrainLoopConfig& config, std::ostream& console);

// The checks RunTrainLoop starts with, for callers that want them before
// writing anything: relative_steps/keep/periods >= 1, total steps (after
// relative_steps) not below `start_step`, eval_period and the checkpoint
// period multiples of each other (t5x), and each action's task among the
// summaries of its mode ("train" for TRAIN, `eval_task_names` for
// TRAIN_EVAL), metric a t5x metric name, mode/patience/atol/rtol valid.
// Throws t5xx::Error naming the gin key.
void CheckTrainLoopConfig(const TrainLoopConfig& config,
                          const std::vector<std::string>& eval_task_names, int64_t start_step);

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
  void Add(const StepMetrics& m, const BatchCounts& counts);
  int64_t steps() const { return steps_; }
  // Throws std::logic_error when no step was added.
  std::map<std::string, double> Compute(double seconds, int64_t num_devices = 1,
                                        double flops_per_step = 0,
                                        double peak_flops_per_second = 0) const;

 private:
  bool train_;
  int64_t steps_ = 0, examples_ = 0, target_tokens_ = 0;
  double loss_ = 0, z_loss_ = 0, weights_ = 0, correct_ = 0, lr_sum_ = 0, lr_last_ = 0;
  std::map<std::string, BatchCounts::Feature> features_;
};

// Runs `max_batches` eval steps (fewer if the stream ends) on `next` and
// returns their accumulated metrics (no steps if the stream was empty).
MetricsAccumulator Evaluate(const Trainer& trainer, const BatchFn& next, int64_t max_batches);

// gin.markdown(config_str) (gin/config.py): comment lines lose their "# "
// ("====" rules become empty, "None" becomes "    # None.", a line ending in
// ':' becomes a "#### " header); every other line is indented by 4 spaces.
std::string GinMarkdown(const std::string& config_str);

// The best float32 matmul rate of `repeats` [n, n] x [n, n] at::matmul calls
// (2 n^3 FLOPs each) on `device`, in FLOP/s, after one warm-up call — the
// peak MFU is measured against (as bench/train_bench.cc's BM_MatmulPeak).
double MeasureMatmulPeakFlops(int64_t n = 2048, int repeats = 5,
                              at::Device device = at::kCPU);

}  // namespace t5xx::trainer
