#include "t5xx/optim/adafactor.h"

#include <gtest/gtest.h>

#include "t5xx/optim/lr_schedule.h"
#include "t5xx/util/error.h"

namespace t5xx::optim {
namespace {

// Golden values: the update rule in adafactor.h evaluated by hand with
// Python's `math` module (plain arithmetic, no t5xx code), lr = 0.01.
TEST(AdafactorTest, UnfactoredTwoStepsByHand) {
  models::ParamStore store;
  store.Add("w", at::tensor({0.5f, -1.0f, 2.0f}), {"embed"});
  Adafactor opt({});
  opt.Init(store);
  at::Tensor w = store.params()[0].value;
  // Step 0: decay = 0, v = g^2, u = sign(g), rms(u) = 1; scale = rms(w) =
  // sqrt(1.75) = 1.3228757 -> w -= 0.013228757 * sign(g).
  w.mutable_grad() = at::tensor({0.1f, -0.2f, 0.3f});
  opt.Apply(store, 0.01);
  EXPECT_NEAR(w[0].item<double>(), 0.486771243, 1e-6);
  EXPECT_NEAR(w[1].item<double>(), -0.986771243, 1e-6);
  EXPECT_NEAR(w[2].item<double>(), 1.986771243, 1e-6);
  // Step 1: decay = 1 - 2^-0.8, new grad 0.2 everywhere; clipping active.
  w.mutable_grad() = at::full({3}, 0.2f);
  opt.Apply(store, 0.01);
  EXPECT_NEAR(w[0].item<double>(), 0.471191968, 1e-6);
  EXPECT_NEAR(w[1].item<double>(), -0.999625438, 1e-6);
  EXPECT_NEAR(w[2].item<double>(), 1.976386244, 1e-6);
  EXPECT_EQ(opt.step(), 2);
}

TEST(AdafactorTest, FactoredStepByHand) {
  models::ParamStore store;
  store.Add("k", at::tensor({0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}).reshape({2, 3}),
            {"embed", "mlp"});
  AdafactorConfig cfg;
  cfg.min_dim_size_to_factor = 2;  // so a 2x3 kernel is factored
  Adafactor opt(cfg);
  opt.Init(store);
  const auto& st = opt.state().at("k");
  ASSERT_TRUE(st.is_factored);
  EXPECT_EQ(st.v_row.sizes(), (std::vector<int64_t>{2}));  // largest dim removed
  EXPECT_EQ(st.v_col.sizes(), (std::vector<int64_t>{3}));
  at::Tensor k = store.params()[0].value;
  k.mutable_grad() = at::tensor({0.01f, -0.02f, 0.03f, -0.04f, 0.05f, 0.06f}).reshape({2, 3});
  opt.Apply(store, 0.01);
  // v_row = row means of g^2 = (4.6667e-4, 2.5667e-3);
  // v_col = column means = (8.5e-4, 1.45e-3, 2.25e-3); rms(u) = 0.97086 < 1.
  const auto& s = opt.state().at("k");
  EXPECT_NEAR(s.v_row[0].item<double>(), 0.000466666667, 1e-9);
  EXPECT_NEAR(s.v_col[2].item<double>(), 0.00225, 1e-9);
  const double expected[2][3] = {{0.097591885, 0.203687506, 0.295559655},
                                 {0.404107295, 0.496069105, 0.596213261}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(k[i][j].item<double>(), expected[i][j], 1e-6) << i << "," << j;
}

TEST(AdafactorTest, DefaultHeuristicFactorsOnlyLargeMatrices) {
  models::ParamStore store;
  store.Add("big", at::zeros({256, 128}), {"embed", "mlp"});
  store.Add("small", at::zeros({6, 32}), {"heads", "relpos_buckets"});
  store.Add("vec", at::zeros({256}), {"embed"});
  Adafactor opt({});
  opt.Init(store);
  EXPECT_TRUE(opt.state().at("big").is_factored);
  EXPECT_FALSE(opt.state().at("small").is_factored);
  EXPECT_FALSE(opt.state().at("vec").is_factored);
  EXPECT_EQ(opt.state().at("small").v.sizes(), (std::vector<int64_t>{6, 32}));
  EXPECT_EQ(opt.state().at("small").v_row.sizes(), (std::vector<int64_t>{1}));
}

TEST(LearningRateScheduleTest, ConstantTimesRsqrtDecay) {
  LearningRateSchedulerConfig c;
  c.factors = "constant * rsqrt_decay";
  c.base_learning_rate = 1.0;
  c.warmup_steps = 10000;
  LearningRateSchedule s(c);
  EXPECT_DOUBLE_EQ(s(0), 0.01);       // 1/sqrt(10000): flat, no ramp
  EXPECT_DOUBLE_EQ(s(9999), 0.01);
  EXPECT_DOUBLE_EQ(s(40000), 0.005);  // 1/sqrt(40000)
}

TEST(LearningRateScheduleTest, OtherFactorsByHand) {
  LearningRateSchedulerConfig c;
  c.factors = "constant * linear_warmup * rsqrt_normalized_decay";
  c.base_learning_rate = 0.5;
  c.warmup_steps = 100;
  LearningRateSchedule s(c);
  EXPECT_DOUBLE_EQ(s(50), 0.25);           // 0.5 * 0.5 * 1
  EXPECT_DOUBLE_EQ(s(400), 0.5 * 0.5);     // sqrt(100)/sqrt(400) = 0.5
  c.factors = "constant * decay_every";
  c.decay_factor = 0.5;
  c.steps_per_decay = 10;
  EXPECT_DOUBLE_EQ(LearningRateSchedule(c)(25), 0.5 * 0.25);
  c.factors = "constant * cosine_decay";
  c.warmup_steps = 0;
  c.steps_per_cycle = 100;
  EXPECT_NEAR(LearningRateSchedule(c)(50), 0.5 * 0.5, 1e-12);  // cos(pi/2) = 0
}

TEST(LearningRateScheduleTest, UnknownFactorIsAClearError) {
  LearningRateSchedulerConfig c;
  c.factors = "constant * rsqrt_dekay";
  try {
    LearningRateSchedule s(c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown factor 'rsqrt_dekay'"), std::string::npos);
  }
}

}  // namespace
}  // namespace t5xx::optim
