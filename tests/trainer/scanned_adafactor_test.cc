// scan_layers = True against t5x itself: t5xx trains scalable_t5 per layer,
// and each layer must get the update t5x's Adafactor computes for the
// stacked array, and the checkpoint must hold t5x's stacked parameters and
// slots. Oracle: tests/testdata/parity/adafactor_scalable_t5.json, two
// steps of t5x/adafactor.py on t5x's scanned parameters
// (tests/optim/make_scanned_adafactor_golden.py); inputs: the parameters and
// the gradients of cases 0 and 1 of encoder_decoder_scalable_t5.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "models/parity_goldens.h"
#include "t5xx/checkpoints/t5x/scanned_layers.h"
#include "t5xx/models/networks/network.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/trainer/checkpoint_io.h"
#include "t5xx/trainer/checkpoint_restore.h"
#include "test_util.h"

namespace t5xx::trainer {
namespace {

namespace g = models::goldens;

// The parity tests' bound: max|t5xx - t5x| <= 1e-5 * max|t5x| per tensor.
constexpr double kRelTol = 1e-5;

models::ParamStore GoldenParams(const g::json& parity) {
  // The golden's scalable_t5 config (a position table per layer).
  models::T5Config t = g::EncDecConfig(parity.at("config"));
  t.dtype = "float32";
  t.dropout_rate = 0;
  models::ParamStore params = models::Transformer(t).InitParams(0);
  g::LoadParams(parity.at("params"), params);
  return params;
}

optim::ScannedLayers Scanned() {
  return {1, [](const std::string& n) { return checkpoints::ScannedNameOf(n); }};
}

optim::AdafactorConfig UmT5Adafactor(const g::json& kw) {
  optim::AdafactorConfig c;  // mt5/base.gin
  c.decay_rate = 0.8;
  c.step_offset = 0;
  c.logical_factor_rules = optim::StandardLogicalFactorRules();
  if (kw.contains("beta1")) c.beta1 = kw.at("beta1").get<double>();
  if (kw.contains("factored")) c.factored = kw.at("factored").get<bool>();
  if (kw.contains("global_norm_clip_threshold")) {
    c.global_norm_clip_threshold = kw.at("global_norm_clip_threshold").get<double>();
  }
  return c;
}

// Two steps with the golden's gradients.
void TrainTwoSteps(const g::json& parity, models::ParamStore& params, optim::Adafactor& opt,
                   double lr) {
  for (int step = 0; step < 2; ++step) {
    const g::json& grads = parity.at("cases").at(step).at("grads");
    for (auto& p : params.params()) p.value.mutable_grad() = g::FloatTensor(grads.at(p.name));
    opt.Apply(params, lr);
  }
}

TEST(ScannedAdafactorTest, EqualsT5xOnTheStackedArraysAndSavesTheirLayout) {
  const g::json parity = g::Load("parity", "encoder_decoder_scalable_t5.json");
  const g::json golden = g::Load("parity", "adafactor_scalable_t5.json");
  const double lr = golden.at("learning_rate");
  for (const auto& [run, want] : golden.at("runs").items()) {
    SCOPED_TRACE(run);
    models::ParamStore params = GoldenParams(parity);
    optim::Adafactor opt(UmT5Adafactor(want.at("adafactor")));
    opt.set_scanned_layers(Scanned());
    opt.Init(params);
    TrainTwoSteps(parity, params, opt, lr);
    const checkpoints::PendingCheckpoint saved =
        SnapshotTrainState(params, opt, SaveDType::kFloat32, {}, checkpoints::ScanLayout{2, 1});
    std::map<std::string, at::Tensor> got;
    for (const auto& a : saved.arrays) {
      got[a.path] = at::from_blob(const_cast<uint8_t*>(a.bytes.data()), a.shape, at::kFloat);
    }
    std::set<std::string> expected;
    double worst = 0;
    auto check = [&](const std::string& path, const g::json& t) {
      expected.insert(path);
      ASSERT_TRUE(got.count(path)) << path << " not saved";
      const at::Tensor theirs = g::FloatTensor(t);
      ASSERT_EQ(got.at(path).sizes(), theirs.sizes()) << path;
      const double scale = std::max(theirs.abs().max().item<double>(), 1e-30);
      const double diff = (got.at(path) - theirs).abs().max().item<double>() / scale;
      worst = std::max(worst, diff);
      EXPECT_LE(diff, kRelTol) << path;
    };
    for (const auto& [name, t] : want.at("params").items()) check("target." + name, t);
    for (const auto& [name, t] : want.at("slots").items()) check("state." + name, t);
    std::set<std::string> paths;
    for (const auto& [path, t] : got) paths.insert(path);
    EXPECT_EQ(paths, expected);
    std::printf("[ scanned adafactor ] %s: max |t5xx - t5x| / max|t5x| = %.3g over %zu arrays\n",
                run.c_str(), worst, expected.size());
  }
}

// Saved scanned, restored into a fresh per-layer state: every parameter and
// slot bit for bit, and the step.
TEST(ScannedAdafactorTest, RestoresTheStackedLayoutExactly) {
  const g::json parity = g::Load("parity", "encoder_decoder_scalable_t5.json");
  t5xx::testing::TempDir dir;
  models::ParamStore params = GoldenParams(parity);
  optim::Adafactor opt(UmT5Adafactor(g::json::object({{"beta1", 0.9}})));
  opt.set_scanned_layers(Scanned());
  opt.Init(params);
  TrainTwoSteps(parity, params, opt, 0.01);
  const checkpoints::ScanLayout layout{2, 1};
  const std::string ckpt = SaveTrainState(dir.path, params, opt, layout);

  models::ParamStore fresh = GoldenParams(parity);
  optim::Adafactor again(UmT5Adafactor(g::json::object({{"beta1", 0.9}})));
  again.set_scanned_layers(Scanned());
  again.Init(fresh);
  RestoreOptions options;
  options.scan = layout;
  const RestoreReport report = RestoreTrainState(ckpt, fresh, &again, options);
  EXPECT_EQ(report.step, 2);
  EXPECT_EQ(again.step(), 2);
  for (size_t i = 0; i < params.params().size(); ++i) {
    EXPECT_TRUE(at::equal(params.params()[i].value, fresh.params()[i].value))
        << params.params()[i].name;
  }
  const auto a = opt.StateArrays(), b = again.StateArrays();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i].value, b[i].value)) << a[i].path;
  // Restored without the scan layout: the per-layer names are missing, and
  // the error says how to convert.
  models::ParamStore other = GoldenParams(parity);
  EXPECT_ERROR_CONTAINS(RestoreTrainState(ckpt, other, nullptr, RestoreOptions{}),
                        "holds scalable_t5's scanned layout but the model has "
                        "network.T5Config.scan_layers = False");
}

TEST(ScannedAdafactorTest, RefusesWhatT5xRefuses) {
  const g::json parity = g::Load("parity", "encoder_decoder_scalable_t5.json");
  models::ParamStore params = GoldenParams(parity);
  optim::AdafactorConfig no_rules;  // t5x's default: the heuristic
  optim::Adafactor a(no_rules);
  a.set_scanned_layers(Scanned());
  EXPECT_ERROR_CONTAINS(a.Init(params), "logical_factor_rules is None, but scalable_t5's "
                                        "scan_layers = True stacks parameter");
  optim::AdafactorConfig split = UmT5Adafactor(g::json::object());
  (*split.logical_factor_rules)["heads"] = optim::FactorDim::kRow;
  (*split.logical_factor_rules)["embed"] = optim::FactorDim::kColumn;
  optim::Adafactor b(split);
  b.set_scanned_layers(Scanned());
  EXPECT_ERROR_CONTAINS(b.Init(params), "map 'heads' and 'kv' of");
}

}  // namespace
}  // namespace t5xx::trainer
