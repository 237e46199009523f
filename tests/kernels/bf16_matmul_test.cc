// The CPU's bfloat16 matmul choice (kernels/bf16_matmul.h): the mode's
// parsing, the pure decision, the probe against a direct check of how
// libtorch's native bfloat16 matmul accumulates here, and MatmulIn under each
// mode.
#include "t5xx/kernels/bf16_matmul.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "t5xx/kernels/cpu/cpu_info.h"
#include "t5xx/models/networks/layers.h"
#include "t5xx/util/error.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::models {
namespace {

// Restores the process's mode (from the environment) when a test ends.
struct RestoreMode {
  ~RestoreMode() { SetCpuBf16MatmulMode(Bf16MatmulModeFromEnvironment()); }
};

TEST(Bf16MatmulTest, ParsesTheThreeModesAndRefusesOthers) {
  EXPECT_EQ(ParseBf16MatmulMode("", "X"), Bf16MatmulMode::kAuto);
  EXPECT_EQ(ParseBf16MatmulMode("auto", "X"), Bf16MatmulMode::kAuto);
  EXPECT_EQ(ParseBf16MatmulMode("emulated", "X"), Bf16MatmulMode::kEmulated);
  EXPECT_EQ(ParseBf16MatmulMode("native", "X"), Bf16MatmulMode::kNative);
  try {
    ParseBf16MatmulMode("Native", "environment variable T5XX_BF16_MATMUL");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("environment variable T5XX_BF16_MATMUL = 'Native'"), std::string::npos) << m;
    EXPECT_NE(m.find("auto"), std::string::npos) << m;
    EXPECT_NE(m.find("emulated or native"), std::string::npos) << m;
  }
}

TEST(Bf16MatmulTest, ModeFromTheEnvironment) {
  const char* old = std::getenv("T5XX_BF16_MATMUL");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ::setenv("T5XX_BF16_MATMUL", "emulated", 1);
  EXPECT_EQ(Bf16MatmulModeFromEnvironment(), Bf16MatmulMode::kEmulated);
  ::setenv("T5XX_BF16_MATMUL", "fast", 1);
  EXPECT_THROW(Bf16MatmulModeFromEnvironment(), Error);
  ::unsetenv("T5XX_BF16_MATMUL");
  EXPECT_EQ(Bf16MatmulModeFromEnvironment(), Bf16MatmulMode::kAuto);
  if (saved) ::setenv("T5XX_BF16_MATMUL", saved->c_str(), 1);
}

Bf16MatmulProbe Probe(bool float32, int64_t from = 17) {
  Bf16MatmulProbe p;
  p.accumulates_in_float32 = float32;
  p.min_float32_multiply_adds = float32 ? from : 0;
  return p;
}

TEST(Bf16MatmulTest, DecisionTable) {
  using M = Bf16MatmulMode;
  // auto: native only with the instructions and float32 accumulation.
  EXPECT_TRUE(ChooseBf16Matmul(M::kAuto, true, Probe(true)).native);
  EXPECT_FALSE(ChooseBf16Matmul(M::kAuto, true, Probe(false)).native);
  EXPECT_FALSE(ChooseBf16Matmul(M::kAuto, false, Probe(true)).native);
  EXPECT_FALSE(ChooseBf16Matmul(M::kAuto, false, Probe(false)).native);
  // Native from the probe's smallest float32 size (libtorch 1.13 with
  // oneDNN: 4352 = 16 x 17 x 16 passes, 1 x 17 x 1 does not).
  const Bf16MatmulChoice from = ChooseBf16Matmul(M::kAuto, true, Probe(true, 4352));
  EXPECT_TRUE(from.native);
  EXPECT_EQ(from.min_native_multiply_adds, 4352);
  // Forced modes ignore both; forced native has no size limit.
  EXPECT_FALSE(ChooseBf16Matmul(M::kEmulated, true, Probe(true)).native);
  const Bf16MatmulChoice forced = ChooseBf16Matmul(M::kNative, false, Probe(false));
  EXPECT_TRUE(forced.native);
  EXPECT_EQ(forced.min_native_multiply_adds, 0);
  // The log line says which and why.
  const std::string lacks = ChooseBf16Matmul(M::kAuto, false, Probe(false)).Describe();
  EXPECT_EQ(lacks.rfind("emulated: ", 0), 0u) << lacks;
  EXPECT_NE(lacks.find("lacks avx512_bf16 and amx_bf16"), std::string::npos) << lacks;
  EXPECT_NE(lacks.find("accumulates in bfloat16 here"), std::string::npos) << lacks;
  const std::string native = ChooseBf16Matmul(M::kAuto, true, Probe(true)).Describe();
  EXPECT_EQ(native.rfind("native (", 0), 0u) << native;
  EXPECT_NE(native.find("verified float32 accumulation"), std::string::npos) << native;
  EXPECT_NE(from.Describe().find(">= 4352 multiply-adds, emulated below"), std::string::npos)
      << from.Describe();
  EXPECT_NE(from.Describe().find("verified float32 accumulation"), std::string::npos);
  EXPECT_NE(forced.Describe().find("T5XX_BF16_MATMUL=native"), std::string::npos)
      << forced.Describe();
  EXPECT_NE(forced.Describe().find("results differ from t5x's"), std::string::npos);
  // Forced native where only large products accumulate in float32.
  EXPECT_NE(ChooseBf16Matmul(M::kNative, true, Probe(true, 4352))
                .Describe()
                .find("from 4352 multiply-adds per product, in bfloat16 below: results differ"),
            std::string::npos);
}

// A direct check, independent of the probe's case: [48, 201] @ [201, 40]
// bfloat16 ones with a[0][0] = 256. In float32, 256 + 200 = 456 exactly, a
// bfloat16 value (456 = 1.1100100b x 2^8); in bfloat16, in order, 256 + 1 =
// 257 rounds to even, 256, and stays there (numpy + ml_dtypes: reduce with
// bf16 rounding -> 256).
double DirectCheck() {
  at::Tensor a = at::ones({48, 201});
  a[0][0] = 256.0;
  const at::Tensor c = at::matmul(a.to(at::kBFloat16), at::ones({201, 40}, at::kBFloat16));
  return c[0][0].item<double>();
}

TEST(Bf16MatmulTest, ProbeAgreesWithADirectCheckOfThisMachine) {
  const double direct = DirectCheck();
  ASSERT_TRUE(direct == 456.0 || direct == 256.0) << direct;
  const Bf16MatmulProbe probe = ProbeNativeCpuBf16Matmul();
  // The direct check's size (48 x 201 x 40 = 385,920 multiply-adds) lies
  // between the probe's two larger sizes, where libtorch takes one path.
  EXPECT_EQ(probe.accumulates_in_float32, direct == 456.0)
      << "probe failed at '" << probe.failed_layout << "' with " << probe.failed_value;
  if (!probe.accumulates_in_float32) {
    EXPECT_EQ(probe.min_float32_multiply_adds, 0);
    EXPECT_NE(probe.failed_layout.find("64 x 129 x 64"), std::string::npos) << probe.failed_layout;
    EXPECT_NE(probe.failed_value, 384.0);
  } else {
    EXPECT_GE(probe.min_float32_multiply_adds, 17);
    EXPECT_LE(probe.min_float32_multiply_adds, 64 * 129 * 64);
  }
  // The process's choice under auto follows the CPU's flags and the probe.
  RestoreMode restore;
  SetCpuBf16MatmulMode(Bf16MatmulMode::kAuto);
  const Bf16MatmulChoice c = CpuBf16Matmul();
  EXPECT_EQ(c.cpu_has_bf16, device::HostCpuInfo().HasNativeBf16());
  EXPECT_EQ(c.probe.accumulates_in_float32, probe.accumulates_in_float32);
  EXPECT_EQ(c.native, c.cpu_has_bf16 && probe.accumulates_in_float32);
  EXPECT_EQ(NativeCpuBf16Matmul(), c.native);
}

// Forward values and both gradients of MatmulIn in bfloat16 for the shapes
// the networks use, under the current mode.
struct MatmulResults {
  at::Tensor out, grad_a, grad_b;
};
MatmulResults RunMatmulIn(at::IntArrayRef a_shape, at::IntArrayRef b_shape) {
  at::Generator gen = compat::MakeCpuGenerator(11);
  at::Tensor a = at::randn(a_shape, gen, at::kFloat).set_requires_grad(true);
  at::Tensor b = at::randn(b_shape, gen, at::kFloat).set_requires_grad(true);
  at::Tensor out = MatmulIn(a, b, at::kBFloat16);
  const at::Tensor w = at::randn(out.sizes(), gen, at::kFloat);
  (out.to(at::kFloat) * w).sum().backward();
  return {out.detach(), a.grad(), b.grad()};
}

TEST(Bf16MatmulTest, AutoAndEmulatedAgreeBitForBitWhereAutoEmulates) {
  RestoreMode restore;
  for (const auto& [as, bs] :
       {std::pair<std::vector<int64_t>, std::vector<int64_t>>{{3, 40, 96}, {96, 64}},
        {{2, 3, 40, 24}, {2, 3, 24, 40}}}) {
    SetCpuBf16MatmulMode(Bf16MatmulMode::kEmulated);
    const MatmulResults emulated = RunMatmulIn(as, bs);
    SetCpuBf16MatmulMode(Bf16MatmulMode::kAuto);
    const MatmulResults automatic = RunMatmulIn(as, bs);
    ASSERT_EQ(automatic.out.scalar_type(), at::kBFloat16);
    if (!CpuBf16Matmul().native) {
      EXPECT_TRUE(at::equal(automatic.out, emulated.out));
      EXPECT_TRUE(at::equal(automatic.grad_a, emulated.grad_a));
      EXPECT_TRUE(at::equal(automatic.grad_b, emulated.grad_b));
    } else {
      // Native with float32 accumulation: the same up to summation order,
      // i.e. within one bfloat16 step (2^-8 relative) of each other.
      for (const auto& [x, y] :
           {std::pair{automatic.out, emulated.out}, std::pair{automatic.grad_a, emulated.grad_a},
            std::pair{automatic.grad_b, emulated.grad_b}}) {
        const at::Tensor xd = x.to(at::kDouble), yd = y.to(at::kDouble);
        EXPECT_TRUE(((xd - yd).abs() <= yd.abs() * std::ldexp(1.0, -7) + 1e-3).all().item<bool>());
      }
    }
  }
}

// Forced native is libtorch's own bfloat16 matmul on the rounded operands;
// forced emulated is the float32 product rounded once.
TEST(Bf16MatmulTest, ForcedModesReachMatmulIn) {
  RestoreMode restore;
  at::Tensor a = at::ones({48, 201});
  a[0][0] = 256.0;
  const at::Tensor b = at::ones({201, 40});
  SetCpuBf16MatmulMode(Bf16MatmulMode::kNative);
  EXPECT_TRUE(NativeCpuBf16Matmul());
  EXPECT_EQ(MatmulIn(a, b, at::kBFloat16)[0][0].item<double>(), DirectCheck());
  SetCpuBf16MatmulMode(Bf16MatmulMode::kEmulated);
  EXPECT_FALSE(NativeCpuBf16Matmul());
  EXPECT_EQ(MatmulIn(a, b, at::kBFloat16)[0][0].item<double>(), 456.0);
}

}  // namespace
}  // namespace t5xx::models
