// Tests RowMax (cpu_row_max.h) against std::max_element on rows of every
// length around the vector widths, with the maximum at every position, and
// on all-negative rows and the empty row.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "t5xx/kernels/cpu/cpu_row_max.h"

namespace t5xx::device {
namespace {

TEST(RowMax, EqualsMaxElementForEveryLengthAndPosition) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(-50.0f, 10.0f);  // mostly negative
  for (int64_t n = 1; n <= 70; ++n) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t at = 0; at < n; ++at) {
      for (float& v : x) v = normal(rng);
      x[static_cast<size_t>(at)] = 3.5f + static_cast<float>(at);
      ASSERT_EQ(RowMax(x.data(), n), *std::max_element(x.begin(), x.end()))
          << "n " << n << " max at " << at;
    }
  }
  std::vector<float> negative = {-7.0f, -1e10f, -2.5f, -9.0f};
  EXPECT_EQ(RowMax(negative.data(), 4), -2.5f);
  EXPECT_EQ(RowMax(negative.data(), 0), -3.0e38f);
}

}  // namespace
}  // namespace t5xx::device
