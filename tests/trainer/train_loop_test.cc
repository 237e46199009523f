#include "t5xx/trainer/train_loop.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "t5xx/checkpoints/checkpoints.h"
#include "t5xx/util/error.h"

namespace t5xx::trainer {
namespace {

models::T5Config TinyConfig() {
  models::T5Config c;
  c.vocab_size = 64;
  c.emb_dim = 32;
  c.num_heads = 2;
  c.head_dim = 16;
  c.num_encoder_layers = 1;
  c.num_decoder_layers = 1;
  c.mlp_dim = 64;
  return c;
}

// A learnable synthetic task: targets = inputs reversed.
models::FeatureBatch ReverseBatch(int64_t step) {
  at::Generator g = at::detail::createCPUGenerator(static_cast<uint64_t>(step));
  at::Tensor in = at::randint(3, 64, {8, 6}, g, at::kLong);
  at::Tensor tg = in.flip({1});
  at::Tensor dec_in = at::cat({at::zeros({8, 1}, at::kLong), tg.narrow(1, 0, 5)}, 1);
  return {{"encoder_input_tokens", in},
          {"decoder_target_tokens", tg},
          {"decoder_input_tokens", dec_in},
          {"decoder_loss_weights", at::ones({8, 6})}};
}

std::string TempDir() {
  std::string t = ::testing::TempDir() + "/t5xx_train_XXXXXX";
  EXPECT_NE(::mkdtemp(t.data()), nullptr);
  return t;
}

struct Fixture {
  models::EncoderDecoderModel model{models::Transformer(TinyConfig()), 1e-4, 0.0, {}};
  partitioning::PjitPartitioner partitioner{1, partitioning::StandardLogicalAxisRules()};
  Trainer MakeTrainer() {
    optim::LearningRateSchedulerConfig lr;
    lr.factors = "constant";
    lr.base_learning_rate = 0.05;
    return Trainer(model, model.module().InitParams(0), optim::Adafactor({}),
                   optim::LearningRateSchedule(lr), partitioner);
  }
};

TEST(TrainLoopTest, LossFallsAndRunIsWrittenInT5xLayout) {
  Fixture f;
  Trainer trainer = f.MakeTrainer();
  int64_t step = 0;
  BatchFn train = [&]() -> std::optional<models::FeatureBatch> { return ReverseBatch(step++); };
  auto make_eval = [] {
    auto n = std::make_shared<int>(0);
    return BatchFn([n]() -> std::optional<models::FeatureBatch> {
      if (*n >= 2) return std::nullopt;
      return ReverseBatch(1000 + (*n)++);
    });
  };
  TrainLoopConfig cfg;
  cfg.model_dir = TempDir();
  cfg.total_steps = 200;
  cfg.stats_period = 50;
  cfg.eval_steps = 5;
  cfg.eval_task_name = "reverse";
  std::ostringstream console;
  TrainResult r = RunTrainLoop(trainer, train, make_eval, cfg, console);

  EXPECT_EQ(r.steps, 200);
  // ln(64) = 4.16 at initialisation; the reversal task is learnable.
  EXPECT_NEAR(r.first_loss_per_token, std::log(64.0), 0.7);
  EXPECT_LT(r.last_loss_per_token, r.first_loss_per_token - 1.0);
  ASSERT_TRUE(r.eval.has_value());
  EXPECT_DOUBLE_EQ(r.eval->weight_sum, 2 * 8 * 6);  // two eval batches

  // Metrics: one JSON line per stats period with t5x's names.
  std::ifstream metrics(cfg.model_dir + "/train/metrics.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(metrics, line)) {
    auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["step"].get<int>(), 50 * ++lines);
    for (const char* k : {"loss", "accuracy", "learning_rate", "timing/seqs_per_second",
                          "timing/tokens_per_second", "timing/elapsed_seconds"}) {
      EXPECT_TRUE(j.contains(k)) << k;
    }
    EXPECT_DOUBLE_EQ(j["learning_rate"].get<double>(), 0.05);
  }
  EXPECT_EQ(lines, 4);
  EXPECT_TRUE(std::filesystem::exists(cfg.model_dir + "/training_eval/reverse/metrics.jsonl"));

  // Checkpoint: t5x paths, the trained values, Adafactor slots and the step.
  checkpoints::LoadedCheckpoint ck = checkpoints::LoadCheckpoint(r.checkpoint_dir);
  EXPECT_EQ(ck.step, 200);
  EXPECT_EQ(r.checkpoint_dir, cfg.model_dir + "/checkpoint_200");
  const auto& kernel = ck.arrays.at("target.encoder.layers_0.attention.query.kernel");
  EXPECT_EQ(kernel.shape, (std::vector<int64_t>{32, 32}));
  at::Tensor saved = at::from_blob(const_cast<uint8_t*>(kernel.bytes.data()), {32, 32}, at::kFloat);
  EXPECT_TRUE(at::equal(saved, trainer.params().Get("encoder.layers_0.attention.query.kernel")));
  // token_embedder [64, 32]: not factored (32 < 128) -> v holds the full shape.
  EXPECT_EQ(ck.arrays.at("state.param_states.token_embedder.embedding.v").shape,
            (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(ck.arrays.at("state.param_states.token_embedder.embedding.v_row").shape,
            (std::vector<int64_t>{1}));
  EXPECT_EQ(ck.arrays.size(), trainer.params().params().size() * 5);
  std::filesystem::remove_all(cfg.model_dir);
}

TEST(TrainLoopTest, RunningOutOfDataIsAClearError) {
  Fixture f;
  Trainer trainer = f.MakeTrainer();
  int64_t step = 0;
  BatchFn train = [&]() -> std::optional<models::FeatureBatch> {
    if (step >= 3) return std::nullopt;
    return ReverseBatch(step++);
  };
  TrainLoopConfig cfg;
  cfg.model_dir = TempDir();
  cfg.total_steps = 10;
  std::ostringstream console;
  try {
    RunTrainLoop(trainer, train, nullptr, cfg, console);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ran out at step 3 of 10"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(cfg.model_dir);
}

}  // namespace
}  // namespace t5xx::trainer
