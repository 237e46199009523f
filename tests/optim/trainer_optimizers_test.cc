// The optimizers inside the trainer: an optax AdamW chain trains the tiny
// network, and optimizer state lands in a t5x checkpoint
// (trainer/checkpoint_io.h) with t5x's paths, dtypes and inline-vs-zarr
// choice for Adafactor and optax AdamW, and restores back.
//
// Expected layouts are facts of t5x's code: Adafactor.derive_logical_axes
// (v_row, v_col and unused slots have no axes -> stored in the msgpack
// index; v and m with axes -> zarr), OptaxWrapper.state_dict (flax state
// dict of the optax state, empty states dropped; counts have no axes ->
// msgpack) and the key lists printed by tests/optim/make_goldens.py.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "optim_test_util.h"
#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/optim/optax_optimizers.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/trainer/checkpoint_io.h"
#include "t5xx/trainer/checkpoint_restore.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/trainer/trainer.h"
#include "trainer/tiny_t5.h"

namespace t5xx::optim {
namespace {

namespace fs = std::filesystem;

class CheckpointLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("t5xx_optim_ckpt_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

models::ParamStore Store() {
  models::ParamStore store;
  store.Add("enc.k", testing::Vals({2, 3}, 1, 0.1), {"embed", "mlp"});
  store.Add("enc.b", testing::Vals({3}, 2, 0.1), {"mlp"});
  return store;
}

void OneStep(Optimizer& opt, models::ParamStore& store) {
  opt.Init(store);
  for (auto& p : store.params()) p.value.mutable_grad() = at::full_like(p.value, 0.25);
  opt.Apply(store, 0.01);
}

at::Tensor ToTensor(const checkpoints::LoadedArray& a) {
  at::ScalarType t = at::kFloat;
  switch (a.dtype) {
    case checkpoints::DType::kFloat32: t = at::kFloat; break;
    case checkpoints::DType::kBFloat16: t = at::kBFloat16; break;
    case checkpoints::DType::kInt32: t = at::kInt; break;
    case checkpoints::DType::kInt64: t = at::kLong; break;
  }
  at::Tensor out = at::empty(a.shape, at::TensorOptions().dtype(t));
  std::memcpy(out.data_ptr(), a.bytes.data(), a.bytes.size());
  return out;
}

// Is `path` a zarr directory (true) or inline in the msgpack index (false)?
bool IsZarr(const std::string& ckpt, const std::string& path) {
  return fs::exists(fs::path(ckpt) / path / ".zarray");
}

TEST_F(CheckpointLayoutTest, AdafactorSlotsAsT5xSavesThem) {
  models::ParamStore store = Store();
  AdafactorConfig c;
  c.beta1 = 0.9;
  c.dtype_momentum = at::kBFloat16;
  c.min_dim_size_to_factor = 2;
  Adafactor opt(c);
  OneStep(opt, store);
  const std::string ckpt = trainer::SaveTrainState(dir_.string(), store, opt);
  checkpoints::LoadedCheckpoint ck = checkpoints::LoadCheckpoint(ckpt);
  EXPECT_EQ(ck.step, 1);
  EXPECT_EQ(ck.arrays.size(), 2u * 5);  // target + v_row, v_col, v, m per parameter
  const std::string k = "state.param_states.enc.k.", b = "state.param_states.enc.b.";
  EXPECT_TRUE(IsZarr(ckpt, "target.enc.k"));
  EXPECT_FALSE(IsZarr(ckpt, k + "v_row"));  // no logical axes in t5x
  EXPECT_FALSE(IsZarr(ckpt, k + "v_col"));
  EXPECT_FALSE(IsZarr(ckpt, k + "v"));      // unused (1,) slot
  EXPECT_TRUE(IsZarr(ckpt, k + "m"));       // momentum has the parameter's axes
  EXPECT_TRUE(IsZarr(ckpt, b + "v"));
  EXPECT_FALSE(IsZarr(ckpt, b + "v_row"));
  EXPECT_EQ(ck.arrays.at(k + "v_row").shape, std::vector<int64_t>({2}));
  EXPECT_EQ(ck.arrays.at(k + "v_col").shape, std::vector<int64_t>({3}));
  EXPECT_EQ(ck.arrays.at(k + "m").dtype, checkpoints::DType::kBFloat16);
  EXPECT_EQ(ck.arrays.at(k + "v").dtype, checkpoints::DType::kFloat32);

  // Back into a fresh optimizer.
  std::map<std::string, at::Tensor> state;
  for (const auto& [path, a] : ck.arrays) {
    if (path.rfind("state.", 0) == 0) state[path.substr(6)] = ToTensor(a);
  }
  Adafactor restored(c);
  restored.Init(store);
  restored.RestoreState(state, ck.step);
  for (const auto& s : opt.StateArrays()) {
    const auto& r = state.at(s.path);
    EXPECT_TRUE(at::equal(s.value, r)) << s.path;
  }
}

TEST_F(CheckpointLayoutTest, OptaxChainStateAsT5xSavesIt) {
  models::ParamStore store = Store();
  OptaxConfig o;
  o.chained = true;
  OptaxTransform clip;
  clip.kind = OptaxTransform::Kind::kClipByGlobalNorm;
  clip.max_norm = 1.0;
  clip.gin_name = "optax.clip_by_global_norm";
  OptaxTransform adamw;
  adamw.learning_rate.schedule = optax::ScheduleConfig::T5x({});
  adamw.gin_name = "optax.adamw";
  o.transforms = {clip, adamw};
  OptaxOptimizer opt(o);
  OneStep(opt, store);
  const std::string ckpt = trainer::SaveTrainState(dir_.string(), store, opt);
  checkpoints::LoadedCheckpoint ck = checkpoints::LoadCheckpoint(ckpt);
  // t5x: state.param_states.1.0.{count, mu.*, nu.*} and 1.2.count (the
  // schedule's); clip_by_global_norm and add_decayed_weights keep no state.
  std::vector<std::string> paths;
  for (const auto& [path, a] : ck.arrays) paths.push_back(path);
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "state.param_states.1.0.count", "state.param_states.1.0.mu.enc.b",
                       "state.param_states.1.0.mu.enc.k", "state.param_states.1.0.nu.enc.b",
                       "state.param_states.1.0.nu.enc.k", "state.param_states.1.2.count",
                       "target.enc.b", "target.enc.k"}));
  const auto& count = ck.arrays.at("state.param_states.1.0.count");
  EXPECT_EQ(count.dtype, checkpoints::DType::kInt32);
  EXPECT_TRUE(count.shape.empty());
  EXPECT_EQ(ToTensor(count).item<int>(), 1);
  EXPECT_FALSE(IsZarr(ckpt, "state.param_states.1.0.count"));
  EXPECT_FALSE(IsZarr(ckpt, "state.param_states.1.2.count"));
  EXPECT_TRUE(IsZarr(ckpt, "state.param_states.1.0.mu.enc.k"));
  EXPECT_TRUE(IsZarr(ckpt, "state.param_states.1.0.nu.enc.b"));
}

models::T5Config TinyConfig() { return t5xx::testing::TinyT5Config(); }

using t5xx::testing::ReverseBatch;  // targets = inputs reversed

TEST(TrainerOptimizersTest, AdamWChainTrainsAndReportsItsOwnRate) {
  models::EncoderDecoderModel model{models::Transformer(TinyConfig()), 1e-4, 0.0, {}};
  partitioning::PjitPartitioner partitioner{1, partitioning::StandardLogicalAxisRules()};
  OptaxConfig o;
  o.chained = true;
  OptaxTransform clip;
  clip.kind = OptaxTransform::Kind::kClipByGlobalNorm;
  clip.max_norm = 1.0;
  clip.gin_name = "optax.clip_by_global_norm";
  OptaxTransform adamw;
  LearningRateSchedulerConfig lr;
  lr.factors = "constant * linear_warmup";
  lr.base_learning_rate = 0.003;
  lr.warmup_steps = 10;
  adamw.learning_rate.schedule = optax::ScheduleConfig::T5x(lr);
  adamw.gin_name = "optax.adamw";
  o.transforms = {clip, adamw};
  LearningRateSchedulerConfig trainer_lr;  // t5x's trainer still has one; unused by optax
  trainer_lr.factors = "constant";
  trainer_lr.base_learning_rate = 123.0;
  trainer::Trainer t(model, model.module().InitParams(0), std::make_unique<OptaxOptimizer>(o),
                     LearningRateSchedule(trainer_lr), partitioner);
  EXPECT_EQ(t.optimizer().gin_name(), "optimizers.chain");
  double first = 0, last = 0;
  for (int64_t step = 0; step < 200; ++step) {
    trainer::StepMetrics m = t.TrainStep(ReverseBatch(step));
    // The applied rate: 0.003 * min(1, step / 10), floored at 1e-8.
    EXPECT_NEAR(m.learning_rate, std::max(1e-8, 0.003 * std::min(1.0, step / 10.0)), 1e-12);
    if (step == 0) first = m.loss_per_nonpadding_target_token;
    if (step >= 180) last += m.loss_per_nonpadding_target_token / 20;
  }
  EXPECT_EQ(t.step(), 200);
  // ln(64) = 4.16 at initialisation; the reversal task is learnable.
  EXPECT_LT(last, first - 0.8) << "first " << first << ", last " << last;
}

// Save after 3 steps, restore into a differently initialised model and a
// fresh optimizer, train 3 more: parameters, every optimizer state array
// (mu, trace, counts of the optimizer and of its schedule) and the losses
// equal a straight 6-step run bit for bit; the checkpoint holds t5x's paths.
using optax::ScheduleConfig;
using TKind = OptaxTransform::Kind;

OptaxConfig Lion() {
  OptaxTransform t = OptaxTransform::Defaults(TKind::kLion, "optimizers.lion");
  t.learning_rate.value = 3e-4;
  return {false, {t}};
}
OptaxConfig SgdMomentum() {
  OptaxTransform t = OptaxTransform::Defaults(TKind::kSgd, "optimizers.sgd");
  t.learning_rate.value = 0.05;
  t.momentum = 0.9;
  return {false, {t}};
}
OptaxConfig ClipRmspropWarmupCosine() {
  OptaxTransform clip = OptaxTransform::Defaults(TKind::kClip);
  clip.max_delta = 1.0;
  OptaxTransform rms = OptaxTransform::Defaults(TKind::kRmsprop);
  ScheduleConfig s = ScheduleConfig::Defaults(ScheduleConfig::Kind::kWarmupCosineDecay);
  s.peak_value = 1e-3, s.warmup_steps = 2, s.decay_steps = 10;
  rms.learning_rate.schedule = s;
  rms.momentum = 0.5;
  return {true, {clip, rms}};
}

void ExpectResumeIsBitwise(const OptaxConfig& config, const std::vector<std::string>& state_paths) {
  const fs::path dir = fs::temp_directory_path() /
                       ("t5xx_optax_resume_" + std::to_string(::getpid()) + "_" +
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  models::EncoderDecoderModel model{models::Transformer(TinyConfig()), 1e-4, 0.0, {}};
  partitioning::PjitPartitioner partitioner{1, partitioning::StandardLogicalAxisRules()};
  LearningRateSchedulerConfig unused;
  unused.factors = "constant";
  trainer::Trainer straight(model, model.module().InitParams(0),
                            std::make_unique<OptaxOptimizer>(config), LearningRateSchedule(unused),
                            partitioner);
  for (int i = 0; i < 3; ++i) straight.TrainStep(ReverseBatch(i));
  const std::string ck = trainer::SaveTrainState(dir.string(), straight.params(), straight.optimizer());
  std::vector<double> losses;
  for (int i = 3; i < 6; ++i) losses.push_back(straight.TrainStep(ReverseBatch(i)).loss);

  models::ParamStore params = model.module().InitParams(7);
  auto opt = std::make_unique<OptaxOptimizer>(config);
  opt->Init(params);
  const trainer::RestoreReport r = trainer::RestoreTrainState(ck, params, opt.get(), {});
  EXPECT_EQ(r.step, 3);
  trainer::Trainer resumed(model, std::move(params), std::move(opt), LearningRateSchedule(unused),
                           partitioner);
  for (int i = 3; i < 6; ++i) EXPECT_EQ(resumed.TrainStep(ReverseBatch(i)).loss, losses[i - 3]);
  for (const auto& p : straight.params().params()) {
    EXPECT_TRUE(at::equal(p.value, resumed.params().Get(p.name))) << p.name;
  }
  const auto a = straight.optimizer().StateArrays(), b = resumed.optimizer().StateArrays();
  ASSERT_EQ(a.size(), b.size());
  std::set<std::string> prefixes;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].path, b[i].path);
    EXPECT_TRUE(at::equal(a[i].value, b[i].value)) << a[i].path;
    std::string prefix = a[i].path;  // without the parameter path
    for (const auto& p : straight.params().params()) {
      const std::string tail = "." + p.name;
      if (prefix.size() > tail.size() &&
          prefix.compare(prefix.size() - tail.size(), tail.size(), tail) == 0) {
        prefix.resize(prefix.size() - tail.size());
      }
    }
    prefixes.insert(prefix);
  }
  for (const std::string& p : state_paths) EXPECT_TRUE(prefixes.count(p)) << p;
  EXPECT_EQ(prefixes.size(), state_paths.size());
  fs::remove_all(dir);
}

TEST(OptaxResumeTest, LionResumesBitwise) {
  ExpectResumeIsBitwise(Lion(), {"param_states.0.count", "param_states.0.mu"});
}

TEST(OptaxResumeTest, SgdMomentumResumesBitwise) {
  ExpectResumeIsBitwise(SgdMomentum(), {"param_states.0.trace"});
}

TEST(OptaxResumeTest, ChainWithAScheduleResumesBitwise) {
  // t5x: clip has no state; rmsprop = (scale_by_rms, scale_by_schedule, trace).
  ExpectResumeIsBitwise(ClipRmspropWarmupCosine(),
                        {"param_states.1.0.nu", "param_states.1.1.count", "param_states.1.2.trace"});
}

}  // namespace
}  // namespace t5xx::optim
