// Dropout masks as a function of position (kernels/dropout_mask.h): the
// defined hash (checked against an independent Python evaluation), the CPU
// loop equal to the whole-tensor ops other devices run, a piece's mask equal
// to that piece of the whole tensor's (rows of the global batch, slices of
// any dim), and masks that keep 1 - rate of the elements independently of
// the key, row and position.
#include "t5xx/kernels/dropout_mask.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "t5xx/util/error.h"

namespace t5xx::kernels {
namespace {

std::vector<int> Bits(const at::Tensor& t) {
  const at::Tensor f = t.to(at::kFloat).contiguous().reshape({-1});
  std::vector<int> out;
  for (int64_t i = 0; i < f.numel(); ++i) out.push_back(f[i].item<float>() > 0.5f ? 1 : 0);
  return out;
}

TEST(DropoutMaskTest, TheDefinedHash) {
  // Made with this Python (the definition in dropout_mask.h), independent of
  // the C++:
  //   M = 0xffffffff
  //   def mix(x):
  //       x ^= x >> 16; x = (x * 0x21f0aaad) & M; x ^= x >> 15
  //       x = (x * 0x735a2d97) & M; x ^= x >> 15; return x
  //   key = 0x0123456789abcdef
  //   row_key = mix(mix(mix(key & M) ^ (key >> 32)) ^ row)
  //   keep = mix(row_key ^ mix(i)) >= floor(rate * 2**32)
  // row 5, i = 0..15, rate 0.5:
  const std::vector<int> want = {0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1, 0};
  const uint64_t key = 0x0123456789abcdefULL;
  // A [1, 4, 4] piece at global row 5 (row_offset 5): i = 4 * c1 + c2.
  EXPECT_EQ(Bits(KeepMask({1, 4, 4}, {0, 0, 0}, {1, 4, 4}, 5, key, 0.5, at::kFloat)), want);
  EXPECT_EQ(Bits(KeepMaskComposite({1, 4, 4}, {0, 0, 0}, {1, 4, 4}, 5, key, 0.5, at::kFloat)),
            want);
  // Row 70000, i = 1000..1015, rate 0.1: all kept.
  EXPECT_EQ(Bits(KeepMask({1, 16}, {0, 1000}, {1, 2000}, 70000, key, 0.1, at::kFloat)),
            std::vector<int>(16, 1));
}

TEST(DropoutMaskTest, CpuLoopEqualsTheOtherDevicesOps) {
  const std::vector<std::vector<int64_t>> shapes = {{7}, {3, 1, 33}, {4, 3, 1, 17}, {2, 5, 6}};
  for (const auto& shape : shapes) {
    std::vector<int64_t> offsets(shape.size(), 0), whole = shape;
    if (shape.size() >= 2) {
      offsets.back() = 3;
      whole.back() += 9;
    }
    if (shape.size() >= 3) {
      offsets[1] = 2;
      whole[1] += 4;
    }
    for (double rate : {0.1, 0.5, 0.97}) {
      const at::Tensor a = KeepMask(shape, offsets, whole, 11, 42 + shape.size(), rate, at::kFloat);
      const at::Tensor b =
          KeepMaskComposite(shape, offsets, whole, 11, 42 + shape.size(), rate, at::kFloat);
      EXPECT_TRUE(at::equal(a, b)) << "shape of " << shape.size() << " dims, rate " << rate;
    }
  }
}

TEST(DropoutMaskTest, APieceDrawsThatPieceOfTheWhole) {
  // The whole: 8 rows x 6 heads x 1 x 20 keys, as one process draws it.
  const at::Tensor whole = KeepMask({8, 6, 1, 20}, {0, 0, 0, 0}, {8, 6, 1, 20}, 0, 99, 0.3, at::kFloat);
  // Rows 4..7, heads 2..3, keys 5..14: a data replica x model partition x
  // activation slice.
  const at::Tensor piece = KeepMask({4, 2, 1, 10}, {0, 2, 0, 5}, {8, 6, 1, 20}, 4, 99, 0.3, at::kFloat);
  EXPECT_TRUE(at::equal(piece, whole.narrow(0, 4, 4).narrow(1, 2, 2).narrow(3, 5, 10)));
  // bfloat16 values 0 and 1, the same positions.
  EXPECT_TRUE(at::equal(KeepMask({4, 2, 1, 10}, {0, 2, 0, 5}, {8, 6, 1, 20}, 4, 99, 0.3,
                                 at::kBFloat16).to(at::kFloat),
                        piece));
}

TEST(DropoutMaskTest, KeepsOneMinusRateIndependentlyOfKeyRowAndPosition) {
  const double rate = 0.1;
  const at::Tensor a = KeepMask({64, 1, 4096}, {0, 0, 0}, {64, 1, 4096}, 0, 1, rate, at::kFloat);
  const at::Tensor b = KeepMask({64, 1, 4096}, {0, 0, 0}, {64, 1, 4096}, 0, 2, rate, at::kFloat);
  const double n = static_cast<double>(a.numel());
  const double sigma = std::sqrt(rate * (1 - rate) / n);
  EXPECT_NEAR(a.mean().item<double>(), 1 - rate, 5 * sigma);
  EXPECT_NEAR(b.mean().item<double>(), 1 - rate, 5 * sigma);
  // Two keys: as two independent draws, both kept with probability (1-rate)^2.
  EXPECT_NEAR((a * b).mean().item<double>(), (1 - rate) * (1 - rate), 5 * sigma);
  // Neighbouring rows and positions: likewise.
  EXPECT_NEAR((a.narrow(0, 0, 63) * a.narrow(0, 1, 63)).mean().item<double>(),
              (1 - rate) * (1 - rate), 6 * sigma);
  EXPECT_NEAR((a.narrow(2, 0, 4095) * a.narrow(2, 1, 4095)).mean().item<double>(),
              (1 - rate) * (1 - rate), 6 * sigma);
}

TEST(DropoutMaskTest, RowOffsetsAndSiteKeys) {
  {
    const DropoutRowScope scope(12);
    EXPECT_EQ(DropoutRowOffset(), 12);
    {
      const DropoutRowScope inner(3);
      EXPECT_EQ(DropoutRowOffset(), 3);
    }
    EXPECT_EQ(DropoutRowOffset(), 12);
  }
  EXPECT_EQ(DropoutRowOffset(), 0);
  at::Generator g1 = at::detail::createCPUGenerator(5), g2 = at::detail::createCPUGenerator(5);
  const uint64_t first = DropoutSiteKey(&g1);
  EXPECT_EQ(first, DropoutSiteKey(&g2));  // same seed, same keys
  EXPECT_NE(first, DropoutSiteKey(&g1));  // the next call, the next key
}

TEST(DropoutMaskTest, RefusesInconsistentSizes) {
  EXPECT_THROW(KeepMask({2, 5}, {0, 3}, {2, 7}, 0, 1, 0.1, at::kFloat), Error);
  EXPECT_THROW(KeepMask({2, 5}, {0, 0}, {2, 5}, 0, 1, 1.0, at::kFloat), Error);
  EXPECT_THROW(KeepMask({2, 5}, {0}, {2, 5}, 0, 1, 0.1, at::kFloat), Error);
  EXPECT_THROW(KeepMask({2, 5}, {0, 0}, {2, 5}, int64_t{1} << 32, 1, 0.1, at::kFloat), Error);
}

}  // namespace
}  // namespace t5xx::kernels
