// Tests Int8Matmul (int8_matmul.h): the weight's quantization (per-column
// scales, round to nearest even, the packed layout), x @ w equal bit for bit to
// the rule's integer arithmetic done here in float64 from int8_matmul.h's
// formulas (rows 1..42, the VNNI and the portable kernel alike, K not a multiple of 64, N not a multiple of the
// 16-column blocks or of the 4-block tiles, rows not a multiple of 4, w as a
// kernel and as a transposed embedding), its distance from float32's x @ w,
// thread-count independence, zero and NaN rows, and what it refuses.
#include "t5xx/kernels/int8_matmul.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace t5xx::models {
namespace {

// int8_matmul.h's rule for one row: scale max|v| / 127, q = round(v * 127 /
// max).
std::pair<at::Tensor, float> QuantizeRowRef(const at::Tensor& row) {
  const float amax = row.abs().max().item<float>();
  if (amax == 0.0f) return {at::zeros(row.sizes(), at::kDouble), 0.0f};
  const at::Tensor q = at::clamp(at::round(row * (127.0f / amax)), -127, 127);
  return {q.to(at::kDouble), amax / 127.0f};
}

at::Tensor Int8MatmulRef(const at::Tensor& x2, const at::Tensor& w) {
  const int64_t rows = x2.size(0), n = w.size(1);
  at::Tensor out = at::empty({rows, n});
  const at::Tensor wt = w.t().contiguous();
  std::vector<at::Tensor> qw;
  std::vector<float> sw;
  for (int64_t c = 0; c < n; ++c) {
    auto [q, s] = QuantizeRowRef(wt[c]);
    qw.push_back(q);
    sw.push_back(s);
  }
  for (int64_t m = 0; m < rows; ++m) {
    auto [qx, sx] = QuantizeRowRef(x2[m].contiguous());
    for (int64_t c = 0; c < n; ++c) {
      const double dot = (qx * qw[c]).sum().item<double>();  // an exact integer
      out[m][c] = static_cast<float>(dot) * (sx * sw[c]);
    }
  }
  return out;
}

TEST(Int8Matmul, QuantizesEachOutputColumn) {
  at::Tensor w = at::zeros({3, 2});
  w[0][0] = 1.0f, w[1][0] = -0.5f, w[2][0] = 0.25f;  // column 0: max 1
  w[0][1] = 127.0f, w[1][1] = 0.5f, w[2][1] = 1.5f;  // column 1: scale 1
  const Int8Weight q = QuantizeInt8Weight(w);
  EXPECT_EQ(q.k, 3);
  EXPECT_EQ(q.k_padded, 64);
  EXPECT_EQ(q.n, 2);
  EXPECT_EQ(q.n_padded, 16);
  ASSERT_EQ(q.packed.sizes(), (at::IntArrayRef{1, 16, 16, 4}));
  // Column 1's bytes 0..3: block 0, group 0, lane 1.
  EXPECT_EQ(q.packed[0][0][1][0].item<int>(), 127);
  EXPECT_EQ(q.packed[0][0][1][2].item<int>(), 2);
  EXPECT_EQ(q.packed.abs().sum().item<int>(),
            127 + 64 + 32 + 127 + 2);  // zeros elsewhere
  const at::Tensor rows = Int8WeightRows(q);
  ASSERT_EQ(rows.sizes(), (at::IntArrayRef{2, 3}));
  EXPECT_FLOAT_EQ(q.scale[0].item<float>(), 1.0f / 127.0f);
  EXPECT_EQ(q.scale[1].item<float>(), 1.0f);
  // -0.5 * 127 = -63.5 rounds to the even -64; 0.25 * 127 = 31.75 -> 32.
  EXPECT_EQ(rows[0][0].item<int>(), 127);
  EXPECT_EQ(rows[0][1].item<int>(), -64);
  EXPECT_EQ(rows[0][2].item<int>(), 32);
  EXPECT_EQ(rows[1][0].item<int>(), 127);
  EXPECT_EQ(rows[1][1].item<int>(), 0);  // 0.5 -> 0 (even)
  EXPECT_EQ(rows[1][2].item<int>(), 2);  // 1.5 -> 2 (even)
  EXPECT_EQ(q.q_sums[0].item<int>(), 127 - 64 + 32);
  EXPECT_EQ(q.q_sums[1].item<int>(), 129);
  const at::Tensor back = DequantizeInt8Weight(q);
  EXPECT_FLOAT_EQ(back[1][0].item<float>(), -64.0f / 127.0f);
}

TEST(Int8Matmul, EqualsTheIntegerRule) {
  at::manual_seed(54);
  const at::Tensor w =
      at::randn({100, 203});  // K padded to 128; 13 blocks of 16 (3 tiles of 4 + 1)
  const at::Tensor table = at::randn({70, 100});  // an embedding [vocab, emb], read transposed
  for (int64_t rows : {1, 3, 42}) {               // 42: ten tiles of 4 rows + 2
    const at::Tensor x = at::randn({rows, 1, 100});
    const at::Tensor out = Int8Matmul(x, QuantizeInt8Weight(w));
    ASSERT_EQ(out.sizes(), (at::IntArrayRef{rows, 1, 203}));
    EXPECT_TRUE(at::equal(out.reshape({rows, 203}), Int8MatmulRef(x.reshape({rows, 100}), w)));
    const at::Tensor logits = Int8Matmul(x, QuantizeInt8Weight(table.t()));
    EXPECT_TRUE(
        at::equal(logits.reshape({rows, 70}), Int8MatmulRef(x.reshape({rows, 100}), table.t())));
  }
}

// The portable kernel and the best one (AVX512-VNNI's where the CPU has it)
// sum the same integers: the same bits.
TEST(Int8Matmul, PortableKernelGivesTheSameBits) {
  at::manual_seed(9);
  const Int8Weight w = QuantizeInt8Weight(at::randn({300, 200}));
  for (int64_t rows : {1, 5, 33}) {
    const at::Tensor x = at::randn({rows, 300});
    EXPECT_TRUE(at::equal(Int8Matmul(x, w), Int8Matmul(x, w, Int8Kernel::kPortable)))
        << rows << " rows";
  }
}

TEST(Int8Matmul, IsCloseToFloat32) {
  at::manual_seed(5);
  const at::Tensor x = at::randn({8, 512});
  const at::Tensor w = at::randn({512, 384}) * 0.05;
  const at::Tensor want = at::matmul(x, w);
  const at::Tensor got = Int8Matmul(x, QuantizeInt8Weight(w));
  // Two 8-bit roundings of Gaussian rows: ~1% of the output's scale.
  const double rel = ((got - want).norm() / want.norm()).item<double>();
  EXPECT_LT(rel, 0.02);
  EXPECT_GT(rel, 1e-4);  // it is int8, not float32 again
}

TEST(Int8Matmul, SameBitsOnOneThreadAndOnSeveral) {
  at::manual_seed(7);
  const at::Tensor x = at::randn({32, 512});
  const Int8Weight w = QuantizeInt8Weight(at::randn({512, 1024}));
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const at::Tensor one = Int8Matmul(x, w);
  at::set_num_threads(std::max(threads, 2));
  const at::Tensor several = Int8Matmul(x, w);
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one, several));
}

TEST(Int8Matmul, ZeroRowsGiveZerosAndNaNRowsNaN) {
  const Int8Weight w = QuantizeInt8Weight(at::randn({16, 8}));
  at::Tensor x = at::randn({3, 16});
  x[0].zero_();
  x[2][5] = std::numeric_limits<float>::quiet_NaN();
  const at::Tensor out = Int8Matmul(x, w);
  EXPECT_EQ(out[0].abs().sum().item<float>(), 0.0f);
  EXPECT_FALSE(out[1].isnan().any().item<bool>());
  EXPECT_TRUE(out[2].isnan().all().item<bool>());
}

TEST(Int8Matmul, RefusesWhatItCannotTake) {
  EXPECT_THROW(QuantizeInt8Weight(at::randn({4})), std::invalid_argument);
  EXPECT_THROW(QuantizeInt8Weight(at::randn({4, 4}).to(at::kDouble)), std::invalid_argument);
  const Int8Weight w = QuantizeInt8Weight(at::randn({16, 8}));
  EXPECT_THROW(Int8Matmul(at::randn({2, 15}), w), std::invalid_argument);
  EXPECT_THROW(Int8Matmul(at::randn({2, 16}).to(at::kDouble), w), std::invalid_argument);
}

}  // namespace
}  // namespace t5xx::models
