#include "t5xx/trainer/train_loop.h"

#include <chrono>
#include <cmath>
#include <map>
#include <memory>

#include "t5xx/trainer/checkpoint_io.h"
#include "t5xx/trainer/metrics_writer.h"
#include "t5xx/util/error.h"

namespace t5xx::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Running sums over a logging period.
struct Accumulator {
  int64_t steps = 0, target_tokens = 0, input_tokens = 0, seqs = 0;
  double loss = 0, cross_ent = 0, z = 0, weight = 0, correct = 0, token_loss = 0;
  void Add(const StepMetrics& m, int64_t batch_size) {
    ++steps;
    seqs += batch_size;
    target_tokens += m.target_tokens;
    input_tokens += m.input_tokens;
    loss += m.loss;
    cross_ent += m.cross_ent_loss;
    z += m.z_loss;
    weight += m.weight_sum;
    correct += m.correct;
    token_loss += m.loss_per_nonpadding_target_token * m.weight_sum;
  }
};

}  // namespace

std::optional<StepMetrics> Evaluate(const Trainer& trainer, const BatchFn& next,
                                    int64_t max_batches) {
  StepMetrics total;
  double token_loss = 0;
  int64_t n = 0;
  while (max_batches < 0 || n < max_batches) {
    auto batch = next();
    if (!batch) break;
    StepMetrics m = trainer.EvalStep(*batch);
    total.loss += m.loss;
    total.cross_ent_loss += m.cross_ent_loss;
    total.z_loss += m.z_loss;
    total.weight_sum += m.weight_sum;
    total.correct += m.correct;
    total.target_tokens += m.target_tokens;
    total.input_tokens += m.input_tokens;
    token_loss += m.loss_per_nonpadding_target_token * m.weight_sum;
    ++n;
  }
  if (n == 0) return std::nullopt;
  total.loss /= n;
  total.cross_ent_loss /= n;
  total.z_loss /= n;
  total.loss_per_nonpadding_target_token =
      total.weight_sum > 0 ? token_loss / total.weight_sum : 0;
  return total;
}

TrainResult RunTrainLoop(Trainer& trainer, const BatchFn& next_train_batch,
                         const std::function<BatchFn()>& make_eval,
                         const TrainLoopConfig& config, std::ostream& console) {
  Check(config.total_steps >= 1, "train.total_steps must be >= 1, got " +
                                     std::to_string(config.total_steps));
  Check(config.stats_period >= 1, "train.stats_period must be >= 1, got " +
                                      std::to_string(config.stats_period));
  MetricsWriter train_writer(config.model_dir + "/train/metrics.jsonl", &console);
  TrainResult result;
  Accumulator acc;
  std::unique_ptr<MetricsWriter> eval_writer;
  auto run_eval = [&]() -> std::optional<StepMetrics> {
    if (!make_eval) return std::nullopt;
    std::optional<StepMetrics> e = Evaluate(trainer, make_eval(), config.eval_steps);
    if (!e) {
      console << "[eval] the eval split yielded no full batch; no eval metrics" << std::endl;
      return e;
    }
    if (!eval_writer) {
      eval_writer = std::make_unique<MetricsWriter>(
          config.model_dir + "/training_eval/" + config.eval_task_name + "/metrics.jsonl",
          &console);
    }
    eval_writer->Write("eval " + config.eval_task_name, trainer.step(),
                       {{"loss", e->loss},
                        {"cross_ent_loss", e->cross_ent_loss},
                        {"z_loss", e->z_loss},
                        {"loss_per_nonpadding_target_token", e->loss_per_nonpadding_target_token},
                        {"accuracy", e->accuracy()}});
    return e;
  };
  const auto start = Clock::now();
  auto period_start = start;
  while (trainer.step() < config.total_steps) {
    auto batch = next_train_batch();
    Check(batch.has_value(),
          "the training data ran out at step " + std::to_string(trainer.step()) +
              " of " + std::to_string(config.total_steps) +
              "; lower train.total_steps or use more data");
    const int64_t batch_size = batch->begin()->second.size(0);
    StepMetrics m = trainer.TrainStep(*batch);
    const int64_t step = trainer.step();
    Check(std::isfinite(m.loss), "the training loss is " +
                                     std::to_string(m.loss) + " at step " +
                                     std::to_string(step) +
                                     "; lower the learning rate");
    if (step == 1) result.first_loss_per_token = m.loss_per_nonpadding_target_token;
    acc.Add(m, batch_size);
    if (step % config.stats_period == 0 || step == config.total_steps) {
      const auto now = Clock::now();
      const double dt = std::max(Seconds(period_start, now), 1e-9);
      std::map<std::string, double> s;
      s["loss"] = acc.loss / acc.steps;
      s["cross_ent_loss"] = acc.cross_ent / acc.steps;
      s["z_loss"] = acc.z / acc.steps;
      s["loss_per_nonpadding_target_token"] = acc.token_loss / std::max(acc.weight, 1.0);
      s["accuracy"] = acc.correct / std::max(acc.weight, 1.0);
      s["learning_rate"] = m.learning_rate;
      s["timing/steps_per_second"] = acc.steps / dt;
      s["timing/seqs_per_second"] = acc.seqs / dt;
      s["timing/target_tokens_per_second"] = acc.target_tokens / dt;
      s["timing/tokens_per_second"] = (acc.target_tokens + acc.input_tokens) / dt;
      s["timing/elapsed_seconds"] = Seconds(start, now);
      if (config.train_flops_per_step > 0) {
        s["timing/model_flops_per_second"] = config.train_flops_per_step * acc.steps / dt;
      }
      train_writer.Write("train", step, s);
      result.last_loss_per_token = s["loss_per_nonpadding_target_token"];
      acc = Accumulator();
      period_start = Clock::now();
    }
    if (config.checkpoint_period && *config.checkpoint_period > 0 &&
        step % *config.checkpoint_period == 0 && step != config.total_steps) {
      console << "[checkpoint] saved "
              << SaveTrainState(config.model_dir, trainer.params(), trainer.optimizer())
              << std::endl;
    }
    if (config.eval_period && *config.eval_period > 0 &&
        step % *config.eval_period == 0 && step != config.total_steps) {
      run_eval();
      period_start = Clock::now();  // keep eval time out of the step rate
    }
  }
  result.steps = trainer.step();
  result.train_seconds = Seconds(start, Clock::now());
  result.checkpoint_dir =
      SaveTrainState(config.model_dir, trainer.params(), trainer.optimizer());
  console << "[checkpoint] saved " << result.checkpoint_dir << std::endl;
  result.eval = run_eval();
  return result;
}

}  // namespace t5xx::trainer
