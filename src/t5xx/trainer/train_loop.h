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
// trainer.py; see MetricsAccumulator in train_metrics.h; actions in
// train_actions.h) and go, per collection, to
// MODEL_DIR/train/ and MODEL_DIR/training_eval/<task>/ as TensorBoard event
// files and metrics.jsonl (MetricsWriter), plus a progress line on the
// console. The operative gin config is written to MODEL_DIR/train/ as the
// text summary "config" at the start step (t5x's summarize_gin_config).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "t5xx/checkpoints/save_best.h"
#include "t5xx/trainer/checkpoint_io.h"
#include "t5xx/trainer/gin_markdown.h"
#include "t5xx/trainer/train_actions.h"
#include "t5xx/trainer/train_metrics.h"
#include "t5xx/trainer/trainer.h"

namespace t5xx::trainer {

// Returns the next global batch, or nullopt when the stream is exhausted.
using BatchFn = std::function<std::optional<models::FeatureBatch>()>;

// t5x's train_eval_datasets: (task name, a function that starts the task's
// eval stream from its beginning), in evaluation order. For a mixture t5x
// evaluates every sub-task having the split, then the mixture itself
// (utils.get_training_eval_datasets).
using EvalDatasets = std::vector<std::pair<std::string, std::function<BatchFn()>>>;

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
  // utils.SaveCheckpointConfig.keep_dataset_checkpoints: dataset states
  // kept (newest first); None = all.
  std::optional<int64_t> keep_dataset_checkpoints;
  // checkpoints.Checkpointer.force_keep_period: `keep` never deletes a
  // checkpoint whose step is a multiple of it.
  std::optional<int64_t> force_keep_period;
  // checkpoints.SaveBestCheckpointer (utils.SaveCheckpointConfig.
  // checkpointer_cls): `keep` keeps the best by a metric of the run's
  // summaries in model_dir, and the newest (save_best.h).
  std::optional<checkpoints::SaveBestConfig> save_best;
  // utils.SaveCheckpointConfig.checkpoint_steps: also save after these steps.
  std::vector<int64_t> checkpoint_steps;
  // utils.SaveCheckpointConfig.dtype: the dtype parameters are saved in.
  SaveDType save_dtype = SaveDType::kFloat32;
  // train.use_orbax: checkpoints in Orbax's layout (checkpoints.h
  // CheckpointFormat::kOrbax) rather than t5x's legacy one.
  bool use_orbax = false;
  // scalable_t5's scan_layers = True: checkpoints in t5x's scanned layout
  // (one process only).
  std::optional<checkpoints::ScanLayout> scan_layout;
  // Write checkpoints in the background (training blocks only while the
  // state is copied); false = block until each checkpoint is committed.
  bool async_checkpoints = true;
  // Runs after each checkpoint this process committed, on the background
  // save thread (checkpoints::AsyncCheckpointer's after_commit): e.g.
  // publishing it to MODEL_DIR's bucket. Its error fails the save.
  std::function<void(checkpoints::WriteResult&)> after_commit;
  // The train data pipeline's dataset state files to save with each
  // checkpoint: checkpoints::DatasetStateFileName(data shard, shards) ->
  // that shard's position after the batches consumed so far (JSON text).
  // Called by every process at every save, with all_processes = true (it
  // may gather every data shard's position to the chief: a collective),
  // or false when one process saves after its own error (then only this
  // process's shard, no collective). The chief writes what it returns.
  // Empty = none saved.
  std::function<std::vector<checkpoints::ExtraFile>(bool all_processes)> data_state_files;
  // Called by the chief before each save with the step and the parameters
  // (e.g. prompt-tuning's numpy checkpoint of the prompt). Unset: nothing.
  std::function<void(int64_t step, const models::ParamStore& params)> before_save;
  // This process's data shard (names its dataset state file).
  int process_index = 0;
  int process_count = 1;
  // The batches are this process's data shard's (t5xx train: global batch /
  // data axis size rows, Trainer::TrainStepOnLocalBatch and
  // EvalStepOnLocalBatch) rather than the global batch every process is
  // given (Trainer::TrainStep / EvalStep keep their rows).
  bool local_batches = false;
  // How a batch is counted for the timing and data metrics (seqs, tokens,
  // padding); empty = CountBatch. With local_batches, one that sums the
  // counts over the data axis makes them the global batch's.
  std::function<BatchCounts(const models::FeatureBatch&)> count_batch;
  // Whether this process writes MODEL_DIR's summaries. False on every
  // process but rank 0. Without a `communicator` of several processes it
  // also decides who saves checkpoints (one copy of a replicated state).
  bool chief = true;
  // Several processes: every one takes part in each save, writing the
  // boxes of the variables it is the primary replica of and its dataset
  // state (SnapshotShardedTrainState, Trainer::DescribeVariables()); rank 0
  // commits. Null or one process: the chief saves everything.
  std::shared_ptr<const partitioning::Communicator> communicator;
  // How long rank 0 waits for the other processes' parts of a checkpoint.
  double checkpoint_wait_seconds = 600;
  int64_t eval_steps = 10;               // batches per train-eval dataset
  std::optional<int64_t> eval_period;    // None = evaluate only at the end
  bool run_eval_before_training = false;
  // t5x's inference evaluation (train.infer_eval_dataset_cfg): called with
  // the step whenever the train-eval runs (every eval_period, at the end,
  // and before training with run_eval_before_training), after it; returns
  // task -> metric -> value for the INFER_EVAL actions; unset = none. Its
  // errors end the run like a train-eval error.
  std::function<std::map<std::string, std::map<std::string, double>>(int64_t step)> infer_eval;
  std::vector<ActionConfig> train_actions;       // actions['TRAIN']
  std::vector<ActionConfig> train_eval_actions;  // actions['TRAIN_EVAL']
  // actions['INFER_EVAL'], run on infer_eval's metrics (their tasks are
  // checked against the evaluator's before the loop: ValidateAction).
  std::vector<ActionConfig> infer_eval_actions;
  // Throw t5xx::Error when a train step's loss is NaN or infinite (false
  // when the optimizer skips such updates, Adafactor.skip_nan_updates).
  bool stop_on_nan = true;
  // The operative gin config, written as the text summary "config" (Markdown
  // as gin.markdown makes it); empty = none.
  std::string operative_config;
  // A launcher's restart of the whole job (t5xx launch --max_restarts,
  // torchrun's TORCHELASTIC_RESTART_COUNT): the count (0: the first start)
  // and the failure that caused it, written at the start step as the
  // scalar `restarts` and the text summary `restart`.
  int restart_count = 0;
  std::string restart_cause;
  // Model FLOPs of one train step (models/flops.h) and the peak FLOP/s
  // timing/mfu divides by (run/train.cc: --peak_flops_per_s, a GPU's data
  // sheet, or matmul_peak_cache.h's best measured); 0 = not reported.
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
  // SIGTERM or SIGINT (util/system/stop_signals.h) stopped the run after the step
  // in `steps`, whose state was saved when saving is on; 0 = none. With
  // several processes every one stops after the same step (the signal
  // reached one of them: stop_elsewhere when not this one; stop_signal is
  // then SIGTERM).
  int stop_signal = 0;
  bool stop_elsewhere = false;
  double train_seconds = 0;
};

// Runs the loop. Checkpoints are written in the background
// (config.async_checkpoints); the loop reports each one when it is committed
// (timing/checkpoint_seconds = the blocking copy, as t5x reports its save
// time; timing/checkpoint_write_seconds = the background write) and waits
// for the last one before returning. A SIGTERM/SIGINT received while
// StopSignalReceived() is installed ends the loop after the current step,
// with a checkpoint of that step. Errors part-way (data, I/O, a failed
// background save) first save the last completed step when its state is
// sound. Throws t5xx::Error (naming the gin keys) for inconsistent
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

// Runs `max_batches` eval steps (fewer if the stream ends) on `next` and
// returns their accumulated metrics (no steps if the stream was empty).
// local_batches, count_batch: as in TrainLoopConfig.
MetricsAccumulator Evaluate(const Trainer& trainer, const BatchFn& next, int64_t max_batches,
                            bool local_batches = false,
                            const std::function<BatchCounts(const models::FeatureBatch&)>&
                                count_batch = nullptr);

}  // namespace t5xx::trainer
