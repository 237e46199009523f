// RestoreTrainState with t5x's RestoreCheckpointConfig options
// (t5x/checkpoints.py Checkpointer.restore, t5x/state_utils.py
// apply_assignment_map): a round trip that continues bitwise, the one-list
// mismatch report, assignment_map renames and skips, strict = False across
// optimizers (AdamW -> Adafactor), fallback_to_scratch, bfloat16 saves and
// restores, and a refused restore that leaves the fresh state untouched.
// Expected keys and shapes are those of the tiny model (tiny_t5.h).
#include "t5xx/trainer/checkpoint_restore.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/optim/optax_optimizers.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/trainer/checkpoint_io.h"
#include "t5xx/trainer/trainer.h"
#include "t5xx/util/error.h"
#include "test_util.h"
#include "trainer/tiny_t5.h"

namespace t5xx::trainer {
namespace {

namespace fs = std::filesystem;
using t5xx::testing::ErrorOf;
using t5xx::testing::ReverseBatch;

using t5xx::testing::TempDir;

models::T5Config Config(int64_t decoder_layers = 1, int64_t mlp_dim = 64) {
  models::T5Config c = t5xx::testing::TinyT5Config();
  c.num_decoder_layers = decoder_layers;
  c.mlp_dim = mlp_dim;
  return c;
}

optim::LearningRateSchedule Constant() {
  optim::LearningRateSchedulerConfig lr;
  lr.factors = "constant";
  lr.base_learning_rate = 0.05;
  return optim::LearningRateSchedule(lr);
}

std::unique_ptr<optim::Optimizer> AdamW() {
  optim::OptaxConfig o;
  optim::OptaxTransform adamw;
  adamw.learning_rate.schedule = optim::optax::ScheduleConfig::T5x({});
  adamw.gin_name = "optax.adamw";
  o.transforms = {adamw};
  return std::make_unique<optim::OptaxOptimizer>(o);
}

struct Tiny {
  explicit Tiny(models::T5Config c = Config())
      : model(models::Transformer(c), 1e-4, 0.0, {}) {}
  models::EncoderDecoderModel model;
  partitioning::PjitPartitioner partitioner{1, partitioning::StandardLogicalAxisRules()};
  // Trains `steps` steps from seed `seed` and saves; returns the checkpoint.
  std::string TrainAndSave(const std::string& dir, int steps, uint64_t seed = 0,
                           std::unique_ptr<optim::Optimizer> opt = nullptr) {
    if (!opt) opt = std::make_unique<optim::Adafactor>(optim::AdafactorConfig{});
    Trainer t(model, model.module().InitParams(seed), std::move(opt), Constant(), partitioner);
    for (int i = 0; i < steps; ++i) t.TrainStep(ReverseBatch(i));
    return SaveTrainState(dir, t.params(), t.optimizer());
  }
};

TEST(CheckpointRestoreTest, ARestoredRunContinuesBitwise) {
  TempDir dir;
  Tiny s;
  // Straight: 3 steps, then a 4th. Restored: 3 steps saved, restored into
  // a differently initialised model, then the 4th.
  Trainer straight(s.model, s.model.module().InitParams(0), optim::Adafactor({}), Constant(),
                   s.partitioner);
  for (int i = 0; i < 3; ++i) straight.TrainStep(ReverseBatch(i));
  const std::string ck = SaveTrainState(dir.path, straight.params(), straight.optimizer());
  const StepMetrics a = straight.TrainStep(ReverseBatch(3));

  models::ParamStore params = s.model.module().InitParams(7);
  auto opt = std::make_unique<optim::Adafactor>(optim::AdafactorConfig{});
  opt->Init(params);
  const RestoreReport r = RestoreTrainState(ck, params, opt.get(), RestoreOptions{});
  EXPECT_EQ(r.step, 3);
  EXPECT_EQ(opt->step(), 3);
  EXPECT_TRUE(r.notes.empty());
  EXPECT_EQ(r.dataset_state, std::nullopt);
  EXPECT_GT(r.bytes_read, 0);
  Trainer resumed(s.model, std::move(params), std::move(opt), Constant(), s.partitioner);
  const StepMetrics b = resumed.TrainStep(ReverseBatch(3));
  EXPECT_EQ(a.loss, b.loss);  // bitwise
  for (const auto& p : straight.params().params()) {
    EXPECT_TRUE(at::equal(p.value, resumed.params().Get(p.name))) << p.name;
  }
}

TEST(CheckpointRestoreTest, EveryMismatchIsReportedInOneList) {
  TempDir dir;
  const std::string ck = Tiny().TrainAndSave(dir.path, 1);
  // Two decoder layers (layers_1 missing from the checkpoint) and mlp 48
  // instead of 64 (every wi/wo kernel differs).
  Tiny other(Config(/*decoder_layers=*/2, /*mlp_dim=*/48));
  models::ParamStore params = other.model.module().InitParams(0);
  const models::ParamStore fresh = other.model.module().InitParams(0);
  const std::string e =
      ErrorOf([&] { RestoreTrainState(ck, params, nullptr, RestoreOptions{}); });
  EXPECT_NE(e.find("checkpoint " + ck + " does not match the model: "), std::string::npos) << e;
  // Every layers_1 parameter is listed with its shape, every mlp kernel
  // with both shapes.
  int missing = 0, shapes = 0;
  for (const auto& p : params.params()) {
    std::string key = "target/" + p.name;
    for (char& c : key) c = c == '.' ? '/' : c;
    if (p.name.find("decoder.layers_1.") == 0) {
      ++missing;
      EXPECT_NE(e.find("missing from the checkpoint: " + key + " " +
                       checkpoints::ShapeString(p.value.sizes().vec())),
                std::string::npos)
          << key;
    } else if (p.name.find("mlp.wi") != std::string::npos ||
               p.name.find("mlp.wo") != std::string::npos) {
      ++shapes;
      EXPECT_NE(e.find("shape differs: " + key + " is " +
                       checkpoints::ShapeString(p.value.sizes().vec()) + " in the model but "),
                std::string::npos)
          << key;
    }
  }
  EXPECT_GT(missing, 5);
  EXPECT_EQ(shapes, 2 * 3);  // wi_0, wi_1, wo of the encoder's and decoder's layers_0
  EXPECT_NE(e.find(std::to_string(missing + shapes) + " problems"), std::string::npos) << e;
  EXPECT_NE(e.find("fallback_to_scratch = True"), std::string::npos) << e;
  EXPECT_NE(e.find("assignment_map"), std::string::npos) << e;
  // Nothing was overwritten.
  for (const auto& p : params.params()) {
    EXPECT_TRUE(at::equal(p.value, fresh.Get(p.name))) << p.name;
  }
}

TEST(CheckpointRestoreTest, AssignmentMapRenamesAndSkips) {
  TempDir dir;
  Tiny s;
  const std::string ck = s.TrainAndSave(dir.path, 2);
  const checkpoints::LoadedCheckpoint saved = checkpoints::LoadCheckpoint(ck);
  models::ParamStore params = s.model.module().InitParams(3);
  const models::ParamStore fresh = s.model.module().InitParams(3);
  auto opt = std::make_unique<optim::Adafactor>(optim::AdafactorConfig{});
  opt->Init(params);
  RestoreOptions o;
  // The decoder's logits kernel from the encoder's... no: the token
  // embedder is shared; take the decoder's final norm from the encoder's,
  // and leave every optimizer slot fresh.
  o.assignment_map = {{R"(target/decoder/decoder_norm/(.*))", R"(target/encoder/encoder_norm/\1)"},
                      {R"(state/.*)", std::nullopt}};
  const RestoreReport r = RestoreTrainState(ck, params, opt.get(), o);
  const auto& enc_norm = saved.arrays.at("target.encoder.encoder_norm.scale");
  const at::Tensor dec_norm = params.Get("decoder.decoder_norm.scale");
  EXPECT_EQ(std::memcmp(dec_norm.data_ptr(), enc_norm.bytes.data(), enc_norm.bytes.size()), 0);
  // Skipped slots keep their fresh (zero) values; each is a note.
  size_t slots = 0;
  for (const auto& a : opt->StateArrays()) {
    ++slots;
    EXPECT_EQ(a.value.abs().sum().item<double>(), 0) << a.path;
  }
  // One note per slot, and one for state/step, which the rule also maps to
  // None (as in t5x, whose flattened state includes it): the step restarts.
  EXPECT_EQ(r.notes.size(), slots + 1);
  EXPECT_EQ(r.step, 2);
  EXPECT_EQ(opt->step(), 0);
  EXPECT_FALSE(RestoresStep(o));

  // A pattern that matches nothing is an error (t5x's require_all_rules_match).
  o.assignment_map = {{R"(target/nosuch/.*)", std::nullopt}};
  EXPECT_NE(ErrorOf([&] { RestoreTrainState(ck, params, opt.get(), o); })
                .find("assignment_map pattern 'target/nosuch/.*' matches no key of the model"),
            std::string::npos);
}

TEST(CheckpointRestoreTest, AdamWCheckpointIntoAdafactorNeedsStrictFalse) {
  TempDir dir;
  Tiny s;
  const std::string ck = s.TrainAndSave(dir.path, 2, 0, AdamW());
  models::ParamStore params = s.model.module().InitParams(5);
  auto opt = std::make_unique<optim::Adafactor>(optim::AdafactorConfig{});
  opt->Init(params);
  const std::string e = ErrorOf([&] { RestoreTrainState(ck, params, opt.get(), RestoreOptions{}); });
  EXPECT_NE(e.find("missing from the checkpoint: state/param_states/encoder/"), std::string::npos)
      << e;
  EXPECT_NE(e.find("not in the model: state/param_states/0/mu/"), std::string::npos) << e;
  EXPECT_NE(e.find("strict = False"), std::string::npos) << e;

  RestoreOptions o;
  o.strict = false;
  const RestoreReport r = RestoreTrainState(ck, params, opt.get(), o);
  EXPECT_EQ(opt->step(), 2);
  const checkpoints::LoadedCheckpoint saved = checkpoints::LoadCheckpoint(ck);
  for (const auto& p : params.params()) {
    const auto& a = saved.arrays.at("target." + p.name);
    EXPECT_EQ(std::memcmp(p.value.data_ptr(), a.bytes.data(), a.bytes.size()), 0) << p.name;
  }
  size_t fresh_slots = 0, ignored = 0;
  for (const std::string& n : r.notes) {
    fresh_slots += n.find("the optimizer slot starts from scratch") != std::string::npos;
    if (n.find("ignored (strict = False)") == std::string::npos) continue;
    // Named one by one, the rest counted: "... and 56 more arrays ...".
    ignored += n.rfind("... and ", 0) == 0 ? std::stoul(n.substr(8)) : 1;
  }
  EXPECT_EQ(fresh_slots, opt->StateArrays().size());
  // Every AdamW array (counts, mu and nu per parameter) is ignored.
  size_t adamw_arrays = 0;
  for (const auto& [path, a] : saved.arrays) adamw_arrays += path.rfind("state.", 0) == 0;
  EXPECT_EQ(ignored, adamw_arrays);
  EXPECT_GT(adamw_arrays, 2 * params.params().size());
}

TEST(CheckpointRestoreTest, FallbackToScratchInitialisesMissingParameters) {
  TempDir dir;
  const std::string ck = Tiny().TrainAndSave(dir.path, 1);
  Tiny deeper(Config(/*decoder_layers=*/2));
  models::ParamStore params = deeper.model.module().InitParams(9);
  const models::ParamStore fresh = deeper.model.module().InitParams(9);
  RestoreOptions o;
  o.fallback_to_scratch = true;
  const RestoreReport r = RestoreTrainState(ck, params, nullptr, o);
  std::vector<std::string> from_scratch;
  for (const auto& p : params.params()) {
    if (p.name.find("decoder.layers_1.") == 0) {
      from_scratch.push_back(p.name);
      EXPECT_TRUE(at::equal(p.value, fresh.Get(p.name))) << p.name;
    } else {
      EXPECT_FALSE(at::equal(p.value, fresh.Get(p.name))) << p.name;
    }
  }
  int notes = 0;
  for (const std::string& n : r.notes) notes += n.find("initialised from scratch") != std::string::npos;
  EXPECT_EQ(notes, static_cast<int>(from_scratch.size()));
  // The same parameters by name, in the store's order (what inference
  // initialises after restoring into uninitialised parameters).
  ASSERT_TRUE(r.unrestored_params.has_value());
  EXPECT_EQ(*r.unrestored_params, from_scratch);
  EXPECT_GT(from_scratch.size(), 5u);
}

TEST(CheckpointRestoreTest, Bfloat16SavesAndRestores) {
  TempDir dir;
  Tiny s;
  Trainer t(s.model, s.model.module().InitParams(0), optim::Adafactor({}), Constant(),
            s.partitioner);
  t.TrainStep(ReverseBatch(0));
  // SaveCheckpointConfig.dtype = 'bfloat16': target in bfloat16, slots as
  // they are.
  checkpoints::PendingCheckpoint snap =
      SnapshotTrainState(t.params(), t.optimizer(), SaveDType::kBFloat16);
  for (const auto& a : snap.arrays) {
    if (a.path.rfind("target.", 0) == 0) EXPECT_EQ(a.dtype, checkpoints::DType::kBFloat16);
    if (a.path.rfind("state.", 0) == 0) EXPECT_NE(a.dtype, checkpoints::DType::kBFloat16);
  }
  const std::string ck =
      checkpoints::SaveCheckpoint(dir.path, snap.step, checkpoints::ArrayRefs(snap.arrays));
  models::ParamStore params = s.model.module().InitParams(4);
  const RestoreReport r = RestoreTrainState(ck, params, nullptr, RestoreOptions{});
  for (const auto& p : params.params()) {
    EXPECT_EQ(p.value.scalar_type(), at::kFloat);
    EXPECT_TRUE(at::equal(p.value, t.params().Get(p.name).to(at::kBFloat16).to(at::kFloat)))
        << p.name;
  }
  bool noted = false;
  for (const std::string& n : r.notes) noted |= n.find("saved as bfloat16") != std::string::npos;
  EXPECT_TRUE(noted);

  // RestoreCheckpointConfig.dtype = 'bfloat16' from a float32 checkpoint:
  // the same rounding.
  TempDir dir2;
  const std::string ck32 = SaveTrainState(dir2.path, t.params(), t.optimizer());
  models::ParamStore p2 = s.model.module().InitParams(4);
  RestoreOptions o;
  o.dtype = "bfloat16";
  RestoreTrainState(ck32, p2, nullptr, o);
  for (const auto& p : p2.params()) {
    EXPECT_TRUE(at::equal(p.value, params.Get(p.name))) << p.name;
  }
}

TEST(CheckpointRestoreTest, EachProcessReadsOnlyTheSliceItOwns) {
  TempDir dir;
  // A 4x6 kernel 0..23; this "process" owns rows 2..3 (as a 2-way data
  // parallel shard of the first axis would).
  std::vector<float> k(24);
  for (int i = 0; i < 24; ++i) k[static_cast<size_t>(i)] = static_cast<float>(i);
  const std::string ck =
      checkpoints::SaveCheckpoint(dir.path, 9, {{"target.enc.k", checkpoints::DType::kFloat32,
                                                 {4, 6}, k.data()}});
  models::ParamStore params;
  params.Add("enc.k", at::zeros({2, 6}), {"embed", "mlp"});
  RestoreOptions o;
  std::vector<std::string> asked;
  o.owned_slice = [&](const std::string& key, const std::vector<int64_t>& shape) {
    asked.push_back(key + " " + checkpoints::ShapeString(shape));
    return checkpoints::Box{{2, 0}, {2, 6}};
  };
  const RestoreReport r = RestoreTrainState(ck, params, nullptr, o);
  EXPECT_EQ(asked, std::vector<std::string>{"target/enc/k [4, 6]"});
  EXPECT_TRUE(at::equal(params.Get("enc.k"), at::arange(12, 24, at::kFloat).reshape({2, 6})));
  EXPECT_EQ(r.step, 9);
  // A slice whose shape is not the live tensor's is a listed mismatch.
  o.owned_slice = [](const std::string&, const std::vector<int64_t>&) {
    return checkpoints::Box{{0, 0}, {4, 6}};
  };
  EXPECT_NE(ErrorOf([&] { RestoreTrainState(ck, params, nullptr, o); })
                .find("shape differs: target/enc/k is [2, 6] in the model but its slice at [0, 0] "
                      "is [4, 6] of [4, 6] in the checkpoint"),
            std::string::npos);
}

}  // namespace
}  // namespace t5xx::trainer
