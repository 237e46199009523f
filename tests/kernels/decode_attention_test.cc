// Tests DecodeAttention (decode_attention.h): one query per (row, head) over
// keys and values read in place from [B, L, H*D] caches and projections,
// against softmax(q k^T + bias) v in float64 through ATen, with t5x's
// biases (position bias shared over rows, -1e10 padding masks, a fully
// masked row, masked keys and values never read), beams sharing their example's keys and values, on one thread
// and on several (the same bits); which inputs it takes.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <limits>

#include "t5xx/kernels/decode_attention.h"

namespace t5xx::models {
namespace {

constexpr int64_t kRows = 3, kHeads = 4, kDim = 40, kCacheLength = 53;

// [B, L, H*D] -> the heads' view [B, H, L, D], as AttentionHeads takes it.
at::Tensor Heads(const at::Tensor& t) {
  return t.view({t.size(0), t.size(1), kHeads, kDim}).transpose(1, 2);
}

at::Tensor Reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     const at::Tensor& bias) {
  at::Tensor l = at::matmul(q.to(at::kDouble), k.to(at::kDouble).transpose(-2, -1));
  if (bias.defined()) l = l + bias.to(at::kDouble);
  // [B, H, 1, D] -> [B, 1, H, D]
  return at::matmul(at::softmax(l, -1), v.to(at::kDouble)).transpose(1, 2);
}

struct Inputs {
  at::Tensor q, k, v;  // heads' views; k and v of the first n cache positions
};

Inputs Make(int64_t n) {
  at::manual_seed(54);
  const at::Tensor q_proj = at::randn({kRows, 1, kHeads * kDim});
  const at::Tensor k_cache = at::randn({kRows, kCacheLength, kHeads * kDim});
  const at::Tensor v_cache = at::randn({kRows, kCacheLength, kHeads * kDim});
  return {Heads(q_proj), Heads(k_cache.narrow(1, 0, n)), Heads(v_cache.narrow(1, 0, n))};
}

TEST(DecodeAttention, MatchesFloat64OverStridedCaches) {
  for (int64_t n : std::vector<int64_t>{1, 16, 37, kCacheLength}) {  // one key, a full lane, 2 lanes + 5, all
    const Inputs in = Make(n);
    const at::Tensor position = at::randn({1, kHeads, 1, n}) * 3.0;  // shared over rows
    at::Tensor mask = at::zeros({kRows, 1, 1, n});
    mask.index_put_({1, 0, 0, at::indexing::Slice(n / 2, at::indexing::None)}, -1e10);
    for (const at::Tensor& bias : {at::Tensor(), position, position + mask}) {
      ASSERT_TRUE(DecodeAttentionFused(in.q, in.k, in.v, bias));
      const at::Tensor out = DecodeAttention(in.q, in.k, in.v, bias);
      EXPECT_EQ(out.sizes(), (std::vector<int64_t>{kRows, 1, kHeads, kDim}));
      EXPECT_TRUE(out.is_contiguous());
      const at::Tensor want = Reference(in.q, in.k, in.v, bias).to(at::kFloat);
      // float32 dot products of 40 terms (logits ~ N(0, 40)) against float64.
      EXPECT_TRUE(at::allclose(out, want, 1e-5, 5e-6))
          << "n " << n << ": max diff " << (out - want).abs().max().item<double>();
    }
  }
}

TEST(DecodeAttention, MaskedKeysGetNoWeightAndAFullyMaskedRowAveragesAll) {
  const int64_t n = 20;
  const Inputs in = Make(n);
  at::Tensor bias = at::zeros({kRows, 1, 1, n});
  bias.index_put_({0, 0, 0, at::indexing::Slice(1, at::indexing::None)}, -1e10);  // key 0 only
  bias.index_put_({2}, -1e10);                                                    // all masked
  const at::Tensor out = DecodeAttention(in.q, in.k, in.v, bias);
  // Row 0 attends to key 0 alone: its value, exactly.
  EXPECT_TRUE(at::equal(out[0][0], in.v[0].select(1, 0)));
  // Row 2: every logit shifted alike, as ATen's softmax: the mean of the values.
  EXPECT_TRUE(at::allclose(out[2][0], in.v[2].mean(1), 1e-5, 1e-6));
}

// Masked keys are skipped, not computed: NaN keys and values there change
// nothing (and the padding's -1e10 plus a position bias still counts as
// masked).
TEST(DecodeAttention, MaskedKeysAndValuesAreNotRead) {
  const int64_t n = 30;
  const Inputs in = Make(n);
  at::Tensor bias = at::randn({1, kHeads, 1, n}) + at::zeros({kRows, 1, 1, 1});
  bias.index_put_({at::indexing::Slice(), at::indexing::Slice(), 0, at::indexing::Slice(17, n)},
                  bias.index({at::indexing::Slice(), at::indexing::Slice(), 0,
                              at::indexing::Slice(17, n)}) - 1e10);
  const at::Tensor want = DecodeAttention(in.q, in.k, in.v, bias);
  at::Tensor k = in.k.clone(), v = in.v.clone();
  k.narrow(2, 17, n - 17).fill_(std::numeric_limits<float>::quiet_NaN());
  v.narrow(2, 17, n - 17).fill_(std::numeric_limits<float>::quiet_NaN());
  const at::Tensor got = DecodeAttention(in.q, k, v, bias);
  EXPECT_TRUE(at::equal(got, want));
  EXPECT_TRUE(at::allclose(want, Reference(in.q, in.k, in.v, bias).to(at::kFloat), 1e-5, 1e-6));
}

// A row gives the same bits alone as in a batch (one head at a time, or a
// row's heads together).
TEST(DecodeAttention, SameBitsForARowAloneAndInABatch) {
  const int64_t n = 37;
  const Inputs in = Make(n);
  const at::Tensor bias = at::randn({1, kHeads, 1, n});
  const at::Tensor all = DecodeAttention(in.q, in.k, in.v, bias);
  for (int64_t r = 0; r < kRows; ++r) {
    const at::Tensor one = DecodeAttention(in.q.narrow(0, r, 1), in.k.narrow(0, r, 1),
                                           in.v.narrow(0, r, 1), bias);
    EXPECT_TRUE(at::equal(one[0], all[r])) << "row " << r;
  }
}

TEST(DecodeAttention, SameBitsOnOneThreadAndOnSeveral) {
  const Inputs in = Make(kCacheLength);  // 3 * 4 * 53 * 40 = 25440 < the parallel threshold
  const at::Tensor bias = at::randn({1, kHeads, 1, kCacheLength});
  // A batch large enough to take the parallel path.
  const at::Tensor q = in.q.repeat({8, 1, 1, 1}), k = in.k.repeat({8, 1, 1, 1}),
                   v = in.v.repeat({8, 1, 1, 1});
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const at::Tensor one = DecodeAttention(q, k, v, bias);
  at::set_num_threads(std::max(threads, 2));
  const at::Tensor several = DecodeAttention(q, k, v, bias);
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one, several));
  // The repeated rows are the first rows' bits.
  EXPECT_TRUE(at::equal(several.narrow(0, 0, kRows), DecodeAttention(in.q, in.k, in.v, bias)));
}

// Beams sharing their example's keys and values (and its padding bias):
// the same as each row with its own copy.
TEST(DecodeAttention, RowsShareTheirExamplesKeysAndValues) {
  const Inputs in = Make(29);
  at::Tensor mask = at::zeros({kRows, 1, 1, 29});
  mask.index_put_({2, 0, 0, at::indexing::Slice(10, at::indexing::None)}, -1e10);
  const int64_t beams = 4;
  const at::Tensor q = at::randn({kRows * beams, kHeads, 1, kDim});
  ASSERT_TRUE(DecodeAttentionFused(q, in.k, in.v, mask));
  const at::Tensor shared = DecodeAttention(q, in.k, in.v, mask);
  const at::Tensor copied =
      DecodeAttention(q, in.k.repeat_interleave(beams, 0), in.v.repeat_interleave(beams, 0),
                      mask.repeat_interleave(beams, 0));
  EXPECT_TRUE(at::equal(shared, copied));
  EXPECT_FALSE(DecodeAttentionFused(q.narrow(0, 0, 5), in.k, in.v, mask));  // 5 rows, 3 examples
}

TEST(DecodeAttention, TakesOnlyOneFloat32QueryWithoutGradients) {
  const Inputs in = Make(8);
  EXPECT_FALSE(DecodeAttentionFused(in.q.repeat({1, 1, 2, 1}), in.k, in.v, at::Tensor()));
  EXPECT_FALSE(DecodeAttentionFused(in.q.to(at::kBFloat16), in.k, in.v, at::Tensor()));
  EXPECT_FALSE(DecodeAttentionFused(in.q.transpose(2, 3), in.k, in.v, at::Tensor()));
  EXPECT_FALSE(DecodeAttentionFused(in.q, in.k, in.v, at::zeros({1, kHeads, 1, 9})));
  const at::Tensor q_grad = in.q.clone().requires_grad_(true);
  EXPECT_FALSE(DecodeAttentionFused(q_grad, in.k, in.v, at::Tensor()));
  {
    const at::NoGradGuard no_grad;
    EXPECT_TRUE(DecodeAttentionFused(q_grad, in.k, in.v, at::Tensor()));
  }
  EXPECT_THROW(DecodeAttention(in.q.repeat({1, 1, 2, 1}), in.k, in.v, at::Tensor()),
               std::invalid_argument);
}

}  // namespace
}  // namespace t5xx::models
