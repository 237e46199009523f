// Tests LeadingOffsets (tensor_offsets.h): offsets of a permuted view, of a
// broadcast (stride-0) dimension, with no leading dimensions, checked
// against the data pointers of the indexed sub-tensors.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "t5xx/kernels/cpu/tensor_offsets.h"
#include "t5xx/util/error.h"

namespace t5xx::device {
namespace {

TEST(LeadingOffsets, MatchTheSubTensorsDataPointers) {
  // [B=2, L=3, H=4, D=5] viewed as [B, H, L, D]: matrices [L, D] per (b, h).
  const at::Tensor base = at::arange(120, at::kFloat).view({2, 3, 4, 5});
  const at::Tensor heads = base.transpose(1, 2);
  const std::vector<int64_t> offsets = LeadingOffsets(heads, 2);
  ASSERT_EQ(offsets.size(), 8u);
  const float* start = heads.data_ptr<float>();
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t h = 0; h < 4; ++h) {
      EXPECT_EQ(offsets[b * 4 + h], heads[b][h].data_ptr<float>() - start) << b << " " << h;
    }
  }
  EXPECT_EQ(offsets[5], 1 * 60 + 1 * 5);  // b = 1, h = 1: strides 60 and 5
  // A broadcast dimension repeats its offsets; rows (trailing 1) of [2, 3, 4].
  const at::Tensor expanded = at::zeros({1, 3, 4}).expand({2, 3, 4});
  const std::vector<int64_t> rows = LeadingOffsets(expanded, 1);
  EXPECT_EQ(rows, (std::vector<int64_t>{0, 4, 8, 0, 4, 8}));
  EXPECT_EQ(LeadingOffsets(at::zeros({3, 4}), 2), std::vector<int64_t>{0});
  EXPECT_THROW(LeadingOffsets(at::zeros({3}), 2), Error);
}

}  // namespace
}  // namespace t5xx::device
