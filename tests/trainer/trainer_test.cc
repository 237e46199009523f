// Trainer: gradient accumulation (num_microbatches), reproducible randomness
// and the decoder-only model. References are the trainer itself run the
// other way (one batch vs microbatches; same seed twice), so each test
// compares two independent computations of the same quantity.
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/trainer/trainer.h"
#include "t5xx/trainer/batch_conversion.h"

#include <gtest/gtest.h>

#include <vector>

#include "t5xx/models/decoder_only_model.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/util/error.h"
#include "test_util.h"
#include "trainer/tiny_t5.h"

namespace t5xx::trainer {
namespace {

using t5xx::testing::TinyT5Config;

// 8 sequences with ragged padding (so NUM_REAL_TARGET_TOKENS differs per
// microbatch): targets = inputs reversed.
models::FeatureBatch Batch(int64_t seed) {
  at::Generator g = at::detail::createCPUGenerator(static_cast<uint64_t>(seed));
  at::Tensor in = at::randint(3, 64, {8, 6}, g, at::kLong);
  at::Tensor tg = in.flip({1});
  for (int64_t r = 0; r < 8; ++r) {
    for (int64_t c = 6 - r % 4; c < 6; ++c) tg[r][c] = 0;  // 0..3 padding tokens
  }
  at::Tensor dec_in = at::cat({at::zeros({8, 1}, at::kLong), tg.narrow(1, 0, 5)}, 1);
  return {{"encoder_input_tokens", in},
          {"decoder_target_tokens", tg},
          {"decoder_input_tokens", dec_in},
          {"decoder_loss_weights", (tg > 0).to(at::kFloat)}};
}

optim::LearningRateSchedule Constant(double lr) {
  optim::LearningRateSchedulerConfig c;
  c.factors = "constant";
  c.base_learning_rate = lr;
  return optim::LearningRateSchedule(c);
}

struct Rig {
  explicit Rig(double dropout, const char* lnf)
      : model(models::Transformer(TinyT5Config(dropout)), 1e-4, 0.1,
              models::LossNormalizingFactor::Parse(lnf, "test")) {}
  models::EncoderDecoderModel model;
  partitioning::PjitPartitioner partitioner{1, partitioning::StandardLogicalAxisRules()};
  Trainer Make(std::optional<int64_t> microbatches, uint64_t seed = 0) {
    return Trainer(model, model.InitParams(0), optim::Adafactor({}), Constant(0.01), partitioner,
                   microbatches, seed);
  }
};

void ExpectSameParams(const Trainer& a, const Trainer& b, double tol) {
  for (size_t i = 0; i < a.params().params().size(); ++i) {
    const auto& pa = a.params().params()[i];
    const auto& pb = b.params().params()[i];
    const double err = (pa.value - pb.value).abs().max().item<double>();
    EXPECT_LE(err, tol) << pa.name;
  }
}

// One batch of 8 and 4 microbatches of 2 give the same update (t5x sums the
// microbatches' gradients), for each loss normalizing factor.
TEST(TrainerTest, MicrobatchesGiveTheSameUpdateAsOneBatch) {
  for (const char* lnf : {"None", "NUM_REAL_TARGET_TOKENS", "AVERAGE_PER_SEQUENCE", "233472"}) {
    SCOPED_TRACE(lnf);
    Rig s(0.0, lnf);
    Trainer whole = s.Make(std::nullopt);
    Trainer micro = s.Make(4);
    for (int step = 0; step < 2; ++step) {
      StepMetrics a = whole.TrainStep(Batch(step));
      StepMetrics b = micro.TrainStep(Batch(step));
      EXPECT_NEAR(a.loss, b.loss, 1e-5 * std::abs(a.loss));
      EXPECT_NEAR(a.z_loss, b.z_loss, 1e-5 * std::abs(a.z_loss) + 1e-12);
      EXPECT_NEAR(a.weight_sum, b.weight_sum, 1e-6 * a.weight_sum);  // fractional weights: float sums
      EXPECT_NEAR(a.correct, b.correct, 1e-6 * a.weight_sum);
      EXPECT_NEAR(a.loss_per_nonpadding_target_token, b.loss_per_nonpadding_target_token, 1e-5);
    }
    ExpectSameParams(whole, micro, 2e-6);
  }
}

TEST(TrainerTest, MicrobatchesMustDivideTheBatch) {
  Rig s(0.0, "None");
  Trainer t = s.Make(3);
  EXPECT_ERROR_CONTAINS(t.TrainStep(Batch(0)),
                        "num_microbatches = 3 does not divide the batch of 8 sequences");
  EXPECT_ERROR_CONTAINS(s.Make(0), "num_microbatches must be None or >= 1, got 0");
}

// Dropout draws from (random_seed, step): the same seed gives bitwise-equal
// losses and parameters; another seed gives other dropout masks.
TEST(TrainerTest, SameSeedIsBitwiseReproducibleWithDropout) {
  Rig s(0.3, "NUM_REAL_TARGET_TOKENS");
  Trainer a = s.Make(2, /*seed=*/7);
  Trainer b = s.Make(2, /*seed=*/7);
  Trainer c = s.Make(2, /*seed=*/8);
  bool differs = false;
  for (int step = 0; step < 3; ++step) {
    StepMetrics ma = a.TrainStep(Batch(step));
    StepMetrics mb = b.TrainStep(Batch(step));
    StepMetrics mc = c.TrainStep(Batch(step));
    EXPECT_EQ(ma.loss, mb.loss) << "step " << step;  // bitwise
    differs = differs || ma.loss != mc.loss;
  }
  ExpectSameParams(a, b, 0.0);
  EXPECT_TRUE(differs);
  // Eval is deterministic and dropout-free: the same for a and b.
  EXPECT_EQ(a.EvalStep(Batch(9)).loss, b.EvalStep(Batch(9)).loss);
}

// A GPU's path on the CPU (defer_metrics): the step's sums stay a tensor
// until read, and reading them gives exactly the values the CPU path reads
// at once; the updates are the same (the metrics never feed the update).
TEST(TrainerTest, DeferredMetricsResolveToTheImmediateOnes) {
  for (const char* lnf : {"NUM_REAL_TARGET_TOKENS", "AVERAGE_PER_SEQUENCE"}) {
    SCOPED_TRACE(lnf);
    Rig s(0.3, lnf);
    Trainer now = s.Make(2, /*seed=*/5);
    Trainer later = s.Make(2, /*seed=*/5);
    EXPECT_FALSE(now.defer_metrics());  // the CPU's default
    later.set_defer_metrics(true);
    EXPECT_EQ(now.device(), at::Device(at::kCPU));
    for (int step = 0; step < 3; ++step) {
      const StepMetrics a = now.TrainStep(Batch(step));
      StepMetrics b = later.TrainStep(Batch(step));
      EXPECT_TRUE(a.resolved());
      ASSERT_FALSE(b.resolved());
      EXPECT_EQ(b.pending.numel(), 9);
      EXPECT_EQ(b.learning_rate, a.learning_rate);  // known on the host at once
      b.Resolve();
      EXPECT_TRUE(b.resolved());
      EXPECT_EQ(b.loss, a.loss);
      EXPECT_EQ(b.cross_ent_loss, a.cross_ent_loss);
      EXPECT_EQ(b.z_loss, a.z_loss);
      EXPECT_EQ(b.weight_sum, a.weight_sum);
      EXPECT_EQ(b.correct, a.correct);
      EXPECT_EQ(b.loss_per_nonpadding_target_token, a.loss_per_nonpadding_target_token);
      EXPECT_EQ(b.target_tokens, 8 * 6);  // ReverseBatch: 8 rows of 6
      EXPECT_EQ(b.input_tokens, 8 * 6);
      EXPECT_EQ(b.stop_requests, 0);  // no stop signal
    }
    ExpectSameParams(now, later, 0.0);
    StepMetrics e = later.EvalStep(Batch(9));
    ASSERT_FALSE(e.resolved());
    e.Resolve();
    EXPECT_EQ(e.loss, now.EvalStep(Batch(9)).loss);
  }
}

// A GPU trainer's input buffers keep their addresses while the batch
// shapes hold (what a captured CUDA graph needs).
TEST(TrainerTest, StaticDeviceBatchKeepsItsBuffersWhileShapesHold) {
  StaticDeviceBatch batch(at::kCPU);
  auto host = [](int64_t rows, int64_t first) {
    return models::FeatureBatch{
        {"decoder_target_tokens", at::arange(first, first + rows * 3, at::kLong).view({rows, 3})},
        {"decoder_loss_weights", at::ones({rows, 3})}};
  };
  const models::FeatureBatch a = host(2, 0);
  const void* tokens = batch.Fill(a).at("decoder_target_tokens").data_ptr();
  EXPECT_EQ(batch.allocations(), 2);
  EXPECT_NE(tokens, a.at("decoder_target_tokens").data_ptr());  // a copy, not the host rows
  const models::FeatureBatch b = host(2, 100);
  const models::FeatureBatch& filled = batch.Fill(b);
  EXPECT_EQ(filled.at("decoder_target_tokens").data_ptr(), tokens);  // same buffer
  EXPECT_TRUE(at::equal(filled.at("decoder_target_tokens"), b.at("decoder_target_tokens")));
  EXPECT_EQ(batch.allocations(), 2);
  // A new shape gets a new buffer; a feature no longer given is dropped.
  models::FeatureBatch c = host(4, 7);
  c.erase("decoder_loss_weights");
  const models::FeatureBatch& refilled = batch.Fill(c);
  EXPECT_EQ(batch.allocations(), 3);
  EXPECT_EQ(refilled.size(), 1u);
  EXPECT_TRUE(at::equal(refilled.at("decoder_target_tokens"), c.at("decoder_target_tokens")));
}

// The decoder-only model trains through the same Trainer: a causal LM on a
// repeating pattern, whose loss must fall well below its start.
TEST(TrainerTest, DecoderOnlyModelLossFalls) {
  models::DecoderOnlyConfig c;
  c.vocab_size = 32;
  c.emb_dim = 32;
  c.num_heads = 2;
  c.head_dim = 16;
  c.num_layers = 2;
  c.mlp_dim = 64;
  c.mlp_activations = {"gelu", "linear"};
  c.dropout_rate = 0.0;
  models::DecoderOnlyModel model(models::DecoderOnlyTransformer(c), false, 1e-4, 0.0, {});
  partitioning::PjitPartitioner partitioner{1, partitioning::StandardLogicalAxisRules()};
  Trainer t(model, model.InitParams(0), optim::Adafactor({}), Constant(0.05), partitioner);
  // Rows count up from a random start: the next token is always +1.
  auto batch = [](int64_t seed) {
    at::Generator g = at::detail::createCPUGenerator(static_cast<uint64_t>(seed));
    at::Tensor start = at::randint(3, 20, {8, 1}, g, at::kLong);
    at::Tensor tg = start + at::arange(10, at::kLong).unsqueeze(0);
    at::Tensor in = at::cat({at::zeros({8, 1}, at::kLong), tg.narrow(1, 0, 9)}, 1);
    return models::FeatureBatch{{"decoder_target_tokens", tg},
                                {"decoder_input_tokens", in},
                                {"decoder_loss_weights", at::ones({8, 10})}};
  };
  const double first = t.TrainStep(batch(0)).loss_per_nonpadding_target_token;
  double last = first;
  for (int step = 1; step < 40; ++step) last = t.TrainStep(batch(step)).loss_per_nonpadding_target_token;
  EXPECT_GT(first, 3.0);         // about ln(32) = 3.47 at the start
  EXPECT_LT(last, 0.5 * first);  // the +1 rule is learnt
  EXPECT_EQ(t.EvalStep(batch(100)).input_tokens, 0);  // no encoder
}

}  // namespace
}  // namespace t5xx::trainer
