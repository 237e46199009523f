// AttentionHeads' fused path (at::scaled_dot_product_attention, libtorch >=
// 2.1) against its unfused path (matmul-softmax-matmul, t5x's arithmetic),
// both run on the CPU by forcing the kernel with SetAttentionKernel: same
// outputs and the same gradients for q, k, v and the bias (and through it the
// relative-position table) for T5's masks, packing, dropout and
// float32_logits; plus a case worked out by hand. On libtorch 1.13 only the
// policy tests run (kFused throws a clear error, kAuto stays unfused on the
// CPU); the others skip, saying why.
//
// Tolerances. float32: 1e-5 absolute. Inputs are O(1) (|x| <= 3), every
// output and gradient entry is a sum of at most ~20 O(1) products, and the
// two paths differ only in summation order and where the softmax
// normalisation is applied (float32 eps 1.2e-7: ~100x margin over a few ulps
// of each term). bfloat16: see FusedAttentionTest.Float32LogitsOnBfloat16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "t5xx/models/networks/layers.h"
#include "t5xx/util/error.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::models {
namespace {

constexpr double kFloat32Tol = 1e-5;
constexpr int64_t kBuckets = 32, kMaxDistance = 128;

#define SKIP_WITHOUT_SDPA()                                                          \
  if (!compat::kHasFusedAttention)                                                   \
  GTEST_SKIP() << "libtorch " << compat::kTorchMajor << "." << compat::kTorchMinor    \
               << " has no at::scaled_dot_product_attention with `scale` (needs 2.1)"

// Restores the process-wide default after each test.
class FusedAttentionTest : public ::testing::Test {
 protected:
  void TearDown() override { SetAttentionKernel(AttentionKernel::kAuto); }
};

// One attention problem: projected q [B, Lq, H*D], k and v [B, Lk, H*D], an
// optional relative-position table [H, buckets] and boolean mask
// [B or 1, 1, Lq, Lk].
struct Problem {
  int64_t heads = 3;
  at::Tensor q, k, v;
  at::Tensor rel;        // undefined: no relative-position bias
  bool bidirectional = true;
  at::Tensor mask;       // undefined: no mask
  at::ScalarType dtype = at::kFloat;
  bool float32_logits = false;
  double dropout = 0.0;
  uint64_t seed = 0;
};

struct Result {
  at::Tensor out, gq, gk, gv, gbias, grel;
};

Problem RandomProblem(int64_t b, int64_t lq, int64_t lk, int64_t heads, int64_t d,
                      uint64_t seed) {
  at::Generator gen = compat::MakeCpuGenerator(seed);
  auto rnd = [&](at::IntArrayRef shape) {
    return at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat)).clamp(-3, 3);
  };
  Problem p;
  p.heads = heads;
  p.q = rnd({b, lq, heads * d});
  p.k = rnd({b, lk, heads * d});
  p.v = rnd({b, lk, heads * d});
  p.rel = rnd({heads, kBuckets});
  return p;
}

// Runs AttentionHeads with `kernel` on fresh leaves and backpropagates a
// fixed random weighting of the output.
Result RunKernel(AttentionKernel kernel, const Problem& p) {
  SetAttentionKernel(kernel);
  const at::ScalarType bias_dtype = p.float32_logits ? at::kFloat : p.dtype;
  at::Tensor q = p.q.to(p.dtype).detach().requires_grad_(true);
  at::Tensor k = p.k.to(p.dtype).detach().requires_grad_(true);
  at::Tensor v = p.v.to(p.dtype).detach().requires_grad_(true);
  at::Tensor rel;
  at::Tensor bias;
  const int64_t lq = p.q.size(1), lk = p.k.size(1);
  if (p.rel.defined()) {
    rel = p.rel.detach().requires_grad_(true);
    bias = RelativePositionBias(rel, lq, lk, p.bidirectional, kBuckets, kMaxDistance,
                                bias_dtype);
  }
  if (p.mask.defined()) {
    at::Tensor m = MaskToBias(p.mask, bias_dtype);
    bias = bias.defined() ? bias + m : m.requires_grad_(true);
  }
  if (bias.defined() && !bias.is_leaf()) bias.retain_grad();
  at::Generator gen = compat::MakeCpuGenerator(p.seed);
  at::Tensor out = AttentionHeads(q, k, v, p.heads, bias, p.dropout, /*train=*/true, &gen,
                                  p.dtype, p.float32_logits);
  at::Generator wgen = compat::MakeCpuGenerator(99);
  const at::Tensor w = at::randn(out.sizes(), wgen, at::TensorOptions().dtype(at::kFloat));
  (out.to(at::kFloat) * w).sum().backward();
  Result r;
  r.out = out.detach().to(at::kFloat);
  r.gq = q.grad().to(at::kFloat);
  r.gk = k.grad().to(at::kFloat);
  r.gv = v.grad().to(at::kFloat);
  if (bias.defined()) r.gbias = bias.grad().to(at::kFloat);
  if (rel.defined()) r.grel = rel.grad();
  SetAttentionKernel(AttentionKernel::kAuto);
  return r;
}

double MaxDiff(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// Compares the two kernels; `tol(name, unfused)` gives each tensor's bound.
template <typename Tol>
void ExpectSameResults(const Problem& p, Tol tol) {
  const Result u = RunKernel(AttentionKernel::kUnfused, p);
  const Result f = RunKernel(AttentionKernel::kFused, p);
  auto check = [&](const char* name, const at::Tensor& a, const at::Tensor& b) {
    ASSERT_EQ(a.defined(), b.defined()) << name;
    if (!a.defined()) return;
    ASSERT_EQ(a.sizes(), b.sizes()) << name;
    ASSERT_TRUE(at::isfinite(b).all().item<bool>()) << name;
    const double diff = MaxDiff(a, b), bound = tol(name, a);
    EXPECT_LE(diff, bound) << name << " (max |unfused| " << a.abs().max().item<double>()
                           << ")";
    std::printf("    %-5s max |fused - unfused| = %.3g (bound %.3g)\n", name, diff, bound);
  };
  check("out", u.out, f.out);
  check("dq", u.gq, f.gq);
  check("dk", u.gk, f.gk);
  check("dv", u.gv, f.gv);
  check("dbias", u.gbias, f.gbias);
  check("drel", u.grel, f.grel);
}

auto Float32Tol = [](const char*, const at::Tensor&) { return kFloat32Tol; };

// Padding: sequence b has valid[b] real tokens.
at::Tensor Valid(int64_t length, const std::vector<int64_t>& lengths) {
  std::vector<at::Tensor> rows;
  for (int64_t n : lengths) rows.push_back(at::arange(length) < n);
  return at::stack(rows);
}

// ---- Policy: runs on every libtorch ----

TEST_F(FusedAttentionTest, AutoOnCpuIsBitIdenticalToUnfused) {
  Problem p = RandomProblem(2, 5, 5, 3, 4, 1);
  p.mask = MakeAttentionMask(Valid(5, {5, 3}), Valid(5, {5, 3}));
  p.dropout = 0.2;
  EXPECT_EQ(attention_kernel(), AttentionKernel::kAuto);
  const Result u = RunKernel(AttentionKernel::kUnfused, p);
  const Result a = RunKernel(AttentionKernel::kAuto, p);
  EXPECT_TRUE(at::equal(u.out, a.out));
  EXPECT_TRUE(at::equal(u.gq, a.gq));
  EXPECT_TRUE(at::equal(u.grel, a.grel));
}

TEST_F(FusedAttentionTest, FusedWithoutSdpaThrowsClearError) {
  if (compat::kHasFusedAttention) {
    GTEST_SKIP() << "libtorch " << compat::kTorchMajor << "." << compat::kTorchMinor
                 << " has fused attention; the error is for libtorch < 2.1";
  }
  SetAttentionKernel(AttentionKernel::kFused);
  const at::Tensor x = at::ones({1, 2, 4});
  try {
    AttentionHeads(x, x, x, 1, at::Tensor(), 0.0, false);
    FAIL() << "kFused on libtorch < 2.1 must throw";
  } catch (const t5xx::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("libtorch >= 2.1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("kUnfused"), std::string::npos) << msg;
  }
}

// ---- Fused vs unfused (libtorch >= 2.1) ----

// 1 head, Lq = Lk = 2, D = 2, by hand. q.k^T (no 1/sqrt(D)):
//   q = [[1, 0], [0, 1]], k = [[1, 0], [0, 0]] -> [[1, 0], [0, 0]];
//   bias = [[-1, ln 3], [ln 3, 0]] -> logits [[0, ln 3], [ln 3, 0]];
//   softmax -> [[1/4, 3/4], [3/4, 1/4]];
//   v = [[4, 8], [0, 4]] -> out [[1, 5], [3, 7]].
// With SDPA's default scale 1/sqrt(2) row 0 would be softmax([-0.29, 1.10]).
TEST_F(FusedAttentionTest, HandComputedCase) {
  SKIP_WITHOUT_SDPA();
  const at::Tensor q = at::tensor({1.f, 0.f, 0.f, 1.f}).reshape({1, 2, 2});
  const at::Tensor k = at::tensor({1.f, 0.f, 0.f, 0.f}).reshape({1, 2, 2});
  const at::Tensor v = at::tensor({4.f, 8.f, 0.f, 4.f}).reshape({1, 2, 2});
  const float ln3 = std::log(3.f);
  const at::Tensor bias = at::tensor({-1.f, ln3, ln3, 0.f}).reshape({1, 1, 2, 2});
  SetAttentionKernel(AttentionKernel::kFused);
  const at::Tensor out = AttentionHeads(q, k, v, 1, bias, 0.0, false);
  const at::Tensor expected = at::tensor({1.f, 5.f, 3.f, 7.f}).reshape({1, 2, 2});
  EXPECT_LE(MaxDiff(out, expected), 1e-5) << out;
}

// A fully masked query row (padding, or a packed row with no valid key):
// every logit is -1e10 (+ a bias that float32 cannot add to it), so t5x
// attends uniformly: the output is the mean of v over the keys.
TEST_F(FusedAttentionTest, FullyMaskedRowAttendsUniformlyInBoth) {
  SKIP_WITHOUT_SDPA();
  Problem p = RandomProblem(1, 3, 4, 1, 2, 5);
  at::Tensor mask = at::ones({1, 1, 3, 4}, at::kBool);
  mask.select(2, 1).fill_(false);  // query 1 sees no key
  p.mask = mask;
  const at::Tensor mean_v = p.v[0].mean(0);  // [D]
  for (AttentionKernel kernel : {AttentionKernel::kUnfused, AttentionKernel::kFused}) {
    const Result r = RunKernel(kernel, p);
    EXPECT_LE(MaxDiff(r.out[0][1], mean_v), 1e-6)
        << (kernel == AttentionKernel::kFused ? "fused " : "unfused ") << r.out[0][1]
        << " vs " << mean_v;
  }
}

// Encoder self-attention: bidirectional relative-position bias [1, H, L, L]
// plus a padding mask [B, 1, L, L].
TEST_F(FusedAttentionTest, BidirectionalBiasWithPadding) {
  SKIP_WITHOUT_SDPA();
  Problem p = RandomProblem(2, 7, 7, 3, 4, 2);
  const at::Tensor valid = Valid(7, {7, 4});
  p.mask = MakeAttentionMask(valid, valid);
  ExpectSameResults(p, Float32Tol);
}

// Encoder-decoder cross-attention: no relative bias, mask [B, 1, Lq, Lk].
TEST_F(FusedAttentionTest, CrossAttentionMaskOnly) {
  SKIP_WITHOUT_SDPA();
  Problem p = RandomProblem(2, 5, 7, 3, 4, 3);
  p.rel = at::Tensor();
  p.mask = MakeAttentionMask(Valid(5, {5, 2}), Valid(7, {6, 7}));
  ExpectSameResults(p, Float32Tol);
}

// Decoder self-attention: causal relative-position bias and causal mask.
TEST_F(FusedAttentionTest, CausalMask) {
  SKIP_WITHOUT_SDPA();
  Problem p = RandomProblem(2, 6, 6, 2, 4, 4);
  p.bidirectional = false;
  p.mask = at::logical_and(MakeCausalMask(6, at::kCPU),
                           MakeAttentionMask(Valid(6, {6, 5}), Valid(6, {6, 5})));
  ExpectSameResults(p, Float32Tol);
}

// Packed decoder inputs: segments 1, 2 and padding (0); a token attends to
// earlier tokens of its own segment; padding query rows are fully masked.
TEST_F(FusedAttentionTest, PackedSegmentsWithFullyMaskedRows) {
  SKIP_WITHOUT_SDPA();
  Problem p = RandomProblem(2, 8, 8, 2, 4, 6);
  p.bidirectional = false;
  const at::Tensor seg = at::tensor({1, 1, 1, 2, 2, 2, 0, 0, 1, 1, 2, 2, 2, 2, 2, 0},
                                    at::kLong).reshape({2, 8});
  const at::Tensor valid = seg > 0;
  p.mask = at::logical_and(at::logical_and(MakeSegmentMask(seg, seg),
                                           MakeAttentionMask(valid, valid)),
                           MakeCausalMask(8, at::kCPU));
  ExpectSameResults(p, Float32Tol);
  // The padded rows attend uniformly in the fused path too.
  const Result f = RunKernel(AttentionKernel::kFused, p);
  const at::Tensor mean_v = p.v[0].mean(0);  // [H*D]
  EXPECT_LE(MaxDiff(f.out[0][6], mean_v), 1e-6);
}

// Dropout on the probabilities: the fused path folds the keep mask into v.
// Same seed -> same mask -> same outputs and gradients; a different seed
// gives a visibly different output (the comparison can see the mask).
TEST_F(FusedAttentionTest, DropoutSameSeedSameMask) {
  SKIP_WITHOUT_SDPA();
  Problem p = RandomProblem(2, 7, 7, 3, 4, 7);
  const at::Tensor valid = Valid(7, {7, 5});
  p.mask = MakeAttentionMask(valid, valid);
  p.dropout = 0.3;
  p.seed = 1234;
  ExpectSameResults(p, Float32Tol);
  Problem other = p;
  other.seed = 4321;
  const double seed_effect = MaxDiff(RunKernel(AttentionKernel::kUnfused, p).out,
                                     RunKernel(AttentionKernel::kFused, other).out);
  EXPECT_GT(seed_effect, 0.1);
  Problem no_dropout = p;
  no_dropout.dropout = 0.0;
  EXPECT_GT(MaxDiff(RunKernel(AttentionKernel::kFused, p).out,
                    RunKernel(AttentionKernel::kFused, no_dropout).out),
            0.1);
}

// With a bias that does not require grad libtorch's CPU flash kernel runs
// (with one that does, as in the tests above, libtorch falls back to its math
// kernel, which is the unfused arithmetic). Longer sequences; gradients for
// q, k and v through the flash backward.
TEST_F(FusedAttentionTest, ConstantBiasFlashKernel) {
  SKIP_WITHOUT_SDPA();
  for (bool packed : {false, true}) {
    const int64_t b = 2, l = 40, h = 4, d = 8;
    Problem p = RandomProblem(b, l, l, h, d, 9);
    p.bidirectional = !packed;
    const at::Tensor seg = at::cat({at::ones({b, 15}, at::kLong), 2 * at::ones({b, 20}, at::kLong),
                                    at::zeros({b, 5}, at::kLong)}, 1);
    const at::Tensor valid = seg > 0;
    // Packed: padding (segment 0) query rows see no key at all.
    p.mask = packed ? at::logical_and(at::logical_and(MakeSegmentMask(seg, seg),
                                                      MakeAttentionMask(valid, valid)),
                                      MakeCausalMask(l, at::kCPU))
                    : MakeAttentionMask(valid, valid);
    const at::Tensor bias = RelativePositionBias(p.rel, l, l, p.bidirectional, kBuckets,
                                                 kMaxDistance) + MaskToBias(p.mask);
    auto heads = [&](const at::Tensor& t) { return t.view({b, l, h, d}).transpose(1, 2); };
    const std::string backend =
        compat::FusedAttentionBackend(heads(p.q.detach().requires_grad_(true)),
                                      heads(p.k.detach().requires_grad_(true)),
                                      heads(p.v.detach().requires_grad_(true)), bias, 1.0);
    if (backend != "unknown") {
      EXPECT_NE(backend, "math");
    }
    // q, k, v may require grad (the flash kernel has their backward); the
    // bias must not.
    auto run = [&](AttentionKernel kernel) {
      SetAttentionKernel(kernel);
      std::vector<at::Tensor> leaves = {p.q.detach().requires_grad_(true),
                                        p.k.detach().requires_grad_(true),
                                        p.v.detach().requires_grad_(true)};
      const at::Tensor out = AttentionHeads(leaves[0], leaves[1], leaves[2], h, bias, 0.0, false);
      // Rows whose query sees no key get no upstream gradient, as in T5
      // (padding has loss weight 0 and is masked as a key downstream): the
      // flash backward recomputes their probabilities as exp(s - lse) with
      // lse = -1e10 + log(Lk) rounded to -1e10 in float32, i.e. 1 instead
      // of 1/Lk, so their q/k/v gradients would be wrong (see layers.h).
      const at::Tensor row_seen = p.mask.any(-1).reshape({b, l, 1}).to(at::kFloat);
      (out * at::cos(at::arange(out.numel()).reshape(out.sizes())) * row_seen)
          .sum()
          .backward();
      return std::vector<at::Tensor>{out.detach(), leaves[0].grad(), leaves[1].grad(),
                                     leaves[2].grad()};
    };
    const std::vector<at::Tensor> u = run(AttentionKernel::kUnfused);
    const std::vector<at::Tensor> f = run(AttentionKernel::kFused);
    const char* names[] = {"out", "dq", "dk", "dv"};
    for (int i = 0; i < 4; ++i) {
      const double diff = MaxDiff(u[i], f[i]);
      EXPECT_LE(diff, kFloat32Tol) << (packed ? "packed " : "padded ") << names[i];
      std::printf("    %s, kernel %s: %-3s max |fused - unfused| = %.3g (bound %.3g)\n",
                  packed ? "packed causal" : "bidirectional padded", backend.c_str(), names[i],
                  diff, kFloat32Tol);
    }
  }
}

// bfloat16 q, k, v with float32_logits (bias float32). The unfused path (t5x)
// rounds the float32 probabilities to bfloat16 before @v (relative error
// <= 2^-9 each, so <= 2^-9 * max|v| = 0.006 on the output for |v| <= 3) and
// rounds the output; the fused path keeps float32 throughout and rounds the
// output once. Two output roundings of values < 4 (bfloat16 ulp <= 1/64, half
// an ulp each) add <= 1/64. Bound on the output: 1/32. Gradients: the
// unfused backward rounds dprobs = g.v^T, the probabilities and the q/k/v
// gradients to bfloat16 at each step; bound 2^-5 of the largest gradient
// entry (a few bfloat16 ulps, 2^-8 relative each, over ~4 rounded steps).
TEST_F(FusedAttentionTest, Float32LogitsOnBfloat16) {
  SKIP_WITHOUT_SDPA();
  Problem p = RandomProblem(2, 7, 7, 3, 4, 8);
  const at::Tensor valid = Valid(7, {7, 5});
  p.mask = MakeAttentionMask(valid, valid);
  p.dtype = at::kBFloat16;
  p.float32_logits = true;
  ExpectSameResults(p, [](const char* name, const at::Tensor& unfused) {
    if (std::string(name) == "out") return 1.0 / 32;
    return unfused.abs().max().item<double>() / 32;
  });
}

// at::rms_norm (used on CUDA for RmsNorm's float32 step) computes
// x * rsqrt(mean(x^2) + eps): x = [3, 4] -> mean 12.5 -> [3, 4] / sqrt(12.5).
TEST(FusedRmsNormTest, MatchesHandValues) {
  if (!compat::kHasFusedRmsNorm) {
    GTEST_SKIP() << "libtorch " << compat::kTorchMajor << "." << compat::kTorchMinor
                 << " has no fused at::rms_norm (needs 2.8)";
  }
  const at::Tensor y = compat::RmsNormalize(at::tensor({3.f, 4.f}).reshape({1, 2}), 1e-6);
  EXPECT_NEAR(y[0][0].item<double>(), 3 / std::sqrt(12.5 + 1e-6), 1e-6);
  EXPECT_NEAR(y[0][1].item<double>(), 4 / std::sqrt(12.5 + 1e-6), 1e-6);
}

}  // namespace
}  // namespace t5xx::models
