// The split residual stream's pieces (partitioning/split_activations.h) over
// stand-ins for a model group of two processes.
//
// SplitRmsNorm: the other member mirrors this one (the same piece, scale
// and upstream gradient), so the whole row is [piece, piece] and the
// oracle is the one-process norm of that row (models::RmsNorm, the fused
// float32 kernel) and its autograd gradients, first half.
// ReleaseUntilBackward: the other member's piece is ours x 10 + 1; the
// kernel's gradient must equal a matmul's that kept its input throughout.
#include "t5xx/partitioning/split_activations.h"

#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

#include "t5xx/models/networks/layers.h"
#include "t5xx/partitioning/collectives/differentiable_collectives.h"

namespace t5xx::partitioning {
namespace {

// Rank 0 of two whose other member holds the same tensors as this one.
class MirrorPair final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void AllReduceSum(at::Tensor& t) const override {
    ++reductions;
    t.mul_(2);
  }
  mutable int reductions = 0;
};

// Rank 0 of two whose other member's piece is ours x 10 + 1.
class OtherPieceTimesTenPlusOne final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void AllReduceSum(at::Tensor&) const override { FAIL() << "not used"; }
  at::Tensor AllGather(const at::Tensor& t) const override {
    ++gathers;
    return at::cat({t, t * 10 + 1});
  }
  at::Tensor ReduceScatterSum(const at::Tensor& t) const override {
    return t.narrow(0, 0, t.size(0) / 2).clone();
  }
  mutable int gathers = 0;
};

TEST(SplitRmsNormTest, EqualsTheOneProcessNormOfTheWholeRowAndItsGradients) {
  at::manual_seed(5);
  for (bool with_scale : {true, false}) {
    MirrorPair group;
    const at::Tensor x = at::randn({3, 4, 6}).requires_grad_(true);
    const at::Tensor scale = at::rand({6}).add(0.5).requires_grad_(true);
    const at::Tensor y =
        SplitRmsNorm(x, with_scale ? scale : at::Tensor(), 1e-6, /*whole_width=*/12, group);
    const at::Tensor whole_x = at::cat({x, x}, -1).detach().requires_grad_(true);
    const at::Tensor whole_scale =
        (with_scale ? at::cat({scale, scale}) : at::ones({12})).detach().requires_grad_(true);
    const at::Tensor want = models::RmsNorm(whole_x, whole_scale, 1e-6, at::kFloat);
    EXPECT_TRUE(at::allclose(y, want.narrow(-1, 0, 6), 1e-6, 1e-6)) << with_scale;
    EXPECT_EQ(group.reductions, 1);  // the sum of squares
    const at::Tensor g = at::randn({3, 4, 6});
    y.backward(g);
    want.backward(at::cat({g, g}, -1));
    EXPECT_EQ(group.reductions, 2);  // and sum(g scale x^) in the backward pass
    EXPECT_TRUE(at::allclose(x.grad(), whole_x.grad().narrow(-1, 0, 6), 1e-5, 1e-6))
        << with_scale << ": " << (x.grad() - whole_x.grad().narrow(-1, 0, 6)).abs().max();
    if (with_scale) {
      EXPECT_TRUE(at::allclose(scale.grad(), whole_scale.grad().narrow(0, 0, 6), 1e-5, 1e-6));
    } else {
      EXPECT_FALSE(scale.grad().defined());
    }
  }
}

TEST(SplitRmsNormTest, APieceOfTheWrongWidthIsNamed) {
  MirrorPair group;
  try {
    SplitRmsNorm(at::ones({2, 5}), at::Tensor(), 1e-6, 12, group);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("width 12 / 2"), std::string::npos) << e.what();
  }
}

// A column-parallel matmul's gathered input is dropped after the forward
// pass and gathered again for the backward pass, with the same gradients.
TEST(ReleaseUntilBackwardTest, DropsTheGatheredInputUntilTheBackwardPass) {
  at::manual_seed(7);
  auto group = std::make_shared<OtherPieceTimesTenPlusOne>();
  const at::Tensor x = at::randn({2, 3, 4}).requires_grad_(true);
  const at::Tensor w = at::randn({8, 5}).requires_grad_(true);
  const at::Tensor whole = GatherFromSplit(x, -1, *group);
  const at::Tensor y = at::matmul(whole, w);
  EXPECT_EQ(group->gathers, 1);
  const size_t bytes = whole.storage().nbytes();
  ReleaseUntilBackward(whole, x, {y}, group);
  EXPECT_EQ(whole.storage().nbytes(), 0u);  // released

  const at::Tensor w2 = w.detach().clone().requires_grad_(true);
  const at::Tensor kept = at::cat({x, x * 10 + 1}, -1).detach();
  const at::Tensor g = at::randn({2, 3, 5});
  at::matmul(kept, w2).backward(g);
  y.backward(g);
  EXPECT_EQ(group->gathers, 2);  // gathered again, once
  EXPECT_EQ(whole.storage().nbytes(), bytes);
  EXPECT_TRUE(at::equal(whole, kept));
  EXPECT_TRUE(at::equal(w.grad(), w2.grad()));
  // x's gradient: this member's piece of g w^T (the stand-in's reduce-scatter
  // keeps the first half).
  EXPECT_TRUE(at::allclose(x.grad(), at::matmul(g, w.detach().t()).narrow(-1, 0, 4)));
}

TEST(ReleaseUntilBackwardTest, KeepsEverythingOutsideGradMode) {
  auto group = std::make_shared<OtherPieceTimesTenPlusOne>();
  at::NoGradGuard no_grad;
  const at::Tensor x = at::randn({2, 4});
  const at::Tensor whole = GatherFromSplit(x, -1, *group);
  const at::Tensor y = at::matmul(whole, at::randn({8, 3}));
  ReleaseUntilBackward(whole, x, {y}, group);
  EXPECT_EQ(whole.storage().nbytes(), whole.numel() * 4u);
}

}  // namespace
}  // namespace t5xx::partitioning
