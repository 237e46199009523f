// Tests SkinnyMatmul (skinny_matmul.h): x @ w for 1..8 rows against float64
// ATen, w row-major and as the transpose of a row-major table (t5x's logits
// through the embedding), x of several leading shapes and strides, widths
// that are not multiples of the column block; the same bits on one thread
// and several, and for both layouts; which inputs it takes.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include "t5xx/kernels/skinny_matmul.h"

namespace t5xx::models {
namespace {

void ExpectMatchesFloat64(const at::Tensor& x, const at::Tensor& w) {
  ASSERT_TRUE(SkinnyMatmulFused(x, w));
  const at::Tensor out = SkinnyMatmul(x, w);
  const at::Tensor want = at::matmul(x.to(at::kDouble), w.to(at::kDouble)).to(at::kFloat);
  EXPECT_EQ(out.sizes(), want.sizes());
  EXPECT_TRUE(out.is_contiguous());
  // float32 sums of up to 512 products of N(0, 1) terms against float64.
  EXPECT_TRUE(at::allclose(out, want, 1e-5, 1e-4))
      << "x " << x.sizes() << " w " << w.sizes() << ": max diff "
      << (out - want).abs().max().item<double>();
}

TEST(SkinnyMatmul, MatchesFloat64) {
  at::manual_seed(54);
  const at::Tensor w = at::randn({512, 700});         // 2 full column blocks + 188
  const at::Tensor table = at::randn({700, 512});     // an embedding [vocab, emb]
  for (int64_t rows : {1, 3, 8}) {
    ExpectMatchesFloat64(at::randn({rows, 512}), w);
    ExpectMatchesFloat64(at::randn({rows, 1, 512}), w);             // [B, 1, E] decode input
    ExpectMatchesFloat64(at::randn({rows, 1, 512}), table.t());     // logits via the embedding
    ExpectMatchesFloat64(at::randn({512, rows}).t(), w);            // x strided
  }
  ExpectMatchesFloat64(at::randn({2, 1, 37}), at::randn({37, 5}));  // small: one thread
}

TEST(SkinnyMatmul, SameBitsOnOneThreadAndOnSeveral) {
  at::manual_seed(7);
  const at::Tensor x = at::randn({4, 1, 384});
  const at::Tensor w = at::randn({384, 1024});
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const at::Tensor one = SkinnyMatmul(x, w);
  const at::Tensor one_t = SkinnyMatmul(x, w.t().contiguous().t());
  at::set_num_threads(std::max(threads, 2));
  const at::Tensor several = SkinnyMatmul(x, w);
  const at::Tensor several_t = SkinnyMatmul(x, w.t().contiguous().t());
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one, several));
  EXPECT_TRUE(at::equal(one_t, several_t));
}

// A kernel stored transposed (StoreKernelsTransposed, for inference) gives
// the bits of the row-major one: every row count, K not a multiple of the
// lanes, N not a multiple of a block.
TEST(SkinnyMatmul, BothLayoutsGiveTheSameBits) {
  at::manual_seed(11);
  for (int64_t rows : {1, 3, 8}) {
    for (auto [k, n] : {std::pair<int64_t, int64_t>{512, 384}, {37, 1000}, {1024, 64}, {5, 7}}) {
      SCOPED_TRACE(std::to_string(rows) + " rows, K " + std::to_string(k) + ", N " +
                   std::to_string(n));
      const at::Tensor x = at::randn({rows, k});
      const at::Tensor w = at::randn({k, n});
      const at::Tensor row_major = SkinnyMatmul(x, w);
      const at::Tensor transposed = SkinnyMatmul(x, w.t().contiguous().t());
      EXPECT_TRUE(at::equal(row_major, transposed))
          << (row_major - transposed).abs().max().item<double>();
      ExpectMatchesFloat64(x, w);
    }
  }
}

TEST(SkinnyMatmul, TakesFewFloat32RowsWithoutGradients) {
  const at::Tensor w = at::randn({16, 8});
  EXPECT_FALSE(SkinnyMatmulFused(at::randn({9, 16}), w));              // too many rows
  EXPECT_FALSE(SkinnyMatmulFused(at::randn({2, 16}).to(at::kBFloat16), w));
  EXPECT_FALSE(SkinnyMatmulFused(at::randn({2, 16}), at::randn({16, 16}).narrow(1, 0, 8)));
  EXPECT_FALSE(SkinnyMatmulFused(at::randn({2, 15}), w));              // K mismatch
  EXPECT_FALSE(SkinnyMatmulFused(at::randn({2, 16}), at::randn({2, 16, 8})));
  const at::Tensor x_grad = at::randn({2, 16}).requires_grad_(true);
  EXPECT_FALSE(SkinnyMatmulFused(x_grad, w));
  {
    const at::NoGradGuard no_grad;
    EXPECT_TRUE(SkinnyMatmulFused(x_grad, w));
  }
  EXPECT_THROW(SkinnyMatmul(at::randn({9, 16}), w), std::invalid_argument);
}

}  // namespace
}  // namespace t5xx::models
