// Tests IndexSelectColumns (index_select_columns.h): values and the table's
// gradient are bitwise those of libtorch's own index_select and its
// index_add_ backward (same order of additions per row), on any thread
// count; a bad index is refused as index_select refuses it.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include "t5xx/kernels/index_select_columns.h"

namespace t5xx::models {
namespace {

TEST(IndexSelectColumns, EqualsIndexSelectBitwise) {
  at::manual_seed(51);
  // A relative-position-like lookup: 6 heads, 32 buckets, 300 x 300 positions.
  const at::Tensor table = at::randn({6, 32});
  const at::Tensor index = at::randint(0, 32, {90000}, at::kLong);
  const at::Tensor g = at::randn({6, 90000});
  const at::Tensor reference_table = table.clone().requires_grad_(true);
  const at::Tensor reference = reference_table.index_select(1, index);
  const at::Tensor reference_grad = torch::autograd::grad({(reference * g).sum()},
                                                          {reference_table})[0];
  const int threads = at::get_num_threads();
  for (int t : {1, 2, 3}) {
    at::set_num_threads(t);
    const at::Tensor ours_table = table.clone().requires_grad_(true);
    const at::Tensor ours = IndexSelectColumns(ours_table, index);
    const at::Tensor grad = torch::autograd::grad({(ours * g).sum()}, {ours_table})[0];
    EXPECT_TRUE(at::equal(ours, reference)) << t << " threads";
    EXPECT_TRUE(at::equal(grad, reference_grad)) << t << " threads";
  }
  at::set_num_threads(threads);
  EXPECT_GT(reference_grad.abs().sum().item<double>(), 100.0);
}

TEST(IndexSelectColumns, BadIndexIsRefused) {
  const at::Tensor table = at::randn({2, 4}).requires_grad_(true);
  EXPECT_THROW(IndexSelectColumns(table, at::tensor({0, 4}, at::kLong)), c10::Error);
}

}  // namespace
}  // namespace t5xx::models
