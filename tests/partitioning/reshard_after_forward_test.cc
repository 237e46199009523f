// ReshardAfterForward (partitioning/differentiable_collectives.h): the kernel's
// memory is gone between the forward and the backward pass, the backward
// pass computes with the refilled values exactly as without the release,
// and the memory is freed again once the matmul's backward has run.
#include "t5xx/partitioning/differentiable_collectives.h"

#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

namespace t5xx::partitioning {
namespace {

// x [2, 3, 4] (requires grad) @ w [4, 5], whose gradient with respect to x
// needs w: the values every case compares with, from a plain matmul.
struct Case {
  at::Tensor x = at::arange(24, at::kFloat).reshape({2, 3, 4}).div(7).requires_grad_(true);
  at::Tensor w_values = at::arange(20, at::kFloat).reshape({4, 5}).sub(9).div(5);
  at::Tensor weights = at::arange(30, at::kFloat).reshape({2, 3, 5}).cos();
};

at::Tensor PlainInputGradient(const Case& c) {
  at::Tensor x = c.x.detach().clone().requires_grad_(true);
  (at::matmul(x, c.w_values) * c.weights).sum().backward();
  return x.grad();
}

TEST(ReshardAfterForwardTest, ReleasesThenRefillsForTheBackwardPassOnly) {
  Case c;
  at::Tensor w = c.w_values.clone();  // "gathered": owns its memory alone
  const at::Tensor y = at::matmul(c.x, w);
  int gathers = 0;
  ReshardAfterForward(w, y, [&] {
    ++gathers;
    return c.w_values;
  });
  EXPECT_EQ(w.storage().nbytes(), 0u);  // released between forward and backward
  EXPECT_EQ(gathers, 0);
  const c10::weak_intrusive_ptr<c10::StorageImpl> weak = w.storage().getWeakStorageImpl();
  w = at::Tensor();  // only autograd keeps the kernel now
  (y * c.weights).sum().backward();
  EXPECT_EQ(gathers, 1);
  EXPECT_TRUE(at::equal(c.x.grad(), PlainInputGradient(c)));  // bitwise
  // The matmul's backward has run and dropped the kernel: its memory is
  // gone (nothing holds the storage but the hook's weak reference).
  EXPECT_TRUE(weak.expired());
}

TEST(ReshardAfterForwardTest, LeavesTensorsAloneWithoutABackwardPassOrSoleOwnership) {
  Case c;
  {
    at::NoGradGuard no_grad;  // inference: nothing is kept for a backward pass
    at::Tensor w = c.w_values.clone();
    ReshardAfterForward(w, at::matmul(c.x, w), [&] { return c.w_values; });
    EXPECT_TRUE(at::equal(w, c.w_values));
  }
  // A view into a larger tensor shares its memory with the rest: kept.
  at::Tensor big = at::cat({c.w_values, c.w_values}, 0);
  at::Tensor view = big.narrow(0, 4, 4);
  ReshardAfterForward(view, at::matmul(c.x, view), [&] { return c.w_values; });
  EXPECT_TRUE(at::equal(big.narrow(0, 0, 4), c.w_values));
  EXPECT_TRUE(at::equal(view, c.w_values));
}

}  // namespace
}  // namespace t5xx::partitioning
