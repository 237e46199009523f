// optax's schedules (optim/optax/schedules.h) checked against optax 0.2.3:
// tests/optim/optax_goldens.json["schedules"] holds each schedule's value
// at int32 counts 0..N (boundaries included), as
// tests/optim/make_optax_goldens.py evaluated them; the C++ configs below
// are the same calls. Plus the errors where optax raises or t5xx refuses,
// and the option checks of the optax optimizers (optim/optax/aliases.h).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "optim_test_util.h"
#include "t5xx/optim/optax_optimizers.h"

namespace t5xx::optim::optax {
namespace {

using SKind = ScheduleConfig::Kind;

ScheduleConfig S(SKind kind) { return ScheduleConfig::Defaults(kind); }

ScheduleConfig Linear(double init, double end, int64_t steps, int64_t begin = 0) {
  ScheduleConfig s = S(SKind::kLinear);
  s.init_value = init, s.end_value = end, s.transition_steps = steps, s.transition_begin = begin;
  return s;
}

ScheduleConfig Cosine(double init, int64_t steps, double alpha = 0, double exponent = 1) {
  ScheduleConfig s = S(SKind::kCosineDecay);
  s.init_value = init, s.decay_steps = steps, s.alpha = alpha, s.exponent = exponent;
  return s;
}

ScheduleConfig WarmupCosine(double init, double peak, int64_t warmup, int64_t decay, double end,
                            double exponent = 1) {
  ScheduleConfig s = S(SKind::kWarmupCosineDecay);
  s.init_value = init, s.peak_value = peak, s.warmup_steps = warmup, s.decay_steps = decay;
  s.end_value = end, s.exponent = exponent;
  return s;
}

ScheduleConfig Exponential(double init, int64_t steps, double rate, int64_t begin = 0,
                           bool staircase = false, std::optional<double> end = std::nullopt) {
  ScheduleConfig s = S(SKind::kExponentialDecay);
  s.init_value = init, s.transition_steps = steps, s.decay_rate = rate;
  s.transition_begin = begin, s.staircase = staircase, s.exponential_end_value = end;
  return s;
}

// make_optax_goldens.py's schedules(), in the same words.
std::map<std::string, ScheduleConfig> Schedules() {
  std::map<std::string, ScheduleConfig> m;
  ScheduleConfig constant = S(SKind::kConstant);
  constant.value = 0.003;
  m["constant"] = constant;
  m["linear"] = Linear(0.1, 0.01, 10);
  m["linear_begin"] = Linear(0.0, 1.0, 4, 3);
  m["cosine"] = Cosine(0.1, 10);
  m["cosine_alpha_exponent"] = Cosine(0.5, 8, 0.1, 2.0);
  m["warmup_cosine"] = WarmupCosine(0.0, 5e-5, 4, 12, 0.0);
  m["warmup_cosine_end"] = WarmupCosine(1e-3, 0.01, 3, 10, 1e-4, 1.5);
  m["exponential"] = Exponential(0.1, 3, 0.5);
  m["exponential_options"] = Exponential(0.1, 3, 0.5, 2, true, 0.02);
  m["exponential_growth"] = Exponential(0.01, 2, 1.5, 0, false, 0.03);
  ScheduleConfig piecewise = S(SKind::kPiecewiseConstant);
  piecewise.init_value = 0.1;
  piecewise.boundaries_and_scales = {{{3, 0.5}, {6, 0.1}}};
  m["piecewise"] = piecewise;
  ScheduleConfig join = S(SKind::kJoin);
  join.schedules = {S(SKind::kConstant), Linear(0.1, 0.0, 4), Cosine(0.05, 5)};
  join.schedules[0].value = 0.1;
  join.boundaries = {3, 8};
  m["join"] = join;
  return m;
}

TEST(OptaxScheduleTest, ValuesMatchOptax) {
  std::ifstream in(std::string(T5XX_SOURCE_DIR) + "/tests/optim/optax_goldens.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json golden = nlohmann::json::parse(in)["schedules"];
  const auto mine = Schedules();
  ASSERT_EQ(golden.size(), mine.size());
  for (const auto& [name, values] : golden.items()) {
    ASSERT_TRUE(mine.count(name)) << name;
    const Schedule s(mine.at(name));
    for (const auto& sv : values) {
      const int64_t step = sv[0].get<int64_t>();
      const double want = sv[1].get<double>();
      EXPECT_NEAR(s(step), want, 1e-6 * std::fabs(want) + 1e-12) << name << " at " << step;
    }
  }
}

TEST(OptaxScheduleTest, ByHand) {
  // warmup_cosine_decay(0, 1, 2, 6): 0, 0.5, then cos from 1 to 0 over 4.
  const Schedule w(WarmupCosine(0, 1, 2, 6, 0));
  EXPECT_DOUBLE_EQ(w(1), 0.5);
  EXPECT_DOUBLE_EQ(w(2), 1.0);
  EXPECT_NEAR(w(4), 0.5, 1e-15);
  EXPECT_NEAR(w(6), 0.0, 1e-15);
  EXPECT_NEAR(w(100), 0.0, 1e-15);
  EXPECT_DOUBLE_EQ(Schedule(Exponential(1, 0, 0.5))(10), 1.0);  // transition_steps <= 0
}

TEST(OptaxScheduleTest, ErrorsNameTheGinKey) {
  EXPECT_OPTIM_ERROR(Schedule{Cosine(0.1, 0)},
                     "optax.cosine_decay_schedule.decay_steps = 0: expected > 0");
  EXPECT_OPTIM_ERROR(Schedule{WarmupCosine(0, 1, 10, 10, 0)},
                     "optax.warmup_cosine_decay_schedule.decay_steps = 10: expected > "
                     "optax.warmup_cosine_decay_schedule.warmup_steps = 10");
  ScheduleConfig p = S(SKind::kPiecewiseConstant);
  p.boundaries_and_scales = {{{3, -0.5}}};
  EXPECT_OPTIM_ERROR(Schedule{p}, "optax.piecewise_constant_schedule.boundaries_and_scales[3] = "
                                  "-0.5: expected a scale >= 0");
  ScheduleConfig j = S(SKind::kJoin);
  j.schedules = {Linear(0, 1, 2), Linear(1, 0, 2)};
  EXPECT_OPTIM_ERROR(Schedule{j}, "optax.join_schedules: 2 schedules need 1 boundaries, got 0");
  j.boundaries = {2};
  j.schedules[1] = Cosine(1, -1);
  EXPECT_OPTIM_ERROR(Schedule{j}, "optax.cosine_decay_schedule.decay_steps = -1");
  LearningRateSchedulerConfig t5x;
  t5x.factors = "constant * warmup";
  EXPECT_OPTIM_ERROR(Schedule{ScheduleConfig::T5x(t5x)}, "unknown factor 'warmup'");
}

TEST(OptaxOptionsTest, BadValuesNameTheGinKey) {
  using Kind = OptaxTransform::Kind;
  auto bad = [](Kind kind, auto set) {
    OptaxTransform t = OptaxTransform::Defaults(kind);
    t.learning_rate.value = 0.01;
    set(t);
    OptaxOptimizer opt(OptaxConfig{true, {t}});
  };
  EXPECT_OPTIM_ERROR(bad(Kind::kLion, [](auto& t) { t.b1 = 1.5; }),
                     "optax.lion.b1 = 1.5 must be in [0, 1) (optax: 0.9)");
  EXPECT_OPTIM_ERROR(bad(Kind::kLion, [](auto& t) { t.b2 = 1; }),
                     "optax.lion.b2 = 1 must be in [0, 1) (optax: 0.99)");
  EXPECT_OPTIM_ERROR(bad(Kind::kSgd, [](auto& t) { t.momentum = -0.1; }),
                     "optax.sgd.momentum = -0.1 must be in [0, 1)");
  EXPECT_OPTIM_ERROR(bad(Kind::kSgd, [](auto& t) { t.nesterov = true; }),
                     "optax.sgd.nesterov = True needs a momentum");
  EXPECT_OPTIM_ERROR(bad(Kind::kRmsprop, [](auto& t) { t.decay = 1; }),
                     "optax.rmsprop.decay = 1 must be in [0, 1) (optax: 0.9)");
  EXPECT_OPTIM_ERROR(bad(Kind::kAdagrad, [](auto& t) { t.initial_accumulator_value = -1; }),
                     "optax.adagrad.initial_accumulator_value = -1 must be >= 0 (optax: 0.1)");
  EXPECT_OPTIM_ERROR(bad(Kind::kLamb, [](auto& t) { t.eps = -1; }),
                     "optax.lamb.eps = -1 must be >= 0 (optax: 1e-6)");
  EXPECT_OPTIM_ERROR(bad(Kind::kAdam, [](auto& t) { t.learning_rate.schedule = Cosine(1, 0); }),
                     "optax.cosine_decay_schedule.decay_steps = 0");
  EXPECT_OPTIM_ERROR(bad(Kind::kClip, [](auto& t) { t.max_delta = -1; }),
                     "optax.clip.max_delta = -1 must be >= 0");
  EXPECT_OPTIM_ERROR((OptaxOptimizer{OptaxConfig{false, {OptaxTransform::Defaults(Kind::kClip)}}}),
                     "an unchained optax optimizer must be exactly one of adam, adamw, lion, sgd, "
                     "rmsprop, adagrad, lamb");
}

TEST(OptaxOptionsTest, DefaultsAreOptaxs) {
  using Kind = OptaxTransform::Kind;
  const auto lion = OptaxTransform::Defaults(Kind::kLion);
  EXPECT_EQ(lion.b2, 0.99);
  EXPECT_EQ(lion.weight_decay, 1e-3);
  EXPECT_EQ(OptaxTransform::Defaults(Kind::kAdamW).weight_decay, 1e-4);
  EXPECT_EQ(OptaxTransform::Defaults(Kind::kLamb).weight_decay, 0.0);
  EXPECT_EQ(OptaxTransform::Defaults(Kind::kLamb).eps, 1e-6);
  EXPECT_EQ(OptaxTransform::Defaults(Kind::kAdagrad).eps, 1e-7);
  EXPECT_EQ(OptaxTransform::Defaults(Kind::kSgd).momentum, std::nullopt);
  EXPECT_EQ(OptaxTransform::Defaults(Kind::kRmsprop).decay, 0.9);
  EXPECT_EQ(OptaxTransform::Defaults(Kind::kRmsprop).eps, 1e-8);
}

}  // namespace
}  // namespace t5xx::optim::optax
