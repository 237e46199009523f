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

#include "t5xx/checkpoints/checkpoints.h"
#include "t5xx/trainer/checkpoint_io.h"
#include "t5xx/trainer/metrics_writer.h"
#include "t5xx/util/error.h"
#include "t5xx/util/stop_signals.h"

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

TrainResult RunTrainLoop(Trainer& trainer, const BatchFn& next_train_batch,
                         const EvalDatasets& eval_datasets, const TrainLoopConfig& config,
                         std::ostream& console) {
  const auto loop_start = Clock::now();
  const int64_t start = trainer.step();
  std::vector<std::string> eval_names;
  for (const auto& [name, make] : eval_datasets) eval_names.push_back(name);
  CheckTrainLoopConfig(config, eval_names, start);
  const int64_t total =
      config.relative_steps ? start + *config.relative_steps : config.total_steps;
  const bool eval_enabled = !eval_datasets.empty() || static_cast<bool>(config.infer_eval);
  const int64_t eval_period = eval_enabled ? config.eval_period.value_or(0) : 0;
  const int64_t checkpoint_period =
      config.save_checkpoints ? config.checkpoint_period.value_or(0) : 0;
  int64_t steps_per_epoch = total;
  if (eval_period || checkpoint_period) {
    steps_per_epoch = std::min(eval_period ? eval_period : std::numeric_limits<int64_t>::max(),
                               checkpoint_period ? checkpoint_period
                                                 : std::numeric_limits<int64_t>::max());
  }
  const int64_t stats_period = config.stats_period.value_or(steps_per_epoch);
  std::vector<Action> train_actions, eval_actions;
  for (const auto& a : config.train_actions) train_actions.push_back({a, {}});
  for (const auto& a : config.train_eval_actions) eval_actions.push_back({a, {}});

  // --- writers: t5x's MetricsManager("train") and ("training_eval/<task>") ---
  // Only the chief process writes MODEL_DIR (summaries, checkpoints); the
  // others compute the same global metrics and keep them to themselves.
  std::unique_ptr<MetricsWriter> train_writer;
  if (config.chief) train_writer = std::make_unique<MetricsWriter>(config.model_dir + "/train");
  auto write_scalars = [&](int64_t step, const std::map<std::string, double>& scalars) {
    if (train_writer) train_writer->WriteScalars(step, scalars);
  };
  std::map<std::string, std::unique_ptr<MetricsWriter>> eval_writers;
  for (const auto& name : eval_names) {
    if (!config.chief) continue;
    eval_writers[name] = std::make_unique<MetricsWriter>(config.model_dir + "/training_eval/" +
                                                         name.substr(0, 113));
  }
  if (!config.operative_config.empty()) {
    if (train_writer) train_writer->WriteText("config", GinMarkdown(config.operative_config), start);
  }

  TrainResult result;
  result.start_step = start;
  bool stop_training = false;
  // A TerminateOnNanAction stopped the run: the state is not saved (its
  // parameters are likely NaN); the last checkpoint stays the last good one.
  bool nan_stop = false;

  checkpoints::AsyncCheckpointer checkpointer(
      config.model_dir, checkpoints::SaveOptions{},
      checkpoints::RetentionPolicy{config.keep, config.keep_dataset_checkpoints,
                                   config.force_keep_period});
  std::optional<int64_t> last_saved_step;  // committed or being written
  bool saving_after_error = false;  // save_after_error: no collectives
  // Reports saves the background writer finished.
  auto report_writes = [&](std::vector<checkpoints::WriteResult> done) {
    for (const checkpoints::WriteResult& w : done) {
      write_scalars(w.step, {{"timing/checkpoint_write_seconds", w.seconds}});
      console << "[checkpoint] step " << w.step << " | "
              << (w.committed ? "committed " : "wrote this process's part of ") << w.dir << " ("
              << FormatMetric(static_cast<double>(w.bytes) / (1024.0 * 1024.0)) << " MiB, "
              << FormatMetric(w.seconds) << " s in the background)";
      if (!w.deleted.empty()) console << "; deleted " << w.deleted.size() << " old";
      console << std::endl;
    }
  };
  auto wait_for_saves = [&]() { report_writes(checkpointer.Wait()); };
  {
    // A run restored from MODEL_DIR's checkpoint of its start step has
    // that step saved already.
    const std::vector<int64_t> existing = checkpoints::ListCheckpointSteps(config.model_dir);
    if (std::find(existing.begin(), existing.end(), start) != existing.end()) {
      last_saved_step = start;
      result.checkpoint_dir = checkpoints::CheckpointDir(config.model_dir, start);
    }
  }
  // Several processes: each saves its part of every checkpoint.
  const bool sharded_saves = config.communicator && config.communicator->size() > 1;
  auto save_checkpoint = [&]() {
    const int64_t step = trainer.step();
    if (last_saved_step == step) return;
    // Every process takes part in gathering the data shards' positions
    // (except when one saves after its own error); the chief writes them.
    std::vector<checkpoints::ExtraFile> extra;
    if (config.data_state_files) extra = config.data_state_files(!saving_after_error);
    if (!config.chief && !sharded_saves) {  // the chief saves the (replicated) state
      last_saved_step = step;
      result.checkpoint_dir = checkpoints::CheckpointDir(config.model_dir, step);
      return;
    }
    std::error_code ec;  // (a sharded save: rank 0 checks, and tells every process)
    T5XX_CHECK(sharded_saves ||
                   !std::filesystem::exists(checkpoints::CheckpointDir(config.model_dir, step), ec),
               "cannot save step " + std::to_string(step) + ": " +
                   checkpoints::CheckpointDir(config.model_dir, step) +
                   " already exists and was not written by this run; move it out of MODEL_DIR");
    const auto t0 = Clock::now();
    if (!config.chief) extra.clear();  // the chief writes the dataset states
    checkpoints::PendingCheckpoint snapshot =
        sharded_saves
            ? SnapshotShardedTrainState(config.model_dir, trainer.params(), trainer.optimizer(),
                                        trainer.DescribeVariables(), *config.communicator,
                                        config.save_dtype, std::move(extra),
                                        config.checkpoint_wait_seconds)
            : SnapshotTrainState(trainer.params(), trainer.optimizer(), config.save_dtype,
                                 std::move(extra));
    checkpointer.Save(std::move(snapshot));  // waits for the previous save first
    const double seconds = Seconds(t0, Clock::now());
    write_scalars(step, {{"timing/checkpoint_seconds", seconds}});
    result.checkpoint_dir = checkpoints::CheckpointDir(config.model_dir, step);
    last_saved_step = step;
    console << "[checkpoint] step " << step << " | training blocked " << FormatMetric(seconds)
            << " s to copy the state; writing " << result.checkpoint_dir
            << (config.async_checkpoints ? " in the background" : "") << std::endl;
    if (!config.async_checkpoints) wait_for_saves();
    report_writes(checkpointer.Poll());
  };

  auto last_checkpoint = [&]() -> std::string {
    const std::vector<int64_t> steps = checkpoints::ListCheckpointSteps(config.model_dir);
    if (steps.empty()) return "no checkpoint was saved";
    return "the last checkpoint, " + checkpoints::CheckpointDir(config.model_dir, steps.back()) +
           ", is left as it was";
  };

  // An error part-way (a bad record, an example no step can handle, a
  // failed summary write): the state of the last completed step is valid,
  // so it is saved before the error ends the run -- hours of training are
  // not lost to one example. Returns what to append to the error's message.
  auto save_after_error = [&]() -> std::string {
    try {
      if (!config.save_checkpoints || nan_stop || trainer.step() == start) {
        wait_for_saves();
        return "; training stopped at step " + std::to_string(trainer.step()) + " and " +
               last_checkpoint();
      }
      if (sharded_saves) {
        // The others may not reach a save (or be dead), so none is tried
        // and one in flight is not awaited: process 0's checkpointer, as
        // the error unwinds, commits it only if every part is there.
        return "; training stopped at step " + std::to_string(trainer.step()) +
               " (a sharded save needs every process, so none is tried after an error) and " +
               last_checkpoint();
      }
      saving_after_error = true;
      save_checkpoint();
      wait_for_saves();
      return "; training stopped at step " + std::to_string(trainer.step()) +
             ", whose state was saved to " + result.checkpoint_dir;
    } catch (const Error& e) {
      return std::string("; saving the state of step ") + std::to_string(trainer.step()) +
             " failed as well: " + e.what();
    }
  };

  // A NaN or infinite train loss at `step` (t5x's FloatingPointError).
  auto nan_error = [&](double value, int64_t step) {
    const std::string loss = std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
    nan_stop = true;  // the state is the fault: not saved
    throw Error("the training loss is " + loss + " at step " + std::to_string(step) +
                " (t5x raises FloatingPointError)" + save_after_error() +
                "; lower utils.create_learning_rate_scheduler.base_learning_rate or "
                "clip the updates (e.g. adafactor.Adafactor.clipping_threshold)");
  };

  // t5x's _run_training_eval: every train-eval dataset from its start, for
  // eval_steps batches, then the TRAIN_EVAL actions.
  auto run_train_eval = [&]() {
    const int64_t step = trainer.step();
    std::map<std::string, Summary> by_task;
    for (const auto& [name, make] : eval_datasets) {
      const auto t0 = Clock::now();
      MetricsAccumulator acc(/*train=*/false);
      try {
        acc = Evaluate(trainer, make(), config.eval_steps, config.local_batches,
                       config.count_batch);
      } catch (const Error& e) {
        throw Error(std::string(e.what()) + save_after_error());
      }
      if (acc.steps() == 0) {
        console << "[eval " << name << "] step " << step
                << " | the train-eval dataset yielded no full batch; no metrics" << std::endl;
        continue;
      }
      Summary s = acc.Compute(Seconds(t0, Clock::now()), config.num_devices);
      if (config.chief) eval_writers.at(name)->WriteScalars(step, s);
      console << "[eval " << name << "] step " << step << " | loss " << FormatMetric(s["loss"])
              << " | loss_per_nonpadding_target_token "
              << FormatMetric(s["loss_per_nonpadding_target_token"]) << " | accuracy "
              << FormatMetric(s["accuracy"]) << " | " << acc.steps() << " batches in "
              << FormatMetric(s["timing/seconds"]) << " s" << std::endl;
      result.eval[name] = s;
      by_task[name] = std::move(s);
    }
    if (!by_task.empty() && RunActions(eval_actions, by_task, step, console, &nan_stop)) {
      stop_training = true;
    }
    if (config.infer_eval) {
      try {
        config.infer_eval(step);
      } catch (const Error& e) {
        throw Error(std::string(e.what()) + save_after_error());
      }
    }
  };

  if (config.run_eval_before_training && eval_enabled) run_train_eval();
  if (checkpoint_period) save_checkpoint();  // t5x: "before the training loop starts"
  if (total == start) {
    console << "[train] total steps and start step are both " << start
            << "; no training (t5x does the same)" << std::endl;
    result.steps = start;
    result.stopped_early = stop_training;
    wait_for_saves();
    return result;
  }

  // --- the loop over t5x's "epochs" ---
  steps_per_epoch = std::min(steps_per_epoch, total);
  const int64_t first_epoch = start / steps_per_epoch;
  const int64_t num_epochs = first_epoch + (total - start + steps_per_epoch - 1) / steps_per_epoch;
  int64_t host_step = start;
  bool first_summary = true;
  for (int64_t epoch = first_epoch; epoch < num_epochs; ++epoch) {
    const bool final_epoch = epoch == num_epochs - 1;
    if (stop_training || result.stop_signal) break;
    const int64_t epoch_end =
        std::min(total, start + steps_per_epoch * (epoch - first_epoch + 1));
    while (host_step < epoch_end && !result.stop_signal) {
      if (stop_training) {
        // t5x: "Saving a checkpoint before early stopping".
        if (checkpoint_period && !nan_stop) save_checkpoint();
        break;
      }
      const int64_t inner = std::min(epoch_end - host_step, stats_period);
      MetricsAccumulator acc(/*train=*/true);
      const bool counts_bytes = config.communicator && config.communicator->size() > 1;
      const double sent0 = counts_bytes ? config.communicator->stats().sent_bytes : 0.0;
      const auto t0 = Clock::now();
      for (int64_t i = 0; i < inner; ++i) {
        std::optional<models::FeatureBatch> batch;
        try {
          batch = next_train_batch();
          T5XX_CHECK(batch.has_value(), "the training data ran out at step " +
                                            std::to_string(trainer.step()) + " of " +
                                            std::to_string(total) +
                                            "; lower train.total_steps or use more data");
        } catch (const Error& e) {
          throw Error(std::string(e.what()) + save_after_error());
        }
        const BatchCounts counts =
            config.count_batch ? config.count_batch(*batch) : CountBatch(*batch);
        const StepMetrics m = config.local_batches ? trainer.TrainStepOnLocalBatch(*batch)
                                                   : trainer.TrainStep(*batch);
        acc.Add(m, counts);
        // On the CPU each step's loss is known at once; a GPU step's is read
        // with the summary's (StepMetrics::pending), checked below.
        if (config.stop_on_nan && m.resolved() && !std::isfinite(m.loss)) {
          nan_error(m.loss, trainer.step());
        }
        if (config.save_checkpoints &&
            std::find(config.checkpoint_steps.begin(), config.checkpoint_steps.end(),
                      trainer.step()) != config.checkpoint_steps.end()) {
          // A GPU's pending losses are read first: a NaN state is never saved.
          if (config.stop_on_nan) {
            if (const auto bad = acc.FirstNonFiniteLoss()) {
              nan_error(bad->second, host_step + bad->first + 1);
            }
          }
          save_checkpoint();  // utils.SaveCheckpointConfig.checkpoint_steps
        }
        report_writes(checkpointer.Poll());
        if (const int sig = StopSignalReceived()) {
          result.stop_signal = sig;  // reported after this step's summary
          break;
        }
      }
      if (config.stop_on_nan) {
        if (const auto bad = acc.FirstNonFiniteLoss()) {
          nan_error(bad->second, host_step + bad->first + 1);
        }
      }
      const double seconds = Seconds(t0, Clock::now());
      host_step = trainer.step();
      Summary s = acc.Compute(seconds, config.num_devices, config.train_flops_per_step,
                              config.peak_flops_per_second);
      s["timing/uptime"] = Seconds(loop_start, Clock::now());
      if (counts_bytes && inner > 0) {
        // What this process sent in collectives per step (ring-algorithm
        // bytes, partitioning/communicator.h), checkpoint gathers included.
        s["timing/communication_bytes_per_step"] =
            (config.communicator->stats().sent_bytes - sent0) / static_cast<double>(inner);
      }
      write_scalars(host_step, s);
      if (first_summary) result.first_loss_per_token = s["loss_per_nonpadding_target_token"];
      first_summary = false;
      result.last_loss_per_token = s["loss_per_nonpadding_target_token"];
      {
        std::ostringstream line;
        line << "[train] step " << host_step << " of " << total << " | loss " << FormatMetric(s["loss"])
             << " | loss_per_nonpadding_target_token "
             << FormatMetric(s["loss_per_nonpadding_target_token"]) << " | accuracy "
             << FormatMetric(s["accuracy"]) << " | learning_rate " << FormatMetric(s["learning_rate"]) << " | "
             << FormatMetric(s["timing/steps_per_second"]) << " steps/s | "
             << FormatMetric(s["timing/target_tokens_per_second"]) << " target tokens/s";
        if (s.count("timing/mfu")) line << " | mfu " << FormatMetric(s["timing/mfu"]);
        if (s.count("timing/communication_bytes_per_step")) {
          line << " | sent " << FormatMetric(s["timing/communication_bytes_per_step"] / 1e6)
               << " MB/step";
        }
        line << " | ETA "
             << FormatDuration(static_cast<double>(total - host_step) /
                               std::max(s["timing/steps_per_second"], 1e-12));
        console << line.str() << std::endl;
      }
      if (RunActions(train_actions, {{"train", s}}, host_step, console, &nan_stop)) {
        stop_training = true;
      }
      if (result.stop_signal) {
        console << "[train] " << StopSignalName(result.stop_signal) << " received after step "
                << host_step << "; stopping"
                << (config.save_checkpoints ? " after saving this step's state" : "")
                << " (a second signal ends the process at once)" << std::endl;
      }
    }
    if (result.stop_signal) break;  // straight to the final save: no eval
    const int64_t step_offset = host_step - start;
    if (checkpoint_period && !nan_stop && (final_epoch || step_offset % checkpoint_period == 0)) {
      save_checkpoint();
    }
    // t5xx: without an eval_period, evaluate once, at the end (t5x: never).
    if (eval_enabled &&
        (final_epoch || (eval_period && step_offset % eval_period == 0))) {
      run_train_eval();
    }
  }
  result.steps = host_step;
  result.stopped_early = stop_training;
  result.train_seconds = Seconds(loop_start, Clock::now());
  // t5xx: the state training ended with is always saved when saving is on.
  if (config.save_checkpoints && !nan_stop) save_checkpoint();
  wait_for_saves();
  return result;
}

}  // namespace t5xx::trainer
