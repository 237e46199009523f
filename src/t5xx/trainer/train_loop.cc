// The training loop of t5x's train(): epochs, summaries, checkpoints,
// train-eval and actions (see train_loop.h).
#include "t5xx/trainer/train_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <memory>
#include <sstream>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/device/cpu_caching_allocator.h"
#include "t5xx/storage/remote_copy.h"
#include "t5xx/trainer/checkpoint_io.h"
#include "t5xx/trainer/metrics_writer.h"
#include "t5xx/util/error.h"
#include "t5xx/util/system/stop_signals.h"

#include <csignal>

namespace t5xx::trainer {
namespace {

using Clock = std::chrono::steady_clock;
using Summary = std::map<std::string, double>;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// "1h02m03s", "2m05s", "7s".
std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  std::ostringstream out;
  out << std::setfill('0');
  if (s >= 3600) {
    out << s / 3600 << "h" << std::setw(2) << (s / 60) % 60 << "m" << std::setw(2) << s % 60 << "s";
  } else if (s >= 60) {
    out << s / 60 << "m" << std::setw(2) << s % 60 << "s";
  } else {
    out << s << "s";
  }
  return out.str();
}

}  // namespace

MetricsAccumulator Evaluate(const Trainer& trainer, const BatchFn& next, int64_t max_batches,
                            bool local_batches,
                            const std::function<BatchCounts(const models::FeatureBatch&)>&
                                count_batch) {
  MetricsAccumulator acc(/*train=*/false);
  while (max_batches < 0 || acc.steps() < max_batches) {
    std::optional<models::FeatureBatch> batch = next();
    if (!batch) break;
    const StepMetrics m =
        local_batches ? trainer.EvalStepOnLocalBatch(*batch) : trainer.EvalStep(*batch);
    acc.Add(m, count_batch ? count_batch(*batch) : CountBatch(*batch));
  }
  return acc;
}

void CheckTrainLoopConfig(const TrainLoopConfig& config,
                          const std::vector<std::string>& eval_task_names, int64_t start) {
  if (config.relative_steps) {
    T5XX_CHECK(*config.relative_steps >= 1, "train.relative_steps must be None or >= 1, got " +
                                           std::to_string(*config.relative_steps));
  }
  const int64_t total =
      config.relative_steps ? start + *config.relative_steps : config.total_steps;
  T5XX_CHECK(total >= start, "train.total_steps = " + std::to_string(total) +
                            " is below the start step " + std::to_string(start) +
                            " (the step of the restored checkpoint); raise train.total_steps "
                            "or set train.relative_steps");
  T5XX_CHECK(config.stats_period.value_or(1) >= 1,
        "train.stats_period must be None or >= 1, got " +
            std::to_string(config.stats_period.value_or(0)));
  T5XX_CHECK(config.eval_steps >= 1,
        "train.eval_steps must be >= 1, got " + std::to_string(config.eval_steps));
  T5XX_CHECK(config.eval_period.value_or(1) >= 1,
        "train.eval_period must be None or >= 1, got " +
            std::to_string(config.eval_period.value_or(0)));
  T5XX_CHECK(config.checkpoint_period.value_or(1) >= 1,
        "utils.SaveCheckpointConfig.period must be None or >= 1, got " +
            std::to_string(config.checkpoint_period.value_or(0)));
  T5XX_CHECK(config.keep.value_or(1) >= 1, "utils.SaveCheckpointConfig.keep must be None or >= 1, got " +
                                          std::to_string(config.keep.value_or(0)));
  const int64_t eval_period =
      eval_task_names.empty() && !config.infer_eval ? 0 : config.eval_period.value_or(0);
  const int64_t checkpoint_period =
      config.save_checkpoints ? config.checkpoint_period.value_or(0) : 0;
  if (eval_period && checkpoint_period) {
    const int64_t smaller = std::min(eval_period, checkpoint_period);
    T5XX_CHECK(eval_period % smaller == 0 && checkpoint_period % smaller == 0,
          "train.eval_period = " + std::to_string(eval_period) +
              " and utils.SaveCheckpointConfig.period = " + std::to_string(checkpoint_period) +
              " must be multiples of each other (t5x trains in \"epochs\" of the smaller "
              "period and raises ValueError otherwise); make the larger a multiple of the "
              "smaller");
  }
  for (const auto& a : config.train_actions) ValidateAction(a, "TRAIN", {"train"});
  for (const auto& a : config.train_eval_actions) {
    ValidateAction(a, "TRAIN_EVAL", eval_task_names);
  }
}

namespace {

// The checkpoint writer's options: t5x's legacy layout unless
// train.use_orbax.
checkpoints::SaveOptions SaveOptionsOf(const TrainLoopConfig& config) {
  checkpoints::SaveOptions o;
  if (config.use_orbax) o.format = checkpoints::CheckpointFormat::kOrbax;
  return o;
}

// One run of the loop: t5x's train() from the first step to the last, its
// writers, checkpointer and stop state. RunTrainLoop's steps are its methods.

class TrainLoop {
 public:
  TrainLoop(Trainer& trainer, const BatchFn& next_train_batch, const EvalDatasets& eval_datasets,
            const TrainLoopConfig& config, std::ostream& console)
      : trainer_(trainer),
        next_train_batch_(next_train_batch),
        eval_datasets_(eval_datasets),
        config_(config),
        console_(console),
        loop_start_(Clock::now()),
        start_(trainer.step()),
        checkpointer_(config.model_dir, SaveOptionsOf(config),
                      RetentionPolicyOf(config.keep, config.keep_dataset_checkpoints,
                                        config.force_keep_period, config.save_best, config.model_dir),
                      config.after_commit) {}

  TrainResult Run();

 private:
  void Plan();
  void OpenWriters();
  void WriteScalars(int64_t step, const Summary& scalars) {
    if (train_writer_) train_writer_->WriteScalars(step, scalars);
  }
  void ReportWrites(std::vector<checkpoints::WriteResult> done);
  void WaitForSaves() { ReportWrites(checkpointer_.Wait()); }
  void SaveCheckpoint();
  std::string LastCheckpoint() const;
  std::string SaveAfterError();
  [[noreturn]] void NanError(double value, int64_t step);
  void RunTrainEval();
  void RunStatsPeriod(int64_t inner);
  bool StopAfterStep(const StepMetrics& m);
  void AgreeToStop();
  void LogTrainLine(Summary& s);
  bool RunEpoch(int64_t epoch, int64_t first_epoch, int64_t num_epochs);

  Trainer& trainer_;
  const BatchFn& next_train_batch_;
  const EvalDatasets& eval_datasets_;
  const TrainLoopConfig& config_;
  std::ostream& console_;
  const Clock::time_point loop_start_;
  const int64_t start_;
  int64_t total_ = 0;
  bool eval_enabled_ = false;
  int64_t eval_period_ = 0, checkpoint_period_ = 0, steps_per_epoch_ = 0, stats_period_ = 0;
  std::vector<std::string> eval_names_;
  std::vector<Action> train_actions_, eval_actions_, infer_actions_;
  // t5x's MetricsManager("train") and ("training_eval/<task>"): only the
  // chief process writes MODEL_DIR (summaries, checkpoints); the others
  // compute the same global metrics and keep them to themselves.
  std::unique_ptr<MetricsWriter> train_writer_;
  std::map<std::string, std::unique_ptr<MetricsWriter>> eval_writers_;
  TrainResult result_;
  bool stop_training_ = false;
  // A TerminateOnNanAction stopped the run: the state is not saved (its
  // parameters are likely NaN); the last checkpoint stays the last good one.
  bool nan_stop_ = false;
  checkpoints::AsyncCheckpointer checkpointer_;
  std::optional<int64_t> last_saved_step_;  // committed or being written
  bool saving_after_error_ = false;         // save_after_error: no collectives
  bool sharded_saves_ = false;              // several processes: each saves its part
  bool several_processes_ = false;          // (the same: stops are agreed)
  int64_t host_step_ = 0;
  bool first_summary_ = true;
};

// The loop's periods (t5x's "epochs" of the smaller of eval and checkpoint
// period) and actions.
void TrainLoop::Plan() {
  for (const auto& [name, make] : eval_datasets_) eval_names_.push_back(name);
  CheckTrainLoopConfig(config_, eval_names_, start_);
  total_ = config_.relative_steps ? start_ + *config_.relative_steps : config_.total_steps;
  eval_enabled_ = !eval_datasets_.empty() || static_cast<bool>(config_.infer_eval);
  eval_period_ = eval_enabled_ ? config_.eval_period.value_or(0) : 0;
  checkpoint_period_ = config_.save_checkpoints ? config_.checkpoint_period.value_or(0) : 0;
  steps_per_epoch_ = total_;
  if (eval_period_ || checkpoint_period_) {
    steps_per_epoch_ =
        std::min(eval_period_ ? eval_period_ : std::numeric_limits<int64_t>::max(),
                 checkpoint_period_ ? checkpoint_period_ : std::numeric_limits<int64_t>::max());
  }
  stats_period_ = config_.stats_period.value_or(steps_per_epoch_);
  for (const auto& a : config_.train_actions) train_actions_.push_back({a, {}});
  for (const auto& a : config_.train_eval_actions) eval_actions_.push_back({a, {}});
  for (const auto& a : config_.infer_eval_actions) infer_actions_.push_back({a, {}});
  sharded_saves_ = config_.communicator && config_.communicator->size() > 1;
  several_processes_ = sharded_saves_;
}

// The chief's writers (see train_writer_) and the operative config as the
// text summary `config` at the start step.
void TrainLoop::OpenWriters() {
  if (!config_.chief) return;
  train_writer_ = std::make_unique<MetricsWriter>(config_.model_dir + "/train");
  for (const auto& name : eval_names_) {
    eval_writers_[name] = std::make_unique<MetricsWriter>(config_.model_dir + "/training_eval/" +
                                                          name.substr(0, 113));
  }
  if (!config_.operative_config.empty()) {
    train_writer_->WriteText("config", GinMarkdown(config_.operative_config), start_);
  }
  if (config_.restart_count > 0) {
    train_writer_->WriteScalars(start_, {{"restarts", static_cast<double>(config_.restart_count)}});
    train_writer_->WriteText("restart", "restart " + std::to_string(config_.restart_count) +
                                            " of the job, after: " + config_.restart_cause,
                             start_);
  }
}

// Reports saves the background writer finished.
void TrainLoop::ReportWrites(std::vector<checkpoints::WriteResult> done) {
  for (const checkpoints::WriteResult& w : done) {
    WriteScalars(w.step, {{"timing/checkpoint_write_seconds", w.seconds}});
    console_ << "[checkpoint] step " << w.step << " | "
             << (w.committed ? "committed " : "wrote this process's part of ") << WithUrls(w.dir) << " ("
             << FormatMetric(static_cast<double>(w.bytes) / (1024.0 * 1024.0)) << " MiB, "
             << FormatMetric(w.seconds) << " s in the background)";
    for (size_t i = 0; i < w.deleted.size(); ++i) {
      console_ << (i ? ", " : "; retention deleted ")
               << std::filesystem::path(w.deleted[i]).filename().string();
      if (w.deleted[i] != result_.checkpoint_dir) continue;
      // The newest may go (Orbax's rules): name the newest that stays.
      const std::vector<int64_t> kept = checkpoints::ListCheckpointSteps(config_.model_dir);
      result_.checkpoint_dir = kept.empty() ? "" : checkpoints::CheckpointDir(config_.model_dir, kept.back());
    }
    if (!w.note.empty()) console_ << "; " << w.note;
    console_ << std::endl;
  }
}

void TrainLoop::SaveCheckpoint() {
  const int64_t step = trainer_.step();
  if (last_saved_step_ == step) return;
  // Every process takes part in gathering the data shards' positions
  // (except when one saves after its own error); the chief writes them.
  std::vector<checkpoints::ExtraFile> extra;
  if (config_.data_state_files) extra = config_.data_state_files(!saving_after_error_);
  if (!config_.chief && !sharded_saves_) {  // the chief saves the (replicated) state
    last_saved_step_ = step;
    result_.checkpoint_dir = checkpoints::CheckpointDir(config_.model_dir, step);
    return;
  }
  std::error_code ec;  // (a sharded save: rank 0 checks, and tells every process)
  T5XX_CHECK(sharded_saves_ ||
                 !std::filesystem::exists(checkpoints::CheckpointDir(config_.model_dir, step), ec),
             "cannot save step " + std::to_string(step) + ": " +
                 checkpoints::CheckpointDir(config_.model_dir, step) +
                 " already exists and was not written by this run; move it out of MODEL_DIR");
  const auto t0 = Clock::now();
  // The snapshot's host buffers do not come from the tensor cache: hand the
  // step's freed activation and gradient blocks back first, so that the copy
  // reuses their pages instead of adding to them (models/memory_plan.h).
  device::EmptyCpuCache();
  if (!config_.chief) extra.clear();  // the chief writes the dataset states
  if (config_.chief && config_.before_save) config_.before_save(step, trainer_.params());
  checkpoints::PendingCheckpoint snapshot =
      sharded_saves_
          ? SnapshotShardedTrainState(config_.model_dir, trainer_.params(), trainer_.optimizer(),
                                      trainer_.DescribeVariables(), *config_.communicator,
                                      config_.save_dtype, std::move(extra),
                                      config_.checkpoint_wait_seconds)
          : SnapshotTrainState(trainer_.params(), trainer_.optimizer(), config_.save_dtype,
                               std::move(extra), config_.scan_layout);
  checkpointer_.Save(std::move(snapshot));  // waits for the previous save first
  const double seconds = Seconds(t0, Clock::now());
  WriteScalars(step, {{"timing/checkpoint_seconds", seconds}});
  result_.checkpoint_dir = checkpoints::CheckpointDir(config_.model_dir, step);
  last_saved_step_ = step;
  console_ << "[checkpoint] step " << step << " | training blocked " << FormatMetric(seconds)
           << " s to copy the state; writing " << WithUrls(result_.checkpoint_dir)
           << (config_.async_checkpoints ? " in the background" : "") << std::endl;
  if (!config_.async_checkpoints) WaitForSaves();
  ReportWrites(checkpointer_.Poll());
}

std::string TrainLoop::LastCheckpoint() const {
  const std::vector<int64_t> steps = checkpoints::ListCheckpointSteps(config_.model_dir);
  if (steps.empty()) return "no checkpoint was saved";
  return "the last checkpoint, " + checkpoints::CheckpointDir(config_.model_dir, steps.back()) +
         ", is left as it was";
}

// An error part-way (a bad record, an example no step can handle, a failed
// summary write): the state of the last completed step is valid, so it is
// saved before the error ends the run -- hours of training are not lost to
// one example. Returns what to append to the error's message.
std::string TrainLoop::SaveAfterError() {
  try {
    if (!config_.save_checkpoints || nan_stop_ || trainer_.step() == start_) {
      WaitForSaves();
      return "; training stopped at step " + std::to_string(trainer_.step()) + " and " +
             LastCheckpoint();
    }
    if (sharded_saves_) {
      // The others may not reach a save (or be dead), so none is tried and
      // one in flight is not awaited: process 0's checkpointer, as the
      // error unwinds, commits it only if every part is there.
      return "; training stopped at step " + std::to_string(trainer_.step()) +
             " (a sharded save needs every process, so none is tried after an error) and " +
             LastCheckpoint();
    }
    saving_after_error_ = true;
    SaveCheckpoint();
    WaitForSaves();
    return "; training stopped at step " + std::to_string(trainer_.step()) +
           ", whose state was saved to " + result_.checkpoint_dir;
  } catch (const Error& e) {
    return std::string("; saving the state of step ") + std::to_string(trainer_.step()) +
           " failed as well: " + e.what();
  }
}

// A NaN or infinite train loss at `step` (t5x's FloatingPointError).
void TrainLoop::NanError(double value, int64_t step) {
  const std::string loss = std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
  nan_stop_ = true;  // the state is the fault: not saved
  throw Error("the training loss is " + loss + " at step " + std::to_string(step) +
              " (t5x raises FloatingPointError)" + SaveAfterError() +
              "; lower utils.create_learning_rate_scheduler.base_learning_rate or "
              "clip the updates (e.g. adafactor.Adafactor.clipping_threshold)");
}

// t5x's _run_training_eval: every train-eval dataset from its start, for
// eval_steps batches, then the TRAIN_EVAL actions.
void TrainLoop::RunTrainEval() {
  const int64_t step = trainer_.step();
  std::map<std::string, Summary> by_task;
  for (const auto& [name, make] : eval_datasets_) {
    const auto t0 = Clock::now();
    MetricsAccumulator acc(/*train=*/false);
    try {
      acc = Evaluate(trainer_, make(), config_.eval_steps, config_.local_batches,
                     config_.count_batch);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + SaveAfterError());
    }
    if (acc.steps() == 0) {
      console_ << "[eval " << name << "] step " << step
               << " | the train-eval dataset yielded no full batch; no metrics" << std::endl;
      continue;
    }
    Summary s = acc.Compute(Seconds(t0, Clock::now()), config_.num_devices);
    if (config_.chief) eval_writers_.at(name)->WriteScalars(step, s);
    console_ << "[eval " << name << "] step " << step << " | loss " << FormatMetric(s["loss"])
             << " | loss_per_nonpadding_target_token "
             << FormatMetric(s["loss_per_nonpadding_target_token"]) << " | accuracy "
             << FormatMetric(s["accuracy"]) << " | " << acc.steps() << " batches in "
             << FormatMetric(s["timing/seconds"]) << " s" << std::endl;
    result_.eval[name] = s;
    by_task[name] = std::move(s);
  }
  if (!by_task.empty() && RunActions(eval_actions_, by_task, step, console_, &nan_stop_)) {
    stop_training_ = true;
  }
  if (config_.infer_eval) {
    std::map<std::string, Summary> metrics;
    try {
      metrics = config_.infer_eval(step);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + SaveAfterError());
    }
    // t5x runs INFER_EVAL actions on the evaluator's metrics by task.
    if (!metrics.empty() && RunActions(infer_actions_, metrics, step, console_, &nan_stop_)) {
      stop_training_ = true;
    }
  }
}

// `inner` train steps (up to a stop signal), then their summary: written,
// logged, and given to the TRAIN actions.
void TrainLoop::RunStatsPeriod(int64_t inner) {
  MetricsAccumulator acc(/*train=*/true);
  const bool counts_bytes = config_.communicator && config_.communicator->size() > 1;
  const double sent0 = counts_bytes ? config_.communicator->stats().sent_bytes : 0.0;
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < inner; ++i) {
    std::optional<models::FeatureBatch> batch;
    try {
      batch = next_train_batch_();
      T5XX_CHECK(batch.has_value(), "the training data ran out at step " +
                                        std::to_string(trainer_.step()) + " of " +
                                        std::to_string(total_) +
                                        "; lower train.total_steps or use more data");
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + SaveAfterError());
    }
    const BatchCounts counts =
        config_.count_batch ? config_.count_batch(*batch) : CountBatch(*batch);
    const StepMetrics m = config_.local_batches ? trainer_.TrainStepOnLocalBatch(*batch)
                                                : trainer_.TrainStep(*batch);
    acc.Add(m, counts);
    // On the CPU each step's loss is known at once; a GPU step's is read
    // with the summary's (StepMetrics::pending), checked below.
    if (config_.stop_on_nan && m.resolved() && !std::isfinite(m.loss)) {
      NanError(m.loss, trainer_.step());
    }
    if (config_.save_checkpoints &&
        std::find(config_.checkpoint_steps.begin(), config_.checkpoint_steps.end(),
                  trainer_.step()) != config_.checkpoint_steps.end()) {
      // A GPU's pending losses are read first: a NaN state is never saved.
      if (config_.stop_on_nan) {
        if (const auto bad = acc.FirstNonFiniteLoss()) {
          NanError(bad->second, host_step_ + bad->first + 1);
        }
      }
      SaveCheckpoint();  // utils.SaveCheckpointConfig.checkpoint_steps
    }
    ReportWrites(checkpointer_.Poll());
    if (StopAfterStep(m)) break;  // reported after this step's summary
  }
  // Several processes on a GPU: the stop counts were read with the summary.
  if (several_processes_ && !result_.stop_signal && acc.StopRequested()) AgreeToStop();
  if (config_.stop_on_nan) {
    if (const auto bad = acc.FirstNonFiniteLoss()) {
      NanError(bad->second, host_step_ + bad->first + 1);
    }
  }
  const double seconds = Seconds(t0, Clock::now());
  host_step_ = trainer_.step();
  Summary s = acc.Compute(seconds, config_.num_devices, config_.train_flops_per_step,
                          config_.peak_flops_per_second);
  s["timing/uptime"] = Seconds(loop_start_, Clock::now());
  if (counts_bytes && inner > 0) {
    // What this process sent in collectives per step (ring-algorithm bytes,
    // partitioning/collectives/communicator.h), checkpoint gathers included.
    s["timing/communication_bytes_per_step"] =
        (config_.communicator->stats().sent_bytes - sent0) / static_cast<double>(inner);
  }
  WriteScalars(host_step_, s);
  if (first_summary_) result_.first_loss_per_token = s["loss_per_nonpadding_target_token"];
  first_summary_ = false;
  result_.last_loss_per_token = s["loss_per_nonpadding_target_token"];
  LogTrainLine(s);
  if (RunActions(train_actions_, {{"train", s}}, host_step_, console_, &nan_stop_)) {
    stop_training_ = true;
  }
  if (result_.stop_signal) {
    if (result_.stop_elsewhere) {
      console_ << "[train] a stop signal reached another process of the run by step " << host_step_
               << "; every process stops after it"
               << (config_.save_checkpoints ? ", saving this step's state together" : "")
               << std::endl;
    } else {
      console_ << "[train] " << StopSignalName(result_.stop_signal) << " received after step "
               << host_step_ << "; stopping" << (several_processes_ ? " with every process" : "")
               << (config_.save_checkpoints ? " after saving this step's state" : "")
               << " (a second signal ends the process at once)" << std::endl;
    }
  }
}

// One process: a stop signal received by now. Several: the step's stop
// count, summed over every process with its metrics (StepMetrics::
// stop_requests), so that all stop after the same step and save it
// together; a step whose metrics are still on a GPU is not read here.
bool TrainLoop::StopAfterStep(const StepMetrics& m) {
  if (!several_processes_) {
    result_.stop_signal = StopSignalReceived();
    return result_.stop_signal != 0;
  }
  if (!m.resolved() || m.stop_requests <= 0) return false;
  AgreeToStop();
  return true;
}

void TrainLoop::AgreeToStop() {
  const int own = StopSignalReceived();
  result_.stop_signal = own ? own : SIGTERM;  // another process's (which, it does not say)
  result_.stop_elsewhere = own == 0;
}

// The progress line of a train summary.
void TrainLoop::LogTrainLine(Summary& s) {
  std::ostringstream line;
  line << "[train] step " << host_step_ << " of " << total_ << " | loss " << FormatMetric(s["loss"])
       << " | loss_per_nonpadding_target_token "
       << FormatMetric(s["loss_per_nonpadding_target_token"]) << " | accuracy "
       << FormatMetric(s["accuracy"]) << " | learning_rate " << FormatMetric(s["learning_rate"])
       << " | " << FormatMetric(s["timing/steps_per_second"]) << " steps/s | "
       << FormatMetric(s["timing/target_tokens_per_second"]) << " target tokens/s";
  if (s.count("timing/mfu")) line << " | mfu " << FormatMetric(s["timing/mfu"]);
  if (s.count("timing/communication_bytes_per_step")) {
    line << " | sent " << FormatMetric(s["timing/communication_bytes_per_step"] / 1e6)
         << " MB/step";
  }
  line << " | ETA "
       << FormatDuration(static_cast<double>(total_ - host_step_) /
                         std::max(s["timing/steps_per_second"], 1e-12));
  console_ << line.str() << std::endl;
}

// One of t5x's "epochs": train to its end in stats periods, then save and
// evaluate as the periods say. False when the loop must end (a stop signal).
bool TrainLoop::RunEpoch(int64_t epoch, int64_t first_epoch, int64_t num_epochs) {
  const bool final_epoch = epoch == num_epochs - 1;
  const int64_t epoch_end =
      std::min(total_, start_ + steps_per_epoch_ * (epoch - first_epoch + 1));
  while (host_step_ < epoch_end && !result_.stop_signal) {
    if (stop_training_) {
      // t5x: "Saving a checkpoint before early stopping".
      if (checkpoint_period_ && !nan_stop_) SaveCheckpoint();
      break;
    }
    RunStatsPeriod(std::min(epoch_end - host_step_, stats_period_));
  }
  if (result_.stop_signal) return false;  // straight to the final save: no eval
  const int64_t step_offset = host_step_ - start_;
  if (checkpoint_period_ && !nan_stop_ && (final_epoch || step_offset % checkpoint_period_ == 0)) {
    SaveCheckpoint();
  }
  // t5xx: without an eval_period, evaluate once, at the end (t5x: never).
  if (eval_enabled_ && (final_epoch || (eval_period_ && step_offset % eval_period_ == 0))) {
    RunTrainEval();
  }
  return true;
}

TrainResult TrainLoop::Run() {
  Plan();
  OpenWriters();
  result_.start_step = start_;
  {
    // A run restored from MODEL_DIR's checkpoint of its start step has that
    // step saved already.
    const std::vector<int64_t> existing = checkpoints::ListCheckpointSteps(config_.model_dir);
    if (std::find(existing.begin(), existing.end(), start_) != existing.end()) {
      last_saved_step_ = start_;
      result_.checkpoint_dir = checkpoints::CheckpointDir(config_.model_dir, start_);
    }
  }
  if (config_.run_eval_before_training && eval_enabled_) RunTrainEval();
  if (checkpoint_period_) SaveCheckpoint();  // t5x: "before the training loop starts"
  if (total_ == start_) {
    console_ << "[train] total steps and start step are both " << start_
             << "; no training (t5x does the same)" << std::endl;
    result_.steps = start_;
    result_.stopped_early = stop_training_;
    WaitForSaves();
    return result_;
  }

  // --- the loop over t5x's "epochs" ---
  steps_per_epoch_ = std::min(steps_per_epoch_, total_);
  const int64_t first_epoch = start_ / steps_per_epoch_;
  const int64_t num_epochs =
      first_epoch + (total_ - start_ + steps_per_epoch_ - 1) / steps_per_epoch_;
  host_step_ = start_;
  for (int64_t epoch = first_epoch; epoch < num_epochs; ++epoch) {
    if (stop_training_ || result_.stop_signal) break;
    if (!RunEpoch(epoch, first_epoch, num_epochs)) break;
  }
  result_.steps = host_step_;
  result_.stopped_early = stop_training_;
  result_.train_seconds = Seconds(loop_start_, Clock::now());
  // t5xx: the state training ended with is always saved when saving is on.
  if (config_.save_checkpoints && !nan_stop_) SaveCheckpoint();
  WaitForSaves();
  return result_;
}

}  // namespace

TrainResult RunTrainLoop(Trainer& trainer, const BatchFn& next_train_batch,
                         const EvalDatasets& eval_datasets, const TrainLoopConfig& config,
                         std::ostream& console) {
  TrainLoop loop(trainer, next_train_batch, eval_datasets, config, console);
  return loop.Run();
}

}  // namespace t5xx::trainer
