// create_learning_rate_scheduler (t5x/utils.py), factor by factor.
#include "t5xx/optim/lr_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "optim_test_util.h"

namespace t5xx::optim {
namespace {

LearningRateSchedule Make(const std::string& factors, void (*set)(LearningRateSchedulerConfig&)) {
  LearningRateSchedulerConfig c;
  c.factors = factors;
  set(c);
  return LearningRateSchedule(c);
}

// Expected values below are hand arithmetic unless said otherwise.

TEST(LearningRateScheduleTest, Constant) {
  auto s = Make("constant", [](auto& c) { c.base_learning_rate = 0.3; });
  EXPECT_DOUBLE_EQ(s(0), 0.3);
  EXPECT_DOUBLE_EQ(s(123456), 0.3);
}

TEST(LearningRateScheduleTest, LinearWarmupFlooredAtMinLearningRate) {
  auto s = Make("constant * linear_warmup", [](auto& c) {
    c.base_learning_rate = 0.5;
    c.warmup_steps = 100;
  });
  EXPECT_DOUBLE_EQ(s(0), 1e-8);   // 0.5 * 0 -> min_learning_rate
  EXPECT_DOUBLE_EQ(s(25), 0.125);  // 0.5 * 25/100
  EXPECT_DOUBLE_EQ(s(100), 0.5);
  EXPECT_DOUBLE_EQ(s(400), 0.5);
}

TEST(LearningRateScheduleTest, LinearDecayIncludesBaseAndWarmup) {
  // linear_decay = b * min(s/w, 1 + decay_factor * (w - s)).
  auto s = Make("linear_decay", [](auto& c) {
    c.base_learning_rate = 0.5;
    c.warmup_steps = 10;
    c.decay_factor = 0.01;
  });
  EXPECT_DOUBLE_EQ(s(5), 0.25);                // 0.5 * min(0.5, 1.05)
  EXPECT_DOUBLE_EQ(s(10), 0.5);                // 0.5 * min(1, 1)
  EXPECT_NEAR(s(30), 0.4, 1e-15);              // 0.5 * min(3, 0.8)
  EXPECT_DOUBLE_EQ(s(120), 1e-8);              // 0.5 * -0.1 < 0 -> floor
  // With `constant` the base counts twice, as in t5x.
  auto twice = Make("constant * linear_decay", [](auto& c) {
    c.base_learning_rate = 0.5;
    c.warmup_steps = 10;
  });
  EXPECT_DOUBLE_EQ(twice(10), 0.25);
}

TEST(LearningRateScheduleTest, RsqrtDecay) {
  auto s = Make("constant * rsqrt_decay", [](auto& c) {
    c.base_learning_rate = 1.0;
    c.warmup_steps = 10000;
  });
  EXPECT_DOUBLE_EQ(s(0), 0.01);  // 1/sqrt(10000): flat, no ramp
  EXPECT_DOUBLE_EQ(s(9999), 0.01);
  EXPECT_DOUBLE_EQ(s(40000), 0.005);  // 1/sqrt(40000)
}

TEST(LearningRateScheduleTest, RsqrtNormalizedDecay) {
  auto s = Make("constant * linear_warmup * rsqrt_normalized_decay", [](auto& c) {
    c.base_learning_rate = 0.5;
    c.warmup_steps = 100;
  });
  EXPECT_DOUBLE_EQ(s(50), 0.25);        // 0.5 * 0.5 * 1
  EXPECT_DOUBLE_EQ(s(400), 0.5 * 0.5);  // sqrt(100)/sqrt(400) = 0.5
}

TEST(LearningRateScheduleTest, DecayEveryWithStepOffset) {
  auto s = Make("constant * decay_every", [](auto& c) {
    c.base_learning_rate = 1.0;
    c.decay_factor = 0.5;
    c.steps_per_decay = 10;
    c.step_offset = 3;
  });
  EXPECT_DOUBLE_EQ(s(0), 1.0);    // max(0, 0 - 3) = 0
  EXPECT_DOUBLE_EQ(s(12), 1.0);   // s = 9
  EXPECT_DOUBLE_EQ(s(13), 0.5);   // s = 10
  EXPECT_DOUBLE_EQ(s(28), 0.25);  // s = 25
  EXPECT_DOUBLE_EQ(s(33), 0.125);
}

TEST(LearningRateScheduleTest, CosineDecay) {
  auto s = Make("cosine_decay", [](auto& c) {
    c.warmup_steps = 10;
    c.steps_per_cycle = 40;
  });
  EXPECT_DOUBLE_EQ(s(5), 1.0);               // progress max(0, -0.125) = 0
  EXPECT_DOUBLE_EQ(s(10), 1.0);              // cos(0)
  EXPECT_NEAR(s(30), 0.5, 1e-15);            // progress 0.5: cos(pi/2) = 0
  EXPECT_NEAR(s(40), 0.146446609, 1e-9);     // 0.5 * (1 + cos(0.75 pi))
  EXPECT_DOUBLE_EQ(s(50), 1.0);              // progress 1.0 mod 1 = 0: new cycle
}

// Values of t5x's create_learning_rate_scheduler itself (float32, JAX),
// from tests/optim/make_goldens.py ("schedules"); t5xx computes in double,
// so they agree to float32 precision.
TEST(LearningRateScheduleTest, MatchesT5x) {
  struct Case {
    void (*set)(LearningRateSchedulerConfig&);
    std::vector<std::pair<int64_t, double>> values;
  };
  const std::vector<Case> cases = {
      {[](auto& c) { c.factors = "constant * linear_warmup * rsqrt_decay"; c.warmup_steps = 100; },
       {{0, 9.99999993922529e-09}, {1, 0.0004999999655410647}, {5, 0.0024999999441206455},
        {10, 0.004999999888241291}, {11, 0.005499999970197678}, {30, 0.015000000596046448},
        {50, 0.02500000037252903}, {400, 0.02500000037252903}}},
      {[](auto& c) {
         c.factors = "constant * linear_decay";
         c.base_learning_rate = 0.5;
         c.warmup_steps = 10;
         c.decay_factor = 0.01;
       },
       {{0, 9.99999993922529e-09}, {1, 0.02500000037252903}, {5, 0.125}, {10, 0.25},
        {11, 0.2475000023841858}, {30, 0.20000000298023224}, {50, 0.15000000596046448},
        {400, 9.99999993922529e-09}}},
      {[](auto& c) {
         c.factors = "constant * cosine_decay";
         c.warmup_steps = 10;
         c.steps_per_cycle = 40;
       },
       {{0, 0.5}, {1, 0.5}, {5, 0.5}, {10, 0.5}, {11, 0.4992293119430542},
        {30, 0.2499999850988388}, {50, 0.5}, {400, 0.0732233077287674}}},
      {[](auto& c) {
         c.factors = "constant * decay_every";
         c.decay_factor = 0.5;
         c.steps_per_decay = 7;
         c.step_offset = 3;
       },
       {{0, 0.5}, {1, 0.5}, {5, 0.5}, {10, 0.25}, {11, 0.25}, {30, 0.0625}, {50, 0.0078125},
        {400, 9.99999993922529e-09}}},
      {[](auto& c) {
         c.factors = "linear_decay";
         c.base_learning_rate = 1.0;
         c.warmup_steps = 4;
         c.decay_factor = 0.5;
         c.min_learning_rate = 0.01;
       },
       {{0, 0.009999999776482582}, {1, 0.25}, {5, 0.5}, {10, 0.009999999776482582},
        {11, 0.009999999776482582}, {30, 0.009999999776482582}, {50, 0.009999999776482582},
        {400, 0.009999999776482582}}},
  };
  for (const Case& k : cases) {
    LearningRateSchedulerConfig c;
    k.set(c);
    LearningRateSchedule s(c);
    for (const auto& [step, want] : k.values) {
      EXPECT_NEAR(s(step), want, 1e-7 * want) << c.factors << " at step " << step;
    }
  }
}

TEST(LearningRateScheduleTest, UnknownOrEmptyFactorIsAClearError) {
  LearningRateSchedulerConfig c;
  c.factors = "constant * rsqrt_dekay";
  EXPECT_OPTIM_ERROR(LearningRateSchedule{c},
                     "utils.create_learning_rate_scheduler.factors: unknown factor "
                     "'rsqrt_dekay' in 'constant * rsqrt_dekay' (known: constant, "
                     "linear_warmup, linear_decay, rsqrt_decay, rsqrt_normalized_decay, "
                     "decay_every, cosine_decay)");
  c.factors = "constant * ";
  EXPECT_OPTIM_ERROR(LearningRateSchedule{c}, "has an empty factor");
  c.factors = "";
  EXPECT_OPTIM_ERROR(LearningRateSchedule{c}, "has an empty factor");
  c.factors = "constant *";  // Python's split gives a trailing '' here too
  EXPECT_OPTIM_ERROR(LearningRateSchedule{c}, "has an empty factor");
}

TEST(LearningRateScheduleTest, BadArgumentsNameTheGinKey) {
  LearningRateSchedulerConfig c;
  c.factors = "constant * linear_decay";
  c.warmup_steps = 0;
  EXPECT_OPTIM_ERROR(LearningRateSchedule{c},
                     "utils.create_learning_rate_scheduler.warmup_steps must be positive for "
                     "'constant * linear_decay' (factor linear_decay divides by it), got 0");
  c.factors = "constant * cosine_decay";
  EXPECT_NO_THROW(LearningRateSchedule{c});  // cosine_decay takes warmup_steps = 0
  c.warmup_steps = -1;
  EXPECT_OPTIM_ERROR(LearningRateSchedule{c}, "warmup_steps must be >= 0, got -1");
  c.warmup_steps = 0;
  c.steps_per_cycle = 0;
  EXPECT_OPTIM_ERROR(LearningRateSchedule{c},
                     "utils.create_learning_rate_scheduler.steps_per_cycle must be positive");
  c.factors = "decay_every";
  c.steps_per_decay = 0;
  EXPECT_OPTIM_ERROR(LearningRateSchedule{c},
                     "utils.create_learning_rate_scheduler.steps_per_decay must be positive");
}

}  // namespace
}  // namespace t5xx::optim
