#include "t5xx/models/networks/layers.h"

#include <gtest/gtest.h>

#include <vector>

namespace t5xx::models {
namespace {

int64_t Bucket(int64_t rel, bool bidirectional) {
  at::Tensor t = at::tensor({rel}, at::kLong);
  return RelativePositionBucket(t, bidirectional, 32, 128).item<int64_t>();
}

// Expected buckets worked out by hand from t5x's formula
// bucket = max_exact + int(log(n / max_exact) / log(128 / max_exact) *
//                          (nb - max_exact)), capped at nb - 1.
// Bidirectional: nb = 16 per sign, max_exact = 8, keys after the query
// (rel > 0) are shifted by 16. rel = key_pos - query_pos, n = |rel|.
TEST(RelativePositionBucketTest, BidirectionalMatchesFormula) {
  EXPECT_EQ(Bucket(0, true), 0);
  EXPECT_EQ(Bucket(-1, true), 1);
  EXPECT_EQ(Bucket(1, true), 17);
  EXPECT_EQ(Bucket(-7, true), 7);
  EXPECT_EQ(Bucket(-8, true), 8);    // log(1) = 0 -> 8
  EXPECT_EQ(Bucket(-12, true), 9);   // log(1.5)/log(16)*8 = 1.17 -> 9
  EXPECT_EQ(Bucket(-16, true), 10);  // log(2)/log(16)*8 = 2 -> 10
  EXPECT_EQ(Bucket(-64, true), 14);  // log(8)/log(16)*8 = 6 -> 14
  EXPECT_EQ(Bucket(-127, true), 15); // 7.977 -> 15
  EXPECT_EQ(Bucket(-128, true), 15); // 16 capped at 15
  EXPECT_EQ(Bucket(-1000, true), 15);
  EXPECT_EQ(Bucket(20, true), 26);   // 16 + 8 + int(2.64)
}

// Causal: nb = 32, max_exact = 16; future keys (rel > 0) go to bucket 0.
TEST(RelativePositionBucketTest, CausalMatchesFormula) {
  EXPECT_EQ(Bucket(5, false), 0);
  EXPECT_EQ(Bucket(0, false), 0);
  EXPECT_EQ(Bucket(-3, false), 3);
  EXPECT_EQ(Bucket(-15, false), 15);
  EXPECT_EQ(Bucket(-16, false), 16);
  EXPECT_EQ(Bucket(-32, false), 21);   // log(2)/log(8)*16 = 5.33 -> 21
  EXPECT_EQ(Bucket(-100, false), 30);  // log(6.25)/log(8)*16 = 14.1 -> 30
  EXPECT_EQ(Bucket(-128, false), 31);  // 32 capped at 31
}

TEST(RelativePositionBiasTest, ShapeAndLookup) {
  at::Tensor emb = at::arange(2 * 32, at::kFloat).reshape({2, 32});
  at::Tensor bias = RelativePositionBias(emb, 3, 4, true, 32, 128);
  ASSERT_EQ(bias.sizes(), (std::vector<int64_t>{1, 2, 3, 4}));
  // query 2, key 0: rel = -2 -> bucket 2; head 1 row starts at 32.
  EXPECT_FLOAT_EQ(bias[0][1][2][0].item<float>(), 34.0f);
  // query 0, key 3: rel = +3 -> bucket 19.
  EXPECT_FLOAT_EQ(bias[0][0][0][3].item<float>(), 19.0f);
}

TEST(RmsNormTest, HandComputed) {
  // x = (3, 4): mean(x^2) = 12.5, rsqrt(12.5 + 1e-6) = 0.28284270
  at::Tensor x = at::tensor({3.0f, 4.0f}).reshape({1, 2});
  at::Tensor scale = at::tensor({1.0f, 2.0f});
  at::Tensor y = RmsNorm(x, scale);
  EXPECT_NEAR(y[0][0].item<float>(), 3.0 * 0.2828427, 1e-6);
  EXPECT_NEAR(y[0][1].item<float>(), 8.0 * 0.2828427, 1e-6);
}

TEST(AttentionTest, ShapesAndNoRuntimeScaling) {
  const int64_t b = 2, lq = 3, lk = 5, e = 8, h = 2, d = 4;
  at::manual_seed(0);
  at::Tensor q_in = at::randn({b, lq, e}), kv_in = at::randn({b, lk, e});
  at::Tensor wq = at::randn({e, h * d}), wk = at::randn({e, h * d}),
             wv = at::randn({e, h * d}), wo = at::randn({h * d, e});
  at::Tensor out = MultiHeadDotProductAttention(q_in, kv_in, wq, wk, wv, wo, h,
                                                at::Tensor(), 0.0, false);
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{b, lq, e}));
  // Reference: softmax(q k^T) without 1/sqrt(d).
  at::Tensor q = at::matmul(q_in, wq).view({b, lq, h, d}).transpose(1, 2);
  at::Tensor k = at::matmul(kv_in, wk).view({b, lk, h, d}).transpose(1, 2);
  at::Tensor v = at::matmul(kv_in, wv).view({b, lk, h, d}).transpose(1, 2);
  at::Tensor ref = at::matmul(at::softmax(at::matmul(q, k.transpose(-1, -2)), -1), v)
                       .transpose(1, 2).reshape({b, lq, h * d});
  ref = at::matmul(ref, wo);
  EXPECT_TRUE(at::allclose(out, ref, 1e-5, 1e-5));
}

TEST(MlpBlockTest, GatedGeluUsesTanhApproximation) {
  // x = 1, wi_0 = 1, wi_1 = 2, wo = 1: gelu_tanh(1) * 2.
  // gelu_tanh(1) = 0.5 * (1 + tanh(sqrt(2/pi) * (1 + 0.044715))) = 0.8411920
  at::Tensor x = at::ones({1, 1, 1});
  at::Tensor y = MlpBlock(x, {at::ones({1, 1}), at::full({1, 1}, 2.0)},
                          at::ones({1, 1}), {"gelu", "linear"}, 0.0, false);
  EXPECT_NEAR(y.item<float>(), 2 * 0.8411920, 1e-6);
}

TEST(MaskTest, CausalAndSegments) {
  at::Tensor causal = MakeCausalMask(3, at::kCPU);
  EXPECT_TRUE(causal[0][0][2][1].item<bool>());
  EXPECT_FALSE(causal[0][0][1][2].item<bool>());
  at::Tensor seg = at::tensor({1, 1, 2, 0}, at::kLong).reshape({1, 4});
  at::Tensor m = MakeSegmentMask(seg, seg);
  EXPECT_TRUE(m[0][0][0][1].item<bool>());
  EXPECT_FALSE(m[0][0][1][2].item<bool>());
  EXPECT_FLOAT_EQ(MaskToBias(m)[0][0][1][2].item<float>(), -1e10f);
}

}  // namespace
}  // namespace t5xx::models

namespace t5xx::models {
namespace {

// flax nn.Dropout(broadcast_dims=(-2,)): one keep/drop decision per (batch,
// feature), shared by every position of the sequence; without broadcasting
// each element draws its own. Kept values are x / (1 - rate).
TEST(DropoutTest, BroadcastsOverTheLengthAxis) {
  at::Generator g = at::detail::createCPUGenerator(3);
  at::Tensor x = at::ones({2, 50, 8});
  at::Tensor y = Dropout(x, 0.5, /*train=*/true, &g);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t e = 0; e < 8; ++e) {
      at::Tensor col = y.select(0, b).select(1, e);  // the 50 positions
      EXPECT_TRUE(at::equal(col, at::full_like(col, col[0].item<float>()))) << b << "," << e;
    }
  }
  EXPECT_TRUE(at::logical_or(y == 0, y == 2).all().item<bool>());  // 1 / (1 - 0.5)
  at::Tensor z = Dropout(x, 0.5, true, &g, /*broadcast_over_length=*/false);
  // 100 draws per column: a column that is all kept or all dropped has
  // probability 2^-99.
  at::Tensor col = z.select(0, 0).select(1, 0);
  EXPECT_FALSE(at::equal(col, at::full_like(col, col[0].item<float>())));
  EXPECT_TRUE(at::equal(Dropout(x, 0.5, /*train=*/false, &g), x));
}

// A process holding a slice of the activations' last dimension drops what
// one process drops there: DropoutOfSlice of a slice equals the slice of
// Dropout from the same generator state, in float32 and bfloat16, with and
// without the broadcast over the length.
TEST(DropoutTest, ASliceDropsWhatTheWholeDropsThere) {
  const at::Tensor x = at::randn({2, 5, 8}).add(3);
  for (at::ScalarType dt : {at::kFloat, at::kBFloat16}) {
    for (bool broadcast : {true, false}) {
      for (int64_t piece = 0; piece < 4; ++piece) {
        at::Generator a = at::detail::createCPUGenerator(11), b = at::detail::createCPUGenerator(11);
        const at::Tensor whole = Dropout(x.to(dt), 0.3, /*train=*/true, &a, broadcast);
        const at::Tensor part = DropoutOfSlice(x.to(dt).narrow(-1, 2 * piece, 2), 8, 2 * piece,
                                               0.3, /*train=*/true, &b, broadcast);
        EXPECT_TRUE(at::equal(part, whole.narrow(-1, 2 * piece, 2)))
            << at::toString(dt) << " broadcast " << broadcast << " piece " << piece;
      }
    }
  }
  at::Generator g = at::detail::createCPUGenerator(1);
  EXPECT_THROW(DropoutOfSlice(x, 8, 4, 0.3, true, &g), std::exception);  // [4, 12) of 8
}

}  // namespace
}  // namespace t5xx::models
