// Tests CpuBatchedMatmulInto (cpu_batched_gemm.h): every operand layout
// attention passes (the [B, L, H, D] projections viewed as [B, H, L, D], a
// transposed key, a transposed or strided output) gives the batched product,
// the result does not depend on the thread count, and bad shapes are
// refused with the shapes named.
//
// Reference values: the same products in float64 (at::matmul on double
// tensors, which t5xx does not route), rounded to float32; float32 sums of
// k <= 96 terms of magnitude <= 1 agree to well within 1e-4.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <string>

#include "t5xx/kernels/cpu/cpu_batched_gemm.h"
#include "t5xx/util/error.h"

namespace t5xx::device {
namespace {

at::Tensor Reference(const at::Tensor& a, const at::Tensor& b) {
  return at::matmul(a.to(at::kDouble), b.to(at::kDouble)).to(at::kFloat);
}

class CpuBatchedGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CpuBatchedMatmulAvailable()) GTEST_SKIP() << "built without oneDNN's sgemm";
  }
};

TEST_F(CpuBatchedGemm, HeadViewsAndTransposedKeysGiveTheProduct) {
  at::manual_seed(11);
  // Unequal sizes so a swapped dimension fails: B=3, H=5, Lq=7, Lk=9, D=6.
  const int64_t b = 3, h = 5, lq = 7, lk = 9, d = 6;
  const at::Tensor q = at::rand({b, lq, h * d}).view({b, lq, h, d}).transpose(1, 2);
  const at::Tensor k = at::rand({b, lk, h * d}).view({b, lk, h, d}).transpose(1, 2);
  const at::Tensor kt = k.transpose(-2, -1);  // unit stride in dimension -2: sgemm's 'T'
  at::Tensor logits = at::empty({b, h, lq, lk});
  CpuBatchedMatmulInto(q, kt, logits);
  EXPECT_TRUE(at::allclose(logits, Reference(q, kt), 1e-5, 1e-5));
  EXPECT_GT(logits.abs().sum().item<double>(), 1.0);

  // probs @ v into an output laid out as [B, Lq, H, D].
  const at::Tensor probs = at::rand({b, h, lq, lk});
  const at::Tensor v = at::rand({b, lk, h * d}).view({b, lk, h, d}).transpose(1, 2);
  const at::Tensor out = at::empty({b, lq, h, d}).transpose(1, 2);
  CpuBatchedMatmulInto(probs, v, out);
  EXPECT_TRUE(at::allclose(out, Reference(probs, v), 1e-5, 1e-5));
}

TEST_F(CpuBatchedGemm, OutputLayoutsTransposedAndStrided) {
  at::manual_seed(12);
  const at::Tensor a = at::rand({2, 3, 10, 96}), bm = at::rand({2, 3, 96, 13});
  const at::Tensor expected = Reference(a, bm);
  // Unit stride only in dimension -2: written as out^T = b^T a^T.
  const at::Tensor out_t = at::empty({2, 3, 13, 10}).transpose(-2, -1);
  CpuBatchedMatmulInto(a, bm, out_t);
  EXPECT_TRUE(at::allclose(out_t, expected, 1e-5, 1e-4));
  // No unit stride at all: a temporary, copied in; the gaps stay untouched.
  const at::Tensor wide = at::full({2, 3, 10, 26}, -7.0f);
  const at::Tensor strided = wide.slice(-1, 0, 26, 2);
  CpuBatchedMatmulInto(a, bm, strided);
  EXPECT_TRUE(at::allclose(strided, expected, 1e-5, 1e-4));
  EXPECT_TRUE(at::all(wide.slice(-1, 1, 26, 2) == -7.0f).item<bool>());
  // An operand with no unit stride is copied first.
  const at::Tensor a_strided = at::rand({2, 3, 10, 192}).slice(-1, 0, 192, 2);
  const at::Tensor out = at::empty({2, 3, 10, 13});
  CpuBatchedMatmulInto(a_strided, bm, out);
  EXPECT_TRUE(at::allclose(out, Reference(a_strided, bm), 1e-5, 1e-4));
  // K = 0: zeros.
  const at::Tensor zeros = at::full({2, 4, 4}, 3.0f);
  CpuBatchedMatmulInto(at::empty({2, 4, 0}), at::empty({2, 0, 4}), zeros);
  EXPECT_TRUE(at::all(zeros == 0).item<bool>());
}

TEST_F(CpuBatchedGemm, ResultDoesNotDependOnTheThreadCount) {
  at::manual_seed(13);
  const at::Tensor a = at::rand({4, 6, 64, 48}), bm = at::rand({4, 6, 48, 64});
  const int threads = at::get_num_threads();
  at::Tensor one = at::empty({4, 6, 64, 64}), many = at::empty({4, 6, 64, 64});
  at::set_num_threads(1);
  CpuBatchedMatmulInto(a, bm, one);
  at::set_num_threads(2);
  CpuBatchedMatmulInto(a, bm, many);
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one, many));
  EXPECT_TRUE(at::allclose(one, Reference(a, bm), 1e-5, 1e-4));
}

TEST_F(CpuBatchedGemm, BadShapesAndDtypesAreRefused) {
  const at::Tensor a = at::rand({2, 3, 4}), bm = at::rand({3, 4, 5});
  try {
    CpuBatchedMatmulInto(a, bm, at::empty({2, 3, 5}));
    FAIL() << "mismatched batch sizes were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 3, 4] @ [3, 4, 5]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CpuBatchedMatmulInto(a, at::rand({2, 5, 4}), at::empty({2, 3, 4})), Error);
  EXPECT_THROW(CpuBatchedMatmulInto(a.to(at::kDouble), at::rand({2, 4, 5}).to(at::kDouble),
                                    at::empty({2, 3, 5}, at::kDouble)),
               Error);
  EXPECT_THROW(CpuBatchedMatmulInto(at::rand({4}), at::rand({4}), at::empty({1})), Error);
}

}  // namespace
}  // namespace t5xx::device
