// optax's optimizers and transformations as t5x wraps them, checked against
// optax 0.2.3 itself: tests/optim/optax_goldens.json holds the parameters
// and every state array after 20 steps of each case, and the state paths
// of t5x's OptaxWrapper.state_dict, as tests/optim/make_optax_goldens.py
// wrote them (its top says how; the file records optax/jax/flax versions).
// The C++ side builds each case from its own description below (the
// Python side from the same list in make_optax_goldens.py) and runs the
// same closed-form inputs (optim_test_util.h Vals).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "optim_test_util.h"
#include "t5xx/optim/optax_optimizers.h"

namespace t5xx::optim {
namespace {

using optax::ScheduleConfig;
using testing::Vals;
using Kind = OptaxTransform::Kind;
using SKind = ScheduleConfig::Kind;

const nlohmann::json& Goldens() {
  static const nlohmann::json j = [] {
    std::ifstream in(std::string(T5XX_SOURCE_DIR) + "/tests/optim/optax_goldens.json");
    EXPECT_TRUE(in.good()) << "tests/optim/optax_goldens.json not found";
    return nlohmann::json::parse(in);
  }();
  return j;
}

OptaxTransform T(Kind kind, std::function<void(OptaxTransform&)> set = {}) {
  OptaxTransform t = OptaxTransform::Defaults(kind);
  if (set) set(t);
  return t;
}

optax::LearningRate Rate(double v) { return {v, std::nullopt}; }
optax::LearningRate Rate(ScheduleConfig s) { return {0, std::move(s)}; }

ScheduleConfig WarmupCosine(double init, double peak, int64_t warmup, int64_t decay,
                            double end) {
  ScheduleConfig s = ScheduleConfig::Defaults(SKind::kWarmupCosineDecay);
  s.init_value = init;
  s.peak_value = peak;
  s.warmup_steps = warmup;
  s.decay_steps = decay;
  s.end_value = end;
  return s;
}

// optimizers.<name>(...) of one optimizer, or optimizers.chain([...]).
OptaxConfig Wrapped(OptaxTransform t) {
  t.gin_name = "optimizers." + optax::OptaxName(t.kind);
  return {false, {t}};
}
OptaxConfig Chain(std::vector<OptaxTransform> ts) { return {true, std::move(ts)}; }

// The cases of make_optax_goldens.py, in the same words.
std::map<std::string, OptaxConfig> Cases() {
  std::map<std::string, OptaxConfig> c;
  c["adam_default"] = Wrapped(T(Kind::kAdam, [](auto& t) { t.learning_rate = Rate(0.01); }));
  c["adam_options"] = Wrapped(T(Kind::kAdam, [](auto& t) {
    t.learning_rate = Rate(0.02);
    t.b1 = 0.8, t.b2 = 0.95, t.eps = 1e-3, t.eps_root = 1e-4;
    t.nesterov = true;
    t.mu_dtype = at::kBFloat16;
  }));
  c["adamw_warmup_cosine"] = Wrapped(T(Kind::kAdamW, [](auto& t) {
    t.learning_rate = Rate(WarmupCosine(0.0, 0.02, 5, 20, 0.001));
    t.weight_decay = 0.05;
  }));
  c["lion_default"] = Wrapped(T(Kind::kLion, [](auto& t) { t.learning_rate = Rate(0.001); }));
  c["lion_options"] = Wrapped(T(Kind::kLion, [](auto& t) {
    t.learning_rate = Rate(WarmupCosine(0.0, 0.01, 5, 20, 0.001));
    t.b1 = 0.8, t.b2 = 0.9, t.weight_decay = 0.1;
  }));
  c["sgd_plain"] = Wrapped(T(Kind::kSgd, [](auto& t) { t.learning_rate = Rate(0.1); }));
  c["sgd_momentum"] = Wrapped(T(Kind::kSgd, [](auto& t) {
    t.learning_rate = Rate(0.1);
    t.momentum = 0.9;
  }));
  c["sgd_nesterov_schedule"] = Wrapped(T(Kind::kSgd, [](auto& t) {
    ScheduleConfig s = ScheduleConfig::Defaults(SKind::kLinear);
    s.init_value = 0.1, s.end_value = 0.01, s.transition_steps = 15;
    t.learning_rate = Rate(s);
    t.momentum = 0.8;
    t.nesterov = true;
  }));
  c["rmsprop_default"] = Wrapped(T(Kind::kRmsprop, [](auto& t) { t.learning_rate = Rate(0.01); }));
  c["rmsprop_centered_momentum"] = Wrapped(T(Kind::kRmsprop, [](auto& t) {
    t.learning_rate = Rate(0.01);
    t.decay = 0.8, t.eps = 1e-4, t.initial_scale = 0.1;
    t.centered = true;
    t.momentum = 0.9;
  }));
  c["rmsprop_nesterov_schedule"] = Wrapped(T(Kind::kRmsprop, [](auto& t) {
    ScheduleConfig s = ScheduleConfig::Defaults(SKind::kExponentialDecay);
    s.init_value = 0.02, s.transition_steps = 4, s.decay_rate = 0.7;
    t.learning_rate = Rate(s);
    t.momentum = 0.5;
    t.nesterov = true;
  }));
  c["adagrad_default"] = Wrapped(T(Kind::kAdagrad, [](auto& t) { t.learning_rate = Rate(0.1); }));
  c["adagrad_options"] = Wrapped(T(Kind::kAdagrad, [](auto& t) {
    t.learning_rate = Rate(0.05);
    t.initial_accumulator_value = 0.0, t.eps = 1e-3;
  }));
  c["lamb_default"] = Wrapped(T(Kind::kLamb, [](auto& t) { t.learning_rate = Rate(0.01); }));
  c["lamb_options"] = Wrapped(T(Kind::kLamb, [](auto& t) {
    ScheduleConfig s = ScheduleConfig::Defaults(SKind::kCosineDecay);
    s.init_value = 0.02, s.decay_steps = 20;
    t.learning_rate = Rate(s);
    t.b1 = 0.8, t.eps = 1e-3, t.weight_decay = 0.1;
  }));
  c["chain_clip_lion_warmup_cosine"] =
      Chain({T(Kind::kClip, [](auto& t) { t.max_delta = 0.02; }), T(Kind::kLion, [](auto& t) {
               t.learning_rate = Rate(WarmupCosine(0.0, 5e-3, 4, 20, 0.0));
             })});
  c["chain_global_norm_sgd_momentum"] =
      Chain({T(Kind::kClipByGlobalNorm, [](auto& t) { t.max_norm = 0.05; }),
             T(Kind::kSgd, [](auto& t) {
               t.learning_rate = Rate(0.1);
               t.momentum = 0.9;
             })});
  c["chain_transforms"] =
      Chain({T(Kind::kAddDecayedWeights, [](auto& t) { t.weight_decay = 0.01; }),
             T(Kind::kScaleBySchedule, [](auto& t) {
               ScheduleConfig s = ScheduleConfig::Defaults(SKind::kPiecewiseConstant);
               s.init_value = 1.0;
               s.boundaries_and_scales = {{{5, 0.5}, {12, 0.2}}};
               t.learning_rate = Rate(s);
             }),
             T(Kind::kScale, [](auto& t) { t.step_size = -0.05; })});
  c["chain_adam_t5x_schedule"] =
      Chain({T(Kind::kClipByGlobalNorm, [](auto& t) { t.max_norm = 1.0; }),
             T(Kind::kAdam, [](auto& t) {
               LearningRateSchedulerConfig lr;
               lr.factors = "constant * linear_warmup";
               lr.base_learning_rate = 0.05;
               lr.warmup_steps = 5;
               t.learning_rate = Rate(ScheduleConfig::T5x(lr));
             })});
  return c;
}

struct Spec {
  std::string name;
  std::vector<int64_t> shape;
  int64_t seed;
  double scale;
};
const std::vector<Spec> kSpecs = {{"a", {2, 3}, 20, 0.2}, {"b", {3}, 21, 0.2}};

// |actual - golden| <= 1e-6 * |golden| + atol for every element, with atol
// 1e-6 of the array's largest magnitude (float32 sums such as a global norm
// differ from XLA's in the last bit, which cancellation in a moment can
// lift above 1e-6 of a small element) and at least `floor`. Returns the
// largest relative error among elements above atol.
double Compare(const at::Tensor& actual, const nlohmann::json& g, const std::string& what,
               double floor) {
  EXPECT_EQ(actual.sizes().vec(), g["shape"].get<std::vector<int64_t>>()) << what;
  const auto want = g["values"].get<std::vector<double>>();
  const at::Tensor a = actual.detach().to(at::kDouble).contiguous().reshape({-1});
  if (static_cast<size_t>(a.numel()) != want.size()) {
    ADD_FAILURE() << what << ": " << a.numel() << " values, golden " << want.size();
    return 0;
  }
  double atol = floor;
  for (double w : want) atol = std::max(atol, 1e-6 * std::fabs(w));
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double v = a.data_ptr<double>()[i], w = want[i];
    EXPECT_NEAR(v, w, 1e-6 * std::fabs(w) + atol) << what << "[" << i << "]";
    if (std::fabs(w) > atol) worst = std::max(worst, std::fabs(v - w) / std::fabs(w));
  }
  return worst;
}

std::string DTypeName(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "float32";
    case at::kBFloat16: return "bfloat16";
    case at::kInt: return "int32";
    default: return "other";
  }
}

class OptaxGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OptaxGoldenTest, TwentyStepsMatchOptax) {
  const std::string name = GetParam();
  const nlohmann::json& want = Goldens()["cases"][name];
  ASSERT_FALSE(want.is_null()) << name << " is not in optax_goldens.json";
  const int steps = Goldens()["steps"].get<int>();
  models::ParamStore store;
  for (const Spec& s : kSpecs) {
    store.Add(s.name, Vals(s.shape, s.seed, s.scale), std::vector<std::string>(s.shape.size(), "embed"));
  }
  OptaxOptimizer opt(Cases().at(name));
  opt.Init(store);
  for (int t = 0; t < steps; ++t) {
    for (size_t i = 0; i < kSpecs.size(); ++i) {
      const Spec& s = kSpecs[i];
      store.params()[i].value.mutable_grad() = Vals(s.shape, s.seed + 100 + t, s.scale * 0.5);
    }
    opt.Apply(store, 123.0);  // the trainer's rate is ignored
  }
  EXPECT_EQ(opt.step(), steps);
  double worst = 0;
  for (const Spec& s : kSpecs) {
    worst = std::max(worst, Compare(store.Get(s.name), want["params"][s.name], s.name, 1e-7));
  }
  std::vector<std::string> paths;
  for (const StateArray& a : opt.StateArrays()) {
    paths.push_back(a.path);
    const nlohmann::json& g = want["state"][a.path];
    if (g.is_null()) {
      ADD_FAILURE() << "state path " << a.path << " is not in t5x's state dict";
      continue;
    }
    EXPECT_EQ(DTypeName(a.value.scalar_type()), g["dtype"].get<std::string>()) << a.path;
    EXPECT_EQ(a.store_inline, a.value.dim() == 0) << a.path;
    worst = std::max(worst, Compare(a.value, g, a.path, 1e-9));
  }
  std::vector<std::string> golden_paths;
  for (const auto& [k, v] : want["state"].items()) golden_paths.push_back(k);
  std::sort(paths.begin(), paths.end());
  EXPECT_EQ(paths, golden_paths);
  std::cout << "[ max rel error vs optax ] " << name << ": " << worst << "\n";
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const auto& [k, v] : Cases()) names.push_back(k);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Optax, OptaxGoldenTest, ::testing::ValuesIn(CaseNames()),
                         [](const auto& info) { return info.param; });

TEST(OptaxGoldenFileTest, EveryGoldenCaseIsTested) {
  std::vector<std::string> golden;
  for (const auto& [k, v] : Goldens()["cases"].items()) golden.push_back(k);
  EXPECT_EQ(golden, CaseNames());
  EXPECT_EQ(Goldens()["versions"]["optax"], "0.2.3");
}

}  // namespace
}  // namespace t5xx::optim
