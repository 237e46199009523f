// Tests the sgemm_ forwarder (cpu_gemm.h): libtorch's float32 matmuls reach
// it, every operand layout libtorch passes (transposed or not, row strides
// wider than the rows, beta != 0 through addmm) gives the product, and
// T5XX_CPU_GEMM is checked.
//
// Reference values: the same products in float64 (at::mm on double tensors
// calls dgemm_, which t5xx does not forward), rounded to float32; a float32
// sgemm of k <= 300 terms of magnitude <= 1 agrees to well within 1e-4.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

#include "scoped_env.h"
#include "t5xx/kernels/cpu/cpu_gemm.h"
#include "t5xx/util/error.h"

namespace t5xx::device {
namespace {

using t5xx::testing::ScopedEnv;

at::Tensor Reference(const at::Tensor& a, const at::Tensor& b) {
  return at::mm(a.to(at::kDouble), b.to(at::kDouble)).to(at::kFloat);
}

TEST(CpuGemm, EveryLayoutGivesTheProduct) {
  at::manual_seed(7);
  const long long before = GetCpuGemmCalls().onednn + GetCpuGemmCalls().blas;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      // m, k, n chosen unequal (and one odd) so a swapped dimension fails.
      const int64_t m = 37, k = 300, n = 129;
      at::Tensor a = ta ? at::rand({k, m}).t() : at::rand({m, k});
      at::Tensor b = tb ? at::rand({n, k}).t() : at::rand({k, n});
      const at::Tensor c = at::mm(a, b);
      EXPECT_TRUE(at::allclose(c, Reference(a, b), 1e-5, 1e-4))
          << "transpose a " << ta << " b " << tb;
    }
  }
  // Leading dimensions wider than the rows: columns sliced out of a wider
  // matrix keep its row stride.
  const at::Tensor wide_a = at::rand({40, 90}), wide_b = at::rand({90, 70});
  const at::Tensor a = wide_a.narrow(1, 5, 64), b = wide_b.narrow(0, 3, 64).narrow(1, 1, 50);
  EXPECT_TRUE(at::allclose(at::mm(a, b), Reference(a, b), 1e-5, 1e-4));
  // beta = 1, alpha = 0.5: addmm(c, a, b) = c + 0.5 a b.
  const at::Tensor c0 = at::rand({40, 50});
  EXPECT_TRUE(at::allclose(at::addmm(c0, a, b, /*beta=*/1, /*alpha=*/0.5),
                           c0 + 0.5 * Reference(a, b), 1e-5, 1e-4));
  const long long after = GetCpuGemmCalls().onednn + GetCpuGemmCalls().blas;
  if (CpuGemmForwarderBuilt() && CpuGemmDescription().find("oneDNN") != std::string::npos) {
    // 4 layouts + 1 strided + 1 addmm, each one sgemm_ call through oneDNN.
    EXPECT_GE(GetCpuGemmCalls().onednn, 6);
    EXPECT_EQ(after - before, 6);
  }
}

TEST(CpuGemm, RepeatedProductsAreBitwiseEqual) {
  at::manual_seed(3);
  const at::Tensor a = at::randn({256, 512}), b = at::randn({512, 384});
  EXPECT_TRUE(at::equal(at::mm(a, b), at::mm(a, b)));
}

TEST(CpuGemm, DescriptionNamesTheBackend) {
  const std::string description = CpuGemmDescription();
  EXPECT_EQ(description.rfind("float32 matmuls: ", 0), 0u) << description;
  if (CpuGemmForwarderBuilt()) {
    // Debian's libtorch calls sgemm_ through the dynamic linker, so the
    // executable's forwarder is the one it reaches.
    EXPECT_NE(description.find("oneDNN"), std::string::npos) << description;
  }
}

TEST(CpuGemm, EnvironmentIsChecked) {
  {
    ScopedEnv env("T5XX_CPU_GEMM", "blas");
    EXPECT_EQ(CpuGemmBackendFromEnv(), CpuGemmBackend::kBlas);
  }
  {
    ScopedEnv env("T5XX_CPU_GEMM", "mkl");
    try {
      CpuGemmBackendFromEnv();
      FAIL() << "T5XX_CPU_GEMM=mkl accepted";
    } catch (const t5xx::Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("T5XX_CPU_GEMM='mkl'"), std::string::npos) << message;
      EXPECT_NE(message.find("T5XX_CPU_GEMM=onednn"), std::string::npos) << message;
      EXPECT_NE(message.find("T5XX_CPU_GEMM=blas"), std::string::npos) << message;
    }
  }
  {
    ScopedEnv env("T5XX_CPU_GEMM", "onednn");
    if (CpuGemmForwarderBuilt()) {
      EXPECT_EQ(CpuGemmBackendFromEnv(), CpuGemmBackend::kOneDnn);
    } else {
      EXPECT_THROW(CpuGemmBackendFromEnv(), t5xx::Error);
    }
  }
  ScopedEnv unset("T5XX_CPU_GEMM", std::nullopt);
  EXPECT_EQ(CpuGemmBackendFromEnv(),
            CpuGemmForwarderBuilt() ? CpuGemmBackend::kOneDnn : CpuGemmBackend::kBlas);
}

}  // namespace
}  // namespace t5xx::device
