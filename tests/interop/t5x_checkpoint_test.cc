// Interop with t5x's own checkpointer (issue 11, point 6): t5xx restores a
// checkpoint that t5x itself wrote and computes the same loss.
//
// tests/testdata/t5x_checkpoint/checkpoint_2 was written by
// t5x.checkpoints.Checkpointer.save from a t5x train state (a tiny T5.1.1
// trained two steps with t5x's Adafactor); expected.json holds the loss t5x's
// EncoderDecoderModel.loss_fn computes for one batch from those parameters,
// and the shape, dtype and sums of every array t5x wrote. How both were made:
// tests/interop/make_t5x_checkpoint.py (docstring) and the README beside the
// data. The test restores parameters and Adafactor slots with
// trainer::RestoreTrainState, checks every array against t5x's sums, the
// step, and the loss within 1e-5 (relative).
#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "models/parity_goldens.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/trainer/checkpoint_restore.h"
#include "t5xx/util/error.h"

namespace t5xx {
namespace {

using json = nlohmann::json;

constexpr double kRelTol = 1e-5;

const std::string kDataDir = std::string(T5XX_SOURCE_DIR) + "/tests/testdata/t5x_checkpoint";

json Expected() { return models::goldens::Load("t5x_checkpoint", "expected.json"); }

std::string CheckpointDir(const json& e) {
  return kDataDir + "/" + e.at("checkpoint").get<std::string>();
}

// t5x's key ("target/encoder/layers_0/...") of a t5xx dotted path.
std::string SlashKey(std::string dotted) {
  for (char& c : dotted) {
    if (c == '.') c = '/';
  }
  return dotted;
}

models::EncoderDecoderModel MakeModel(const json& e) {
  models::T5Config c = models::goldens::EncDecConfig(e.at("config"));
  EXPECT_EQ(e.at("loss_normalizing_factor"), nullptr);
  return models::EncoderDecoderModel(models::Transformer(c), e.at("z_loss").get<double>(),
                                     e.at("label_smoothing").get<double>(),
                                     models::LossNormalizingFactor{});
}

// adafactor.Adafactor as the t5x run configured it (expected.json "adafactor").
optim::AdafactorConfig AdafactorOf(const json& e) {
  const json& a = e.at("adafactor");
  optim::AdafactorConfig c;
  c.decay_rate = a.at("decay_rate").get<double>();
  c.step_offset = a.at("step_offset").get<int64_t>();
  c.min_dim_size_to_factor = a.at("min_dim_size_to_factor").get<int64_t>();
  EXPECT_EQ(a.at("logical_factor_rules"), "standard_logical_factor_rules()");
  c.logical_factor_rules = optim::StandardLogicalFactorRules();
  return c;
}

// The array's shape, dtype and sums equal what t5x wrote.
void ExpectArray(const json& arrays, const std::string& key, const at::Tensor& value) {
  SCOPED_TRACE(key);
  ASSERT_TRUE(arrays.contains(key)) << key << " is not in the t5x checkpoint";
  const json& a = arrays.at(key);
  EXPECT_EQ(value.sizes().vec(), a.at("shape").get<std::vector<int64_t>>());
  const std::string dtype = a.at("dtype");
  EXPECT_EQ(value.scalar_type(), dtype == "float32" ? at::kFloat : at::kInt) << dtype;
  const at::Tensor v = value.detach().to(at::kDouble);
  const double sum_abs = a.at("sum_abs").get<double>();
  // float32 values summed in another order: rounding of order 1e-7 * sum_abs.
  const double tol = 1e-6 * std::max(sum_abs, 1e-30);
  EXPECT_NEAR(v.abs().sum().item<double>(), sum_abs, tol);
  EXPECT_NEAR(v.sum().item<double>(), a.at("sum").get<double>(), tol);
}

// Restores `checkpoint_dir` (t5x's train state of expected.json, in one of
// t5x's layouts) and checks every array and the loss against t5x's.
void RestoreAndMatchT5xLoss(const std::string& checkpoint_dir) {
  const json e = Expected();
  models::EncoderDecoderModel model = MakeModel(e);
  models::ParamStore params = model.InitParams(0);
  optim::Adafactor adafactor(AdafactorOf(e));
  adafactor.Init(params);
  const models::FeatureBatch batch = models::goldens::Batch(e.at("batch"));
  const double t5x_loss = e.at("loss").get<double>();

  // Freshly initialised parameters give another loss (the check below is
  // not vacuous).
  {
    at::NoGradGuard no_grad;
    const double fresh = model.Loss(params, batch, /*train=*/false).loss.item<double>();
    EXPECT_GT(std::abs(fresh - t5x_loss), 1e-2 * std::abs(t5x_loss));
  }

  trainer::RestoreReport report =
      trainer::RestoreTrainState(checkpoint_dir, params, &adafactor, trainer::RestoreOptions{});
  EXPECT_EQ(report.step, e.at("step").get<int64_t>());
  EXPECT_EQ(adafactor.step(), e.at("step").get<int64_t>());
  for (const std::string& n : report.notes) ADD_FAILURE() << "unexpected note: " << n;
  EXPECT_FALSE(report.dataset_state.has_value());  // t5x saved no dataset iterator

  // Every array t5x wrote was restored, with t5x's values: parameters,
  // Adafactor slots (v_row/v_col of factored kernels, v of the others, the
  // unused (1,) slots) and the step.
  const json& arrays = e.at("arrays");
  std::set<std::string> restored = {"state/step"};
  for (const auto& p : params.params()) {
    const std::string key = "target/" + SlashKey(p.name);
    ExpectArray(arrays, key, p.value);
    restored.insert(key);
  }
  int factored = 0;
  for (const optim::StateArray& s : adafactor.StateArrays()) {
    const std::string key = "state/" + SlashKey(s.path);
    ExpectArray(arrays, key, s.value);
    restored.insert(key);
    if (key.size() > 6 && key.compare(key.size() - 6, 6, "/v_row") == 0 && s.value.numel() > 1) {
      ++factored;
    }
  }
  EXPECT_GT(factored, 10) << "the checkpoint should exercise factored slots";
  std::set<std::string> written;
  for (auto it = arrays.begin(); it != arrays.end(); ++it) written.insert(it.key());
  EXPECT_EQ(restored, written);

  // t5x's loss on the batch, within 1e-5.
  at::NoGradGuard no_grad;
  models::LossOutput out = model.Loss(params, batch, /*train=*/false);
  const double loss = out.loss.item<double>();
  EXPECT_LE(std::abs(loss - t5x_loss), kRelTol * std::abs(t5x_loss))
      << "t5xx " << loss << " vs t5x " << t5x_loss;
  const double weight_sum = out.weight_sum.item<double>();
  EXPECT_EQ(weight_sum, e.at("weight_sum").get<double>());
  const double per_token = e.at("loss_per_token").get<double>();
  EXPECT_LE(std::abs(loss / weight_sum - per_token), kRelTol * per_token);
  const double z = e.at("z_loss_value").get<double>();
  EXPECT_LE(std::abs(out.z_loss.item<double>() - z), kRelTol * z);
}

TEST(T5xCheckpointTest, RestoresT5xWrittenCheckpointAndMatchesT5xLoss) {
  RestoreAndMatchT5xLoss(CheckpointDir(Expected()));
}

// The same train state saved by t5x through Orbax (train.use_orbax = True,
// t5x's default; tests/testdata/t5x_orbax_checkpoint, made by
// make_t5x_orbax_checkpoint.py): the same arrays and t5x's loss.
TEST(T5xCheckpointTest, RestoresT5xOrbaxCheckpointAndMatchesT5xLoss) {
  RestoreAndMatchT5xLoss(std::string(T5XX_SOURCE_DIR) +
                         "/tests/testdata/t5x_orbax_checkpoint/checkpoint_2");
}

// A model whose Adafactor slots differ from t5x's (min_dim_size_to_factor
// 128, t5x's default: nothing factored, so v_row/v_col are (1,) and v is
// full-size) is refused, with the differing slots named by t5x's keys.
TEST(T5xCheckpointTest, ReportsSlotsOfAnotherAdafactorConfiguration) {
  const json e = Expected();
  models::EncoderDecoderModel model = MakeModel(e);
  models::ParamStore params = model.InitParams(0);
  optim::AdafactorConfig config = AdafactorOf(e);
  config.min_dim_size_to_factor = 128;  // t5x's default
  optim::Adafactor adafactor(config);
  adafactor.Init(params);
  try {
    trainer::RestoreTrainState(CheckpointDir(e), params, &adafactor, trainer::RestoreOptions{});
    FAIL() << "restored slots of another shape";
  } catch (const Error& err) {
    const std::string msg = err.what();
    EXPECT_NE(msg.find("state/param_states/token_embedder/embedding/v_row"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("state/param_states/decoder/layers_1/mlp/wo/kernel/v"), std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("target/"), std::string::npos) << "parameters match: " << msg;
  }
}

// Parameters only (no optimizer): the t5x checkpoint's slots are not needed.
TEST(T5xCheckpointTest, RestoresParametersOnly) {
  const json e = Expected();
  models::EncoderDecoderModel model = MakeModel(e);
  models::ParamStore params = model.InitParams(0);
  trainer::RestoreReport report =
      trainer::RestoreTrainState(CheckpointDir(e), params, nullptr, trainer::RestoreOptions{});
  EXPECT_EQ(report.step, e.at("step").get<int64_t>());
  at::NoGradGuard no_grad;
  const double loss =
      model.Loss(params, models::goldens::Batch(e.at("batch")), false).loss.item<double>();
  const double t5x_loss = e.at("loss").get<double>();
  EXPECT_LE(std::abs(loss - t5x_loss), kRelTol * std::abs(t5x_loss));
}

}  // namespace
}  // namespace t5xx
