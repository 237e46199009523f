// Helpers shared by the optimizer tests.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/util/error.h"

namespace t5xx::optim::testing {

// The closed-form test input of tests/optim/make_goldens.py: element i of a
// tensor with seed s is float32(scale * (((i * 37 + s * 11) % 19) - 9)).
inline at::Tensor Vals(std::vector<int64_t> shape, int64_t seed, double scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[static_cast<size_t>(i)] =
        static_cast<float>(scale * static_cast<double>(((i * 37 + seed * 11) % 19) - 9));
  }
  return at::tensor(v).reshape(shape);
}

// Element i of a tensor with seed s: a value in [-scale, scale) from a
// 64-bit mix (splitmix64's finaliser) of (s, i).
inline at::Tensor Noise(const std::vector<int64_t>& shape, uint64_t seed, double scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i) + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 11) / 9007199254740992.0;  // [0, 1)
    v[static_cast<size_t>(i)] = static_cast<float>(scale * (2 * u - 1));
  }
  return at::tensor(v).reshape(shape);
}

// A golden tensor: shape and C-order values.
struct Golden {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

// Expects `actual` (any float dtype) to have golden's shape and values
// within atol + rtol * |golden|.
inline void ExpectClose(const at::Tensor& actual, const Golden& golden, const std::string& what,
                        double rtol = 2e-6, double atol = 1e-9) {
  ASSERT_EQ(actual.sizes().vec(), golden.shape) << what;
  at::Tensor a = actual.detach().to(at::kDouble).contiguous().reshape({-1});
  ASSERT_EQ(static_cast<size_t>(a.numel()), golden.values.size()) << what;
  const double* p = a.data_ptr<double>();
  for (size_t i = 0; i < golden.values.size(); ++i) {
    const double g = golden.values[i];
    if (std::isnan(g)) {
      EXPECT_TRUE(std::isnan(p[i])) << what << "[" << i << "]";
      continue;
    }
    EXPECT_NEAR(p[i], g, atol + rtol * std::fabs(g)) << what << "[" << i << "]";
  }
}

// The t5xx::Error message `fn` throws, or "<no t5xx::Error>".
template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no t5xx::Error>";
}

}  // namespace t5xx::optim::testing

#define EXPECT_OPTIM_ERROR(stmt, text)                                              \
  do {                                                                              \
    const std::string msg_ = ::t5xx::optim::testing::ErrorOf([&] { stmt; });        \
    EXPECT_NE(msg_.find(text), std::string::npos)                                   \
        << "message: '" << msg_ << "'\nexpected to contain: '" << (text) << "'";    \
  } while (0)
