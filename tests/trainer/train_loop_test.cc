// RunTrainLoop against t5x's train() (t5x/train.py): the step counts, summary
// steps, evaluation steps and checkpoint steps below are worked out by hand
// from train.py's loop (artificial "epochs" of min(eval_period, checkpoint
// period) steps, summaries every stats_period steps within an epoch,
// checkpoint then train-eval at the epoch's end), and the event files are
// read back with tensorboard's own EventAccumulator (read_events.py).
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/trainer/train_loop.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/util/error.h"
#include "trainer/tiny_t5.h"
#include "test_util.h"

namespace t5xx::trainer {
namespace {

namespace fs = std::filesystem;
using t5xx::testing::ErrorOf;

models::T5Config TinyConfig() { return t5xx::testing::TinyT5Config(); }

using t5xx::testing::ReverseBatch;  // targets = inputs reversed

using t5xx::testing::TempDir;

struct Fixture {
  models::EncoderDecoderModel model{models::Transformer(TinyConfig()), 1e-4, 0.0, {}};
  partitioning::PjitPartitioner partitioner{1, partitioning::StandardLogicalAxisRules()};
  Trainer MakeTrainer(double learning_rate = 0.05) {
    optim::LearningRateSchedulerConfig lr;
    lr.factors = "constant";
    lr.base_learning_rate = learning_rate;
    // Rate 0 means parameters that stay put: no 1e-8 floor (the floor's tiny
    // updates change the last bits of eval losses, which the early-stopping
    // tests compare for equality).
    if (learning_rate == 0.0) lr.min_learning_rate = 0.0;
    return Trainer(model, model.module().InitParams(0), optim::Adafactor({}),
                   optim::LearningRateSchedule(lr), partitioner);
  }
};

// An endless train stream of distinct batches.
BatchFn TrainStream() {
  auto step = std::make_shared<int64_t>(0);
  return [step]() -> std::optional<models::FeatureBatch> { return ReverseBatch((*step)++); };
}

// An eval dataset of `n` fixed batches; *batches_read counts every batch read.
std::function<BatchFn()> EvalStream(int n, std::shared_ptr<int> batches_read = nullptr) {
  return [n, batches_read] {
    auto i = std::make_shared<int>(0);
    return BatchFn([n, i, batches_read]() -> std::optional<models::FeatureBatch> {
      if (*i >= n) return std::nullopt;
      if (batches_read) ++*batches_read;
      return ReverseBatch(1000 + (*i)++);
    });
  };
}

std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

// Steps of the JSON lines that hold `key`.
std::vector<int64_t> StepsWith(const std::string& path, const std::string& key) {
  std::vector<int64_t> steps;
  for (const auto& j : ReadJsonLines(path)) {
    if (j.contains(key)) steps.push_back(j["step"].get<int64_t>());
  }
  return steps;
}

using Steps = std::vector<int64_t>;

TEST(TrainLoopTest, LossFallsAndRunIsWrittenInT5xLayout) {
  Fixture f;
  Trainer trainer = f.MakeTrainer();
  TempDir dir;
  TrainLoopConfig cfg;
  cfg.model_dir = dir.path;
  cfg.total_steps = 200;
  cfg.stats_period = 50;
  cfg.eval_steps = 5;
  std::ostringstream console;
  TrainResult r = RunTrainLoop(trainer, TrainStream(), {{"reverse", EvalStream(2)}}, cfg, console);

  EXPECT_EQ(r.steps, 200);
  // ln(64) = 4.16 at initialisation; the reversal task is learnable.
  EXPECT_NEAR(r.first_loss_per_token, std::log(64.0), 0.7);
  EXPECT_LT(r.last_loss_per_token, r.first_loss_per_token - 1.0);
  ASSERT_EQ(r.eval.count("reverse"), 1u);
  // Only two eval batches exist: 2 * 8 rows * 6 tokens, all weighted.
  EXPECT_DOUBLE_EQ(r.eval["reverse"]["timing/seqs"], 16);
  EXPECT_DOUBLE_EQ(r.eval["reverse"]["non_padding_fraction/loss_weights"], 1.0);

  // One JSON line per stats period with t5x's names.
  int lines = 0;
  for (const auto& j : ReadJsonLines(dir.path + "/train/metrics.jsonl")) {
    if (!j.contains("loss")) continue;
    EXPECT_EQ(j["step"].get<int>(), 50 * ++lines);
    for (const char* k : {"accuracy", "loss_per_nonpadding_target_token", "learning_rate",
                          "timing/seqs_per_second", "timing/steps_per_second",
                          "timing/target_tokens_per_second", "timing/seconds", "timing/uptime",
                          "non_padding_fraction/loss_weights",
                          "effective_batch_size/decoder_target_tokens"}) {
      EXPECT_TRUE(j.contains(k)) << k;
    }
    EXPECT_DOUBLE_EQ(j["learning_rate"].get<double>(), 0.05);
    EXPECT_DOUBLE_EQ(j["timing/seqs"].get<double>(), 50 * 8);  // 50 steps of 8 rows
    EXPECT_DOUBLE_EQ(j["effective_batch_size/decoder_target_tokens"].get<double>(), 8);
  }
  EXPECT_EQ(lines, 4);
  EXPECT_EQ(StepsWith(dir.path + "/training_eval/reverse/metrics.jsonl", "loss"), Steps{200});
  // The progress line: step/total, rate and ETA.
  EXPECT_NE(console.str().find("[train] step 100 of 200 | loss "), std::string::npos) << console.str();
  EXPECT_NE(console.str().find(" steps/s | "), std::string::npos);
  EXPECT_NE(console.str().find(" | ETA "), std::string::npos);

  // Checkpoint: t5x paths, the trained values, Adafactor slots and the step.
  checkpoints::LoadedCheckpoint ck = checkpoints::LoadCheckpoint(r.checkpoint_dir);
  EXPECT_EQ(ck.step, 200);
  EXPECT_EQ(r.checkpoint_dir, dir.path + "/checkpoint_200");
  const auto& kernel = ck.arrays.at("target.encoder.layers_0.attention.query.kernel");
  EXPECT_EQ(kernel.shape, (std::vector<int64_t>{32, 32}));
  at::Tensor saved = at::from_blob(const_cast<uint8_t*>(kernel.bytes.data()), {32, 32}, at::kFloat);
  EXPECT_TRUE(at::equal(saved, trainer.params().Get("encoder.layers_0.attention.query.kernel")));
  EXPECT_EQ(checkpoints::ListCheckpointSteps(dir.path), Steps{200});
}

TEST(TrainLoopTest, RunningOutOfDataIsAClearError) {
  Fixture f;
  Trainer trainer = f.MakeTrainer();
  int64_t step = 0;
  BatchFn train = [&]() -> std::optional<models::FeatureBatch> {
    if (step >= 3) return std::nullopt;
    return ReverseBatch(step++);
  };
  TempDir dir;
  TrainLoopConfig cfg;
  cfg.model_dir = dir.path;
  cfg.total_steps = 10;
  std::ostringstream console;
  EXPECT_NE(ErrorOf([&] { RunTrainLoop(trainer, train, {}, cfg, console); })
                .find("ran out at step 3 of 10"),
            std::string::npos);
}

TEST(TrainLoopTest, RelativeStepsCountFromTheStartStep) {
  // t5x: "relative_steps: The number of train steps to take relative to the
  // current step ... If this is set, total_steps is ignored."
  Fixture f;
  Trainer trainer = f.MakeTrainer();
  TempDir dir;
  BatchFn train = TrainStream();
  std::ostringstream console;
  TrainLoopConfig cfg;
  cfg.model_dir = dir.path;
  cfg.save_checkpoints = false;
  cfg.total_steps = 100;  // ignored
  cfg.relative_steps = 3;
  EXPECT_EQ(RunTrainLoop(trainer, train, {}, cfg, console).steps, 3);
  cfg.relative_steps = 4;  // a second run continuing from step 3
  TrainResult r = RunTrainLoop(trainer, train, {}, cfg, console);
  EXPECT_EQ(r.start_step, 3);
  EXPECT_EQ(r.steps, 7);
  // stats_period None: one summary per epoch = the whole run.
  EXPECT_EQ(StepsWith(dir.path + "/train/metrics.jsonl", "loss"), (Steps{3, 7}));

  // total_steps below the start step is t5x's ValueError; equal means no
  // training.
  cfg.relative_steps.reset();
  cfg.total_steps = 5;
  EXPECT_NE(ErrorOf([&] { RunTrainLoop(trainer, train, {}, cfg, console); })
                .find("train.total_steps = 5 is below the start step 7"),
            std::string::npos);
  cfg.total_steps = 7;
  EXPECT_EQ(RunTrainLoop(trainer, train, {}, cfg, console).steps, 7);
  EXPECT_EQ(trainer.step(), 7);
  cfg.relative_steps = 0;
  EXPECT_NE(ErrorOf([&] { RunTrainLoop(trainer, train, {}, cfg, console); })
                .find("train.relative_steps must be None or >= 1, got 0"),
            std::string::npos);
}

TEST(TrainLoopTest, SummaryAndEvalStepsFollowT5xEpochs) {
  // eval_period 4, no checkpoint period, total 10 -> epochs end at 4, 8, 10;
  // stats_period 3 within them -> train summaries at 3, 4 | 7, 8 | 10; a
  // train-eval of each task at 4, 8 and 10 (the final epoch), each reading
  // eval_steps = 3 batches of the 5 the task has.
  Fixture f;
  Trainer trainer = f.MakeTrainer();
  TempDir dir;
  auto read_a = std::make_shared<int>(0), read_b = std::make_shared<int>(0);
  TrainLoopConfig cfg;
  cfg.model_dir = dir.path;
  cfg.save_checkpoints = false;
  cfg.total_steps = 10;
  cfg.stats_period = 3;
  cfg.eval_period = 4;
  cfg.eval_steps = 3;
  std::ostringstream console;
  TrainResult r = RunTrainLoop(trainer, TrainStream(),
                               {{"task_a", EvalStream(5, read_a)}, {"task_b", EvalStream(5, read_b)}},
                               cfg, console);
  EXPECT_EQ(r.steps, 10);
  EXPECT_EQ(StepsWith(dir.path + "/train/metrics.jsonl", "loss"), (Steps{3, 4, 7, 8, 10}));
  for (const char* task : {"task_a", "task_b"}) {
    const std::string path = dir.path + "/training_eval/" + task + "/metrics.jsonl";
    EXPECT_EQ(StepsWith(path, "loss"), (Steps{4, 8, 10})) << task;
    for (const auto& j : ReadJsonLines(path)) {
      EXPECT_DOUBLE_EQ(j["timing/seqs"].get<double>(), 3 * 8);  // 3 batches of 8
    }
  }
  EXPECT_EQ(*read_a, 9);  // 3 evaluations x 3 batches
  EXPECT_EQ(*read_b, 9);
  EXPECT_TRUE(checkpoints::ListCheckpointSteps(dir.path).empty());  // save = None
  EXPECT_NE(console.str().find("[eval task_b] step 8 | loss "), std::string::npos);

  // Without an eval_period, t5xx evaluates once, at the end.
  Trainer t2 = f.MakeTrainer();
  TempDir dir2;
  cfg.model_dir = dir2.path;
  cfg.eval_period.reset();
  cfg.stats_period.reset();
  RunTrainLoop(t2, TrainStream(), {{"task_a", EvalStream(5)}}, cfg, console);
  EXPECT_EQ(StepsWith(dir2.path + "/training_eval/task_a/metrics.jsonl", "loss"), Steps{10});
  EXPECT_EQ(StepsWith(dir2.path + "/train/metrics.jsonl", "loss"), Steps{10});
}

TEST(TrainLoopTest, RunEvalBeforeTrainingEvaluatesAtTheStartStep) {
  Fixture f;
  Trainer trainer = f.MakeTrainer();
  TempDir dir;
  TrainLoopConfig cfg;
  cfg.model_dir = dir.path;
  cfg.save_checkpoints = false;
  cfg.total_steps = 4;
  cfg.eval_period = 2;
  cfg.run_eval_before_training = true;
  std::ostringstream console;
  RunTrainLoop(trainer, TrainStream(), {{"reverse", EvalStream(2)}}, cfg, console);
  EXPECT_EQ(StepsWith(dir.path + "/training_eval/reverse/metrics.jsonl", "loss"),
            (Steps{0, 2, 4}));
}

TEST(TrainLoopTest, CheckpointPeriodKeepAndSaveNone) {
  // period 3, total 7: t5x saves before the loop (step 0) and at the ends of
  // the epochs 0-3, 3-6 and the final 6-7.
  Fixture f;
  TrainLoopConfig cfg;
  cfg.total_steps = 7;
  cfg.checkpoint_period = 3;
  std::ostringstream console;
  {
    Trainer trainer = f.MakeTrainer();
    TempDir dir;
    cfg.model_dir = dir.path;
    TrainResult r = RunTrainLoop(trainer, TrainStream(), {}, cfg, console);
    EXPECT_EQ(checkpoints::ListCheckpointSteps(dir.path), (Steps{0, 3, 6, 7}));
    EXPECT_EQ(r.checkpoint_dir, dir.path + "/checkpoint_7");
    // timing/checkpoint_seconds is a train scalar at each saved step.
    EXPECT_EQ(StepsWith(dir.path + "/train/metrics.jsonl", "timing/checkpoint_seconds"),
              (Steps{0, 3, 6, 7}));
    // stats_period None = once per epoch.
    EXPECT_EQ(StepsWith(dir.path + "/train/metrics.jsonl", "loss"), (Steps{3, 6, 7}));
  }
  {
    // keep = 2: only the two newest remain.
    Trainer trainer = f.MakeTrainer();
    TempDir dir;
    cfg.model_dir = dir.path;
    cfg.keep = 2;
    RunTrainLoop(trainer, TrainStream(), {}, cfg, console);
    EXPECT_EQ(checkpoints::ListCheckpointSteps(dir.path), (Steps{6, 7}));
    cfg.keep.reset();
  }
  {
    // period None: t5xx saves once, at the end (t5x would save nothing).
    Trainer trainer = f.MakeTrainer();
    TempDir dir;
    cfg.model_dir = dir.path;
    cfg.checkpoint_period.reset();
    RunTrainLoop(trainer, TrainStream(), {}, cfg, console);
    EXPECT_EQ(checkpoints::ListCheckpointSteps(dir.path), Steps{7});
    cfg.checkpoint_period = 3;
  }
  {
    // save = None: nothing.
    Trainer trainer = f.MakeTrainer();
    TempDir dir;
    cfg.model_dir = dir.path;
    cfg.save_checkpoints = false;
    TrainResult r = RunTrainLoop(trainer, TrainStream(), {}, cfg, console);
    EXPECT_TRUE(checkpoints::ListCheckpointSteps(dir.path).empty());
    EXPECT_EQ(r.checkpoint_dir, "");
    cfg.save_checkpoints = true;
  }
  // eval_period 2 with period 3: t5x's "must all be multiples of each other".
  {
    Trainer trainer = f.MakeTrainer();
    TempDir dir;
    cfg.model_dir = dir.path;
    cfg.eval_period = 2;
    EXPECT_NE(ErrorOf([&] {
                RunTrainLoop(trainer, TrainStream(), {{"reverse", EvalStream(1)}}, cfg, console);
              }).find("train.eval_period = 2 and utils.SaveCheckpointConfig.period = 3 must be "
                      "multiples of each other"),
              std::string::npos);
    EXPECT_TRUE(checkpoints::ListCheckpointSteps(dir.path).empty());
  }
}

// A train stream whose 5th batch has NaN loss weights (so a NaN loss).
BatchFn NanAtStep5() {
  auto step = std::make_shared<int64_t>(0);
  return [step]() -> std::optional<models::FeatureBatch> {
    models::FeatureBatch b = ReverseBatch(*step);
    if (++*step == 5) b["decoder_loss_weights"].fill_(std::numeric_limits<float>::quiet_NaN());
    return b;
  };
}

// Trains 10 steps on NanAtStep5 with checkpoint period 2 and the given
// summary period, defer_metrics as given; returns the error and checks what
// every such run must show: the NaN named at step 5 and checkpoint_4 kept
// as the last one.
std::string NanRunKeepingCheckpoint4(bool defer, int64_t stats_period, const std::string& dir) {
  Fixture f;
  Trainer trainer = f.MakeTrainer();
  trainer.set_defer_metrics(defer);
  TrainLoopConfig cfg;
  cfg.model_dir = dir;
  cfg.total_steps = 10;
  cfg.stats_period = stats_period;
  cfg.checkpoint_period = 2;
  std::ostringstream console;
  const std::string error = ErrorOf([&] { RunTrainLoop(trainer, NanAtStep5(), {}, cfg, console); });
  EXPECT_NE(error.find("the training loss is nan at step 5"), std::string::npos) << error;
  EXPECT_NE(error.find("the last checkpoint, " + dir + "/checkpoint_4, is left as it was"),
            std::string::npos)
      << error;
  EXPECT_EQ(checkpoints::ListCheckpointSteps(dir), (Steps{0, 2, 4}));
  return error;
}

TEST(TrainLoopTest, NanLossStopsWithTheStepAndLeavesTheLastGoodCheckpoint) {
  TempDir dir;
  NanRunKeepingCheckpoint4(/*defer=*/false, /*stats_period=*/1, dir.path);
  EXPECT_EQ(StepsWith(dir.path + "/train/metrics.jsonl", "loss"), (Steps{1, 2, 3, 4}));
}

// The same on a GPU's path (metrics read once per summary): the NaN of step
// 5 is found when the summary of steps 5-6 reads its losses, before the
// epoch's checkpoint of step 6, and named by its own step.
TEST(TrainLoopTest, DeferredNanLossIsFoundAtTheSummaryAndNamedByItsStep) {
  TempDir dir;
  NanRunKeepingCheckpoint4(/*defer=*/true, /*stats_period=*/2, dir.path);
  EXPECT_EQ(StepsWith(dir.path + "/train/metrics.jsonl", "loss"), (Steps{2, 4}));
  // A checkpoint_steps save inside a summary reads the pending losses first.
  Fixture f;
  Trainer t2 = f.MakeTrainer();
  t2.set_defer_metrics(true);
  TempDir dir2;
  TrainLoopConfig cfg;
  cfg.model_dir = dir2.path;
  cfg.total_steps = 10;
  cfg.stats_period = 10;
  cfg.checkpoint_steps = {3, 6};
  std::ostringstream console;
  const std::string e2 = ErrorOf([&] { RunTrainLoop(t2, NanAtStep5(), {}, cfg, console); });
  EXPECT_NE(e2.find("the training loss is nan at step 5"), std::string::npos) << e2;
  EXPECT_EQ(checkpoints::ListCheckpointSteps(dir2.path), (Steps{3}));
}

// Summaries read a GPU's pending metrics once and report what the CPU's
// immediate path reports.
TEST(TrainLoopTest, DeferredMetricsGiveTheSameSummaries) {
  std::vector<std::vector<nlohmann::json>> runs;
  for (bool defer : {false, true}) {
    Fixture f;
    Trainer trainer = f.MakeTrainer();
    trainer.set_defer_metrics(defer);
    TempDir dir;
    TrainLoopConfig cfg;
    cfg.model_dir = dir.path;
    cfg.total_steps = 6;
    cfg.stats_period = 3;
    cfg.save_checkpoints = false;
    std::ostringstream console;
    RunTrainLoop(trainer, TrainStream(), {{"reverse", EvalStream(2)}}, cfg, console);
    runs.push_back(ReadJsonLines(dir.path + "/train/metrics.jsonl"));
    for (const auto& line : ReadJsonLines(dir.path + "/training_eval/reverse/metrics.jsonl")) {
      runs.back().push_back(line);
    }
  }
  ASSERT_EQ(runs[0].size(), runs[1].size());
  ASSERT_GE(runs[0].size(), 3u);
  for (size_t i = 0; i < runs[0].size(); ++i) {
    for (const char* k : {"loss", "accuracy", "loss_per_nonpadding_target_token", "z_loss",
                          "cross_ent_loss_per_all_target_tokens"}) {
      if (!runs[0][i].contains(k)) continue;
      EXPECT_EQ(runs[0][i][k].get<double>(), runs[1][i][k].get<double>()) << k << " line " << i;
    }
  }
}

TEST(TrainLoopTest, TerminateOnNanActionStopsWithoutSavingTheNanState) {
  // t5x's TerminateOnNanAction on the train summaries (stop_on_nan off, as
  // with Adafactor's skip_nan_updates).
  Fixture f;
  Trainer trainer = f.MakeTrainer();
  TempDir dir;
  TrainLoopConfig cfg;
  cfg.model_dir = dir.path;
  cfg.total_steps = 10;
  cfg.stats_period = 1;
  cfg.checkpoint_period = 2;
  cfg.stop_on_nan = false;
  ActionConfig nan;
  nan.kind = ActionConfig::Kind::kTerminateOnNan;
  nan.gin_name = "trainer.TerminateOnNanAction";
  nan.task = "train";
  cfg.train_actions = {nan};
  std::ostringstream console;
  TrainResult r = RunTrainLoop(trainer, NanAtStep5(), {}, cfg, console);
  EXPECT_TRUE(r.stopped_early);
  EXPECT_EQ(r.steps, 5);
  EXPECT_EQ(checkpoints::ListCheckpointSteps(dir.path), (Steps{0, 2, 4}));
  // The NaN summary is written (null in JSON, as JSON has no NaN).
  // (Lines of timing/checkpoint_write_seconds come when a background save
  // is committed, so the last summary with a loss is looked up.)
  nlohmann::json last;
  for (const auto& j : ReadJsonLines(dir.path + "/train/metrics.jsonl")) {
    if (j.contains("loss")) last = j;
  }
  EXPECT_TRUE(last["loss"].is_null());
  EXPECT_EQ(last["step"].get<int>(), 5);
}

ActionConfig EarlyStopping(const std::string& task, const std::string& metric,
                           const std::string& mode, double atol = 0) {
  ActionConfig a;
  a.kind = ActionConfig::Kind::kEarlyStopping;
  a.gin_name = "trainer.EarlyStoppingAction";
  a.task = task;
  a.metric = metric;
  a.mode = mode;
  a.patience = 3;
  a.atol = atol;
  return a;
}

TEST(TrainLoopTest, EarlyStoppingOnATrainEvalMetric) {
  // t5x's EarlyStoppingAction(patience=3): stop once the last 3 values show
  // no improvement twice in a row. Evaluations at 2, 4, 6, ... (eval_period 2).
  Fixture f;
  TrainLoopConfig cfg;
  cfg.total_steps = 20;
  cfg.eval_period = 2;
  cfg.save_checkpoints = false;
  std::ostringstream console;
  {
    // Learning rate 0: the eval loss repeats exactly -> stop after the
    // third evaluation (step 6); t5x breaks at the next epoch's start.
    Trainer trainer = f.MakeTrainer(/*learning_rate=*/0.0);
    TempDir dir;
    cfg.model_dir = dir.path;
    cfg.train_eval_actions = {EarlyStopping("reverse", "loss", "min")};
    TrainResult r = RunTrainLoop(trainer, TrainStream(), {{"reverse", EvalStream(2)}}, cfg, console);
    EXPECT_TRUE(r.stopped_early);
    EXPECT_EQ(r.steps, 6);
    EXPECT_EQ(StepsWith(dir.path + "/training_eval/reverse/metrics.jsonl", "loss"),
              (Steps{2, 4, 6}));
    EXPECT_NE(console.str().find("has not improved for 3 evaluations"), std::string::npos);
  }
  {
    // Accuracy in max mode behaves the same at learning rate 0.
    Trainer trainer = f.MakeTrainer(0.0);
    TempDir dir;
    cfg.model_dir = dir.path;
    cfg.train_eval_actions = {EarlyStopping("reverse", "accuracy", "max")};
    EXPECT_EQ(RunTrainLoop(trainer, TrainStream(), {{"reverse", EvalStream(2)}}, cfg, console).steps,
              6);
  }
  {
    // A learning model: the eval loss falls at every evaluation of the first
    // 12 steps, so nothing stops it...
    Trainer trainer = f.MakeTrainer(0.05);
    TempDir dir;
    cfg.model_dir = dir.path;
    cfg.total_steps = 12;
    cfg.train_eval_actions = {EarlyStopping("reverse", "loss", "min")};
    TrainResult r = RunTrainLoop(trainer, TrainStream(), {{"reverse", EvalStream(2)}}, cfg, console);
    EXPECT_FALSE(r.stopped_early);
    EXPECT_EQ(r.steps, 12);
  }
  {
    // ...unless atol asks for more than it gains: a fall of less than atol
    // is no improvement.
    Trainer trainer = f.MakeTrainer(0.05);
    TempDir dir;
    cfg.model_dir = dir.path;
    cfg.train_eval_actions = {EarlyStopping("reverse", "loss", "min", /*atol=*/1e9)};
    EXPECT_EQ(RunTrainLoop(trainer, TrainStream(), {{"reverse", EvalStream(2)}}, cfg, console).steps,
              6);
  }
  // An action naming a task that is not evaluated, or an unknown metric, is
  // refused before training.
  {
    Trainer trainer = f.MakeTrainer();
    TempDir dir;
    cfg.model_dir = dir.path;
    cfg.train_eval_actions = {EarlyStopping("other_task", "loss", "min")};
    EXPECT_NE(ErrorOf([&] {
                RunTrainLoop(trainer, TrainStream(), {{"reverse", EvalStream(2)}}, cfg, console);
              }).find("trainer.EarlyStoppingAction.metric names task 'other_task', but the "
                      "TRAIN_EVAL summaries are for 'reverse'"),
              std::string::npos);
    cfg.train_eval_actions = {EarlyStopping("reverse", "los", "min")};
    EXPECT_NE(ErrorOf([&] {
                RunTrainLoop(trainer, TrainStream(), {{"reverse", EvalStream(2)}}, cfg, console);
              }).find("names metric 'los'"),
              std::string::npos);
    EXPECT_EQ(trainer.step(), 0);
  }
}

TEST(TrainLoopTest, EarlyStoppingOnTrainSummaries) {
  // mode TRAIN: metrics keyed "train". The same batch at learning rate 0
  // gives the same loss at every summary (stats_period 1): stop at step 3,
  // after the third summary.
  Fixture f;
  Trainer trainer = f.MakeTrainer(0.0);
  TempDir dir;
  TrainLoopConfig cfg;
  cfg.model_dir = dir.path;
  cfg.total_steps = 10;
  cfg.stats_period = 1;
  cfg.train_actions = {EarlyStopping("train", "loss", "min")};
  std::ostringstream console;
  BatchFn same = []() -> std::optional<models::FeatureBatch> { return ReverseBatch(7); };
  TrainResult r = RunTrainLoop(trainer, same, {}, cfg, console);
  EXPECT_TRUE(r.stopped_early);
  EXPECT_EQ(r.steps, 3);
  EXPECT_EQ(checkpoints::ListCheckpointSteps(dir.path), Steps{3});  // saved at the end
}

// Runs read_events.py on dir. Returns its JSON, or null when tensorboard is
// not installed (exit 77).
nlohmann::json ReadWithTensorBoard(const std::string& dir) {
  const std::string cmd = std::string("'") + T5XX_PYTHON3 + "' '" + T5XX_READ_EVENTS_PY + "' '" +
                          dir + "' 2>&1";
  std::FILE* pipe = popen(cmd.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << cmd;
  if (pipe == nullptr) return nullptr;
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (rc == 77) return nullptr;
  EXPECT_EQ(rc, 0) << cmd << "\n" << out;
  if (rc != 0) return nullptr;
  return nlohmann::json::parse(out);
}

// Every JSON-lines scalar is a TensorBoard scalar of the same tag and step,
// equal to the JSON value rounded to float32 (TensorBoard stores float32).
void ExpectEventsMatchJsonLines(const nlohmann::json& tb, const std::string& jsonl) {
  int checked = 0;
  for (const auto& j : ReadJsonLines(jsonl)) {
    const int64_t step = j["step"].get<int64_t>();
    for (const auto& [tag, value] : j.items()) {
      if (tag == "step") continue;
      ASSERT_TRUE(tb["scalars"].contains(tag)) << tag << " in " << jsonl;
      bool found = false;
      for (const auto& e : tb["scalars"][tag]) {
        if (e[0].get<int64_t>() != step) continue;
        found = true;
        EXPECT_EQ(e[1].get<double>(), static_cast<double>(static_cast<float>(value.get<double>())))
            << tag << " at step " << step;
      }
      EXPECT_TRUE(found) << tag << " at step " << step;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(TrainLoopTest, TensorBoardReadsTheEventFilesWithT5xTags) {
  Fixture f;
  Trainer trainer = f.MakeTrainer();
  TempDir dir;
  TrainLoopConfig cfg;
  cfg.model_dir = dir.path;
  cfg.total_steps = 4;
  cfg.stats_period = 2;
  cfg.eval_period = 2;
  cfg.checkpoint_period = 2;
  cfg.train_flops_per_step = 1e6;
  cfg.peak_flops_per_second = 1e12;
  cfg.operative_config = "# Parameters for train:\ntrain.total_steps = 4\n";
  std::ostringstream console;
  RunTrainLoop(trainer, TrainStream(), {{"reverse", EvalStream(2)}}, cfg, console);

  nlohmann::json train = ReadWithTensorBoard(dir.path + "/train");
  if (train.is_null()) GTEST_SKIP() << "tensorboard is not installed for " << T5XX_PYTHON3;
  EXPECT_TRUE(train["crc_ok"].get<bool>());
  for (const char* tag :
       {"accuracy", "loss", "z_loss", "cross_ent_loss", "loss_per_nonpadding_target_token",
        "loss_per_all_target_tokens", "learning_rate", "learning_rate/current",
        "non_padding_fraction/loss_weights", "non_padding_fraction/overall",
        "effective_batch_size/encoder_input_tokens", "timing/seconds", "timing/seqs",
        "timing/steps_per_second", "timing/seqs_per_second", "timing/target_tokens_per_second",
        "timing/uptime", "timing/checkpoint_seconds", "timing/model_flops_per_second",
        "timing/mfu"}) {
    EXPECT_TRUE(train["scalars"].contains(tag)) << tag;
  }
  std::vector<int64_t> loss_steps;
  for (const auto& e : train["scalars"]["loss"]) loss_steps.push_back(e[0].get<int64_t>());
  EXPECT_EQ(loss_steps, (Steps{2, 4}));
  ExpectEventsMatchJsonLines(train, dir.path + "/train/metrics.jsonl");
  // The operative config: t5x's text summary "config" at the start step.
  ASSERT_TRUE(train["texts"].contains("config"));
  EXPECT_EQ(train["texts"]["config"][0][0].get<int>(), 0);
  EXPECT_EQ(train["texts"]["config"][0][1].get<std::string>(),
            "#### Parameters for train:\n    train.total_steps = 4");
  EXPECT_EQ(train["texts"]["config"][0][2].get<std::string>(), "text");

  nlohmann::json eval = ReadWithTensorBoard(dir.path + "/training_eval/reverse");
  ASSERT_FALSE(eval.is_null());
  for (const char* tag : {"accuracy", "loss", "loss_per_nonpadding_target_token",
                          "timing/seqs_per_second"}) {
    EXPECT_TRUE(eval["scalars"].contains(tag)) << tag;
  }
  EXPECT_FALSE(eval["scalars"].contains("learning_rate"));
  std::vector<int64_t> eval_steps;
  for (const auto& e : eval["scalars"]["loss"]) eval_steps.push_back(e[0].get<int64_t>());
  EXPECT_EQ(eval_steps, (Steps{2, 4}));
  ExpectEventsMatchJsonLines(eval, dir.path + "/training_eval/reverse/metrics.jsonl");
}

}  // namespace
}  // namespace t5xx::trainer
