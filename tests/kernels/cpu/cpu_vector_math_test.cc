// Tests ExpApprox (cpu_vector_math.h) against std::exp in double precision
// over its whole range, sampled densely, and what it gives outside it.
#include <gtest/gtest.h>

#include <cmath>

#include "t5xx/kernels/cpu/cpu_vector_math.h"

namespace t5xx::device {
namespace {

TEST(ExpApprox, RelativeErrorBelowTwoUlpOverItsRange) {
  double worst = 0.0;
  float worst_x = 0.0f;
  for (int i = 0; i <= 2000000; ++i) {
    const float x = -87.3f + static_cast<float>(i) * (175.6f / 2000000.0f);
    const double expected = std::exp(static_cast<double>(x));
    const double error = std::fabs(ExpApprox(x) - expected) / expected;
    if (error > worst) {
      worst = error;
      worst_x = x;
    }
  }
  EXPECT_LT(worst, 2.0e-7) << "at x = " << worst_x;
  EXPECT_EQ(ExpApprox(0.0f), 1.0f);
  EXPECT_NEAR(ExpApprox(1.0f), 2.718281828f, 2.718281828f * 2e-7);
  EXPECT_NEAR(ExpApprox(-1.0f), 0.3678794412f, 0.3678794412f * 2e-7);
}

TEST(ExpApprox, ZeroBelowAndClampedAboveItsRange) {
  EXPECT_EQ(ExpApprox(-1000.0f), 0.0f);
  EXPECT_EQ(ExpApprox(-1e10f), 0.0f);
  EXPECT_EQ(ExpApprox(-87.31f), 0.0f);
  EXPECT_GT(ExpApprox(-87.29f), 1e-38f);
  EXPECT_FLOAT_EQ(ExpApprox(1000.0f), ExpApprox(88.3f));
  EXPECT_TRUE(std::isfinite(ExpApprox(1000.0f)));
  const double top = std::exp(static_cast<double>(88.3f));
  EXPECT_NEAR(ExpApprox(88.3f), top, top * 2e-7);
}

}  // namespace
}  // namespace t5xx::device
