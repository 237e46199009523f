#include "t5xx/trainer/train_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>

#include "t5xx/checkpoints/checkpoints.h"
#include "t5xx/trainer/checkpoint_io.h"
#include "t5xx/trainer/metrics_writer.h"
#include "t5xx/util/error.h"

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

std::string Num(double v) {
  std::ostringstream out;
  out << std::setprecision(5) << v;
  return out.str();
}

// The metric names an action may watch (MetricsAccumulator's, plus the
// per-feature families).
bool IsKnownMetric(const std::string& name, bool train) {
  static const std::set<std::string> kModel = {
      "accuracy", "loss", "z_loss", "cross_ent_loss", "loss_per_nonpadding_target_token",
      "loss_per_all_target_tokens", "z_loss_per_all_target_tokens",
      "cross_ent_loss_per_all_target_tokens", "non_padding_fraction/loss_weights",
      "timing/seconds", "timing/seqs", "timing/steps_per_second", "timing/seqs_per_second",
      "timing/seqs_per_second_per_core", "timing/target_tokens_per_second",
      "timing/target_tokens_per_second_per_core"};
  static const std::set<std::string> kTrain = {"learning_rate", "learning_rate/current",
                                               "timing/uptime", "timing/model_flops_per_second",
                                               "timing/mfu"};
  if (kModel.count(name) || (train && kTrain.count(name))) return true;
  return name.rfind("non_padding_fraction/", 0) == 0 ||
         name.rfind("effective_batch_size/", 0) == 0;
}

std::string TaskKey(const ActionConfig& a) {
  return a.gin_name + (a.kind == ActionConfig::Kind::kEarlyStopping ? ".metric" : ".task");
}

// Checks an action's settings against what the run will summarize.
void ValidateAction(const ActionConfig& a, const std::string& mode,
                    const std::vector<std::string>& tasks) {
  const std::string key = TaskKey(a);
  if (std::find(tasks.begin(), tasks.end(), a.task) == tasks.end()) {
    std::string known;
    for (const auto& t : tasks) known += (known.empty() ? "'" : ", '") + t + "'";
    throw Error(key + " names task '" + a.task + "', but the " + mode + " summaries are " +
                (tasks.empty() ? std::string("none (train.train_eval_dataset_cfg is None)")
                               : "for " + known) +
                "; name one of those" +
                (mode == "TRAIN" ? "" : " or set train.train_eval_dataset_cfg"));
  }
  T5XX_CHECK(IsKnownMetric(a.metric, mode == "TRAIN"),
        a.gin_name + ".metric names metric '" + a.metric + "', which the " + mode +
            " summaries do not have; use a t5x metric name such as 'loss', 'accuracy' or "
            "'loss_per_nonpadding_target_token'");
  if (a.kind == ActionConfig::Kind::kEarlyStopping) {
    T5XX_CHECK(a.mode == "min" || a.mode == "max",
          a.gin_name + ".mode = '" + a.mode + "': use 'min' or 'max' (t5x: mode must be in "
          "[\"min\", \"max\"])");
    T5XX_CHECK(a.patience >= 1, a.gin_name + ".patience must be >= 1, got " +
                               std::to_string(a.patience));
    T5XX_CHECK(a.atol >= 0, a.gin_name + ".atol must be >= 0, got " + Num(a.atol));
    T5XX_CHECK(a.rtol >= 0, a.gin_name + ".rtol must be >= 0, got " + Num(a.rtol));
  }
}

// An action with its state (EarlyStoppingAction's metric history).
struct Action {
  ActionConfig config;
  std::vector<double> history;

  // t5x's EarlyStoppingAction.run / TerminateOnNanAction.run.
  bool Run(const std::map<std::string, Summary>& by_task, int64_t step, std::ostream& console) {
    auto t = by_task.find(config.task);
    if (t == by_task.end()) return false;  // validated; e.g. an empty eval
    auto m = t->second.find(config.metric);
    if (m == t->second.end()) {
      console << "[action] " << config.gin_name << ": metric '" << config.metric
              << "' is not in the summary of task '" << config.task << "'; not run" << std::endl;
      return false;
    }
    const double value = m->second;
    if (config.kind == ActionConfig::Kind::kTerminateOnNan) {
      if (std::isfinite(value)) return false;
      console << "[action] " << config.gin_name << ": " << config.metric << " of task '"
              << config.task << "' is " << value << " at step " << step
              << "; stopping training" << std::endl;
      return true;
    }
    history.push_back(value);
    if (static_cast<int64_t>(history.size()) < config.patience) return false;
    // No improvement between consecutive values: min mode: current >=
    // previous - (atol + rtol * |previous|); max mode: current <= previous +
    // (atol + rtol * |previous|).
    bool stalled = true;
    for (size_t i = 0; i + 1 < static_cast<size_t>(config.patience); ++i) {
      const double prev = history[i], cur = history[i + 1];
      const double delta = config.atol + config.rtol * std::abs(prev);
      stalled = stalled && (config.mode == "min" ? cur >= prev - delta : cur <= prev + delta);
    }
    if (stalled) {
      std::ostringstream h;
      for (size_t i = 0; i < history.size(); ++i) h << (i ? ", " : "") << Num(history[i]);
      console << "[action] " << config.gin_name << ": " << config.metric << " of task '"
              << config.task << "' has not improved for " << config.patience
              << " evaluations (" << h.str() << ") at step " << step << "; stopping training"
              << std::endl;
      return true;
    }
    history.erase(history.begin());
    return false;
  }
};

// Runs every action (as t5x's run_actions, all of them, or-ing the results);
// *nan_stop is set when a TerminateOnNanAction asked to stop.
bool RunActions(std::vector<Action>& actions, const std::map<std::string, Summary>& by_task,
                int64_t step, std::ostream& console, bool* nan_stop) {
  bool stop = false;
  for (auto& a : actions) {
    const bool s = a.Run(by_task, step, console);
    if (s && a.config.kind == ActionConfig::Kind::kTerminateOnNan) *nan_stop = true;
    stop = stop || s;
  }
  return stop;
}

}  // namespace

int64_t CountPackedExamples(const at::Tensor& segment_ids) {
  T5XX_CHECK(segment_ids.dim() == 2, "CountPackedExamples: segment ids must be [batch, length]");
  const at::Tensor s = segment_ids.to(at::kLong);
  const int64_t rows = s.size(0), len = s.size(1);
  if (rows == 0 || len == 0) return 0;
  const int64_t padded = s.select(1, len - 1).eq(0).sum().item<int64_t>();
  const int64_t changes =
      len > 1 ? s.narrow(1, 1, len - 1).ne(s.narrow(1, 0, len - 1)).sum().item<int64_t>() : 0;
  return changes + rows - padded;
}

BatchCounts CountBatch(const models::FeatureBatch& batch) {
  BatchCounts c;
  const at::Tensor& targets = batch.at("decoder_target_tokens");
  c.examples = targets.size(0);
  c.target_tokens = targets.numel();
  std::map<std::string, at::Tensor> segments;
  const std::string suffix = "_segment_ids";
  for (const auto& [k, v] : batch) {
    if (k.size() > suffix.size() && k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0) {
      segments[k.substr(0, k.size() - suffix.size())] = v;
    }
  }
  if (segments.empty()) {  // unpacked: a padding mask per token feature
    for (const char* k : {"encoder_input_tokens", "decoder_target_tokens"}) {
      auto it = batch.find(k);
      if (it != batch.end()) segments[k] = it->second.ne(0);
    }
  }
  for (const auto& [name, seg] : segments) {
    if (seg.dim() != 2 || seg.size(1) == 0) continue;
    BatchCounts::Feature f;
    f.non_padding = seg.ne(0).sum().item<int64_t>();
    f.size = seg.numel();
    f.packed_examples = CountPackedExamples(seg);
    c.features[name] = f;
  }
  return c;
}

void MetricsAccumulator::Add(const StepMetrics& m, const BatchCounts& counts) {
  ++steps_;
  examples_ += counts.examples;
  target_tokens_ += counts.target_tokens;
  loss_ += m.loss;
  z_loss_ += m.z_loss;
  weights_ += m.weight_sum;
  correct_ += m.correct;
  lr_sum_ += m.learning_rate;
  lr_last_ = m.learning_rate;
  for (const auto& [name, f] : counts.features) {
    BatchCounts::Feature& total = features_[name];
    total.non_padding += f.non_padding;
    total.size += f.size;
    total.packed_examples += f.packed_examples;
  }
}

std::map<std::string, double> MetricsAccumulator::Compute(double seconds, int64_t num_devices,
                                                          double flops_per_step,
                                                          double peak_flops_per_second) const {
  if (steps_ == 0) throw std::logic_error("MetricsAccumulator::Compute: no steps");
  const double steps = static_cast<double>(steps_);
  const double tokens = static_cast<double>(target_tokens_);
  const double dt = std::max(seconds, 1e-9);
  const double devices = static_cast<double>(std::max<int64_t>(num_devices, 1));
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  Summary s;
  s["accuracy"] = ratio(correct_, weights_);
  s["loss"] = loss_ / steps;
  s["z_loss"] = z_loss_ / steps;
  s["cross_ent_loss"] = (loss_ - z_loss_) / steps;
  s["loss_per_nonpadding_target_token"] = ratio(loss_, weights_);
  s["loss_per_all_target_tokens"] = ratio(loss_, tokens);
  s["z_loss_per_all_target_tokens"] = ratio(z_loss_, tokens);
  s["cross_ent_loss_per_all_target_tokens"] = ratio(loss_ - z_loss_, tokens);
  s["non_padding_fraction/loss_weights"] = ratio(weights_, tokens);
  if (!features_.empty()) {
    double non_padding = 0, size = 0;
    for (const auto& [name, f] : features_) {
      s["effective_batch_size/" + name] = static_cast<double>(f.packed_examples) / steps;
      s["non_padding_fraction/" + name] =
          ratio(static_cast<double>(f.non_padding), static_cast<double>(f.size));
      non_padding += static_cast<double>(f.non_padding);
      size += static_cast<double>(f.size);
    }
    s["non_padding_fraction/overall"] = ratio(non_padding, size);
  }
  s["timing/seconds"] = seconds;
  s["timing/seqs"] = static_cast<double>(examples_);
  s["timing/steps_per_second"] = steps / dt;
  s["timing/seqs_per_second"] = examples_ / dt;
  s["timing/seqs_per_second_per_core"] = examples_ / devices / dt;
  s["timing/target_tokens_per_second"] = tokens / dt;
  s["timing/target_tokens_per_second_per_core"] = tokens / devices / dt;
  if (train_) {
    s["learning_rate"] = lr_sum_ / steps;
    s["learning_rate/current"] = lr_last_;
    if (flops_per_step > 0) {
      s["timing/model_flops_per_second"] = flops_per_step * steps / dt;
      if (peak_flops_per_second > 0) {
        s["timing/mfu"] = flops_per_step * steps / dt / peak_flops_per_second;
      }
    }
  }
  return s;
}

MetricsAccumulator Evaluate(const Trainer& trainer, const BatchFn& next, int64_t max_batches) {
  MetricsAccumulator acc(/*train=*/false);
  while (max_batches < 0 || acc.steps() < max_batches) {
    std::optional<models::FeatureBatch> batch = next();
    if (!batch) break;
    acc.Add(trainer.EvalStep(*batch), CountBatch(*batch));
  }
  return acc;
}

std::string GinMarkdown(const std::string& config_str) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < config_str.size()) {
    size_t end = config_str.find('\n', pos);
    if (end == std::string::npos) end = config_str.size();
    lines.push_back(config_str.substr(pos, end - pos));
    pos = end + 1;
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i];
    if (line.rfind('#', 0) != 0) {
      line = "    " + line;
    } else {
      line = line.size() > 2 ? line.substr(2) : "";
      if (line.rfind("====", 0) == 0) {
        line = "";
      } else if (line.rfind("None", 0) == 0) {
        line = "    # None.";
      } else if (!line.empty() && line.back() == ':') {
        line = "#### " + line;
      }
    }
    out += (i ? "\n" : "") + line;
  }
  return out;
}

double MeasureMatmulPeakFlops(int64_t n, int repeats, at::Device device) {
  T5XX_CHECK(n >= 1 && repeats >= 1, "MeasureMatmulPeakFlops: n and repeats must be >= 1");
  const auto options = at::TensorOptions().dtype(at::kFloat).device(device);
  at::Tensor a = at::randn({n, n}, options), b = at::randn({n, n}, options);
  // .item() waits for the result on asynchronous devices.
  auto run = [&] { return at::matmul(a, b).view({-1}).narrow(0, 0, 1).item<float>(); };
  run();  // warm-up
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = Clock::now();
    run();
    best = std::min(best, std::max(Seconds(t0, Clock::now()), 1e-12));
  }
  return 2.0 * static_cast<double>(n) * n * n / best;
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
  const int64_t eval_period = eval_task_names.empty() ? 0 : config.eval_period.value_or(0);
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
  const bool eval_enabled = !eval_datasets.empty();
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
  MetricsWriter train_writer(config.model_dir + "/train");
  std::map<std::string, std::unique_ptr<MetricsWriter>> eval_writers;
  for (const auto& name : eval_names) {
    eval_writers[name] = std::make_unique<MetricsWriter>(config.model_dir + "/training_eval/" +
                                                         name.substr(0, 113));
  }
  if (!config.operative_config.empty()) {
    train_writer.WriteText("config", GinMarkdown(config.operative_config), start);
  }

  TrainResult result;
  result.start_step = start;
  bool stop_training = false;
  // A TerminateOnNanAction stopped the run: the state is not saved (its
  // parameters are likely NaN); the last checkpoint stays the last good one.
  bool nan_stop = false;

  auto checkpoint_exists = [&](int64_t step) {
    const std::vector<int64_t> steps = checkpoints::ListCheckpointSteps(config.model_dir);
    return std::find(steps.begin(), steps.end(), step) != steps.end();
  };
  auto save_checkpoint = [&]() {
    const int64_t step = trainer.step();
    if (checkpoint_exists(step)) {
      result.checkpoint_dir = checkpoints::CheckpointDir(config.model_dir, step);
      return;
    }
    const auto t0 = Clock::now();
    result.checkpoint_dir = SaveTrainState(config.model_dir, trainer.params(), trainer.optimizer());
    const double seconds = Seconds(t0, Clock::now());
    train_writer.WriteScalars(step, {{"timing/checkpoint_seconds", seconds}});
    console << "[checkpoint] step " << step << " | saved " << result.checkpoint_dir << " in "
            << Num(seconds) << " s" << std::endl;
    if (config.keep) {
      std::vector<int64_t> steps = checkpoints::ListCheckpointSteps(config.model_dir);
      for (size_t i = 0; i + static_cast<size_t>(*config.keep) < steps.size(); ++i) {
        const std::string old = checkpoints::CheckpointDir(config.model_dir, steps[i]);
        std::error_code ec;
        std::filesystem::remove_all(old, ec);
        T5XX_CHECK(!ec, "cannot delete " + old + " (utils.SaveCheckpointConfig.keep = " +
                       std::to_string(*config.keep) + "): " + ec.message());
      }
    }
  };

  auto last_checkpoint = [&]() -> std::string {
    const std::vector<int64_t> steps = checkpoints::ListCheckpointSteps(config.model_dir);
    if (steps.empty()) return "no checkpoint was saved";
    return "the last checkpoint, " + checkpoints::CheckpointDir(config.model_dir, steps.back()) +
           ", is left as it was";
  };

  // A data error part-way (a bad record, an example no step can handle):
  // the state of the last completed step is valid, so it is saved before the
  // error ends the run -- hours of training are not lost to one example.
  // Returns what to append to the error's message.
  auto save_after_data_error = [&]() -> std::string {
    if (!config.save_checkpoints || nan_stop || trainer.step() == start) {
      return "; training stopped at step " + std::to_string(trainer.step()) + " and " +
             last_checkpoint();
    }
    save_checkpoint();
    return "; training stopped at step " + std::to_string(trainer.step()) +
           ", whose state was saved to " + result.checkpoint_dir;
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
        acc = Evaluate(trainer, make(), config.eval_steps);
      } catch (const Error& e) {
        throw Error(std::string(e.what()) + save_after_data_error());
      }
      if (acc.steps() == 0) {
        console << "[eval " << name << "] step " << step
                << " | the train-eval dataset yielded no full batch; no metrics" << std::endl;
        continue;
      }
      Summary s = acc.Compute(Seconds(t0, Clock::now()), config.num_devices);
      eval_writers.at(name)->WriteScalars(step, s);
      console << "[eval " << name << "] step " << step << " | loss " << Num(s["loss"])
              << " | loss_per_nonpadding_target_token "
              << Num(s["loss_per_nonpadding_target_token"]) << " | accuracy "
              << Num(s["accuracy"]) << " | " << acc.steps() << " batches in "
              << Num(s["timing/seconds"]) << " s" << std::endl;
      result.eval[name] = s;
      by_task[name] = std::move(s);
    }
    if (!by_task.empty() && RunActions(eval_actions, by_task, step, console, &nan_stop)) {
      stop_training = true;
    }
  };

  if (config.run_eval_before_training && eval_enabled) run_train_eval();
  if (checkpoint_period) save_checkpoint();  // t5x: "before the training loop starts"
  if (total == start) {
    console << "[train] total steps and start step are both " << start
            << "; no training (t5x does the same)" << std::endl;
    result.steps = start;
    result.stopped_early = stop_training;
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
    if (stop_training) break;
    const int64_t epoch_end =
        std::min(total, start + steps_per_epoch * (epoch - first_epoch + 1));
    while (host_step < epoch_end) {
      if (stop_training) {
        // t5x: "Saving a checkpoint before early stopping".
        if (checkpoint_period && !nan_stop) save_checkpoint();
        break;
      }
      const int64_t inner = std::min(epoch_end - host_step, stats_period);
      MetricsAccumulator acc(/*train=*/true);
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
          throw Error(std::string(e.what()) + save_after_data_error());
        }
        const BatchCounts counts = CountBatch(*batch);
        const StepMetrics m = trainer.TrainStep(*batch);
        if (config.stop_on_nan && !std::isfinite(m.loss)) {
          const std::string loss = std::isnan(m.loss) ? "nan" : m.loss > 0 ? "inf" : "-inf";
          throw Error("the training loss is " + loss + " at step " +
                      std::to_string(trainer.step()) + " (t5x raises FloatingPointError); "
                      "training stopped and " + last_checkpoint() +
                      "; lower utils.create_learning_rate_scheduler.base_learning_rate or "
                      "clip the updates (e.g. adafactor.Adafactor.clipping_threshold)");
        }
        acc.Add(m, counts);
      }
      const double seconds = Seconds(t0, Clock::now());
      host_step = trainer.step();
      Summary s = acc.Compute(seconds, config.num_devices, config.train_flops_per_step,
                              config.peak_flops_per_second);
      s["timing/uptime"] = Seconds(loop_start, Clock::now());
      train_writer.WriteScalars(host_step, s);
      if (first_summary) result.first_loss_per_token = s["loss_per_nonpadding_target_token"];
      first_summary = false;
      result.last_loss_per_token = s["loss_per_nonpadding_target_token"];
      {
        std::ostringstream line;
        line << "[train] step " << host_step << " of " << total << " | loss " << Num(s["loss"])
             << " | loss_per_nonpadding_target_token "
             << Num(s["loss_per_nonpadding_target_token"]) << " | accuracy "
             << Num(s["accuracy"]) << " | learning_rate " << Num(s["learning_rate"]) << " | "
             << Num(s["timing/steps_per_second"]) << " steps/s | "
             << Num(s["timing/target_tokens_per_second"]) << " target tokens/s";
        if (s.count("timing/mfu")) line << " | mfu " << Num(s["timing/mfu"]);
        line << " | ETA "
             << FormatDuration(static_cast<double>(total - host_step) /
                               std::max(s["timing/steps_per_second"], 1e-12));
        console << line.str() << std::endl;
      }
      if (RunActions(train_actions, {{"train", s}}, host_step, console, &nan_stop)) {
        stop_training = true;
      }
    }
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
  return result;
}

}  // namespace t5xx::trainer
