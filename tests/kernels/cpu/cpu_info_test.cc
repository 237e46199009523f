// ParseCpuInfo on hand-written /proc/cpuinfo excerpts (x86 and aarch64
// layouts, as Linux prints them), and the bfloat16 feature test.
#include "t5xx/kernels/cpu/cpu_info.h"

#include <gtest/gtest.h>

namespace t5xx::device {
namespace {

TEST(CpuInfoTest, X86FirstProcessorsModelAndFlags) {
  const std::string text =
      "processor\t: 0\n"
      "vendor_id\t: GenuineIntel\n"
      "model name\t: Intel(R) Xeon(R) Platinum 8480+\n"
      "flags\t\t: fpu sse2 avx2 fma avx512f avx512_bf16 amx_bf16 amx_tile\n"
      "\n"
      "processor\t: 1\n"
      "model name\t: Something Else\n"
      "flags\t\t: fpu\n";
  const CpuInfo info = ParseCpuInfo(text);
  EXPECT_EQ(info.model_name, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(info.flags.size(), 8u);
  EXPECT_TRUE(info.Has("avx512_bf16"));
  EXPECT_FALSE(info.Has("avx512"));  // whole words only
  EXPECT_TRUE(info.HasNativeBf16());
  // MatmulFlags' order, not the file's; fpu and sse2 are not among them.
  EXPECT_EQ(info.MatmulFlagsString(), "avx2 fma avx512f avx512_bf16 amx_bf16 amx_tile");
}

TEST(CpuInfoTest, Avx2OnlyHasNoNativeBf16) {
  const CpuInfo info = ParseCpuInfo("model name\t: AMD EPYC\nflags\t\t: fpu avx avx2 fma\n");
  EXPECT_EQ(info.model_name, "AMD EPYC");
  EXPECT_FALSE(info.HasNativeBf16());
  EXPECT_EQ(info.MatmulFlagsString(), "avx2 fma");
}

TEST(CpuInfoTest, Aarch64FeaturesLineAndNoModelName) {
  const CpuInfo info = ParseCpuInfo(
      "processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd sve bf16 i8mm\n"
      "CPU implementer\t: 0x41\n");
  EXPECT_EQ(info.model_name, "");
  EXPECT_TRUE(info.HasNativeBf16());  // Armv8.6 BF16
  EXPECT_EQ(info.MatmulFlagsString(), "asimd sve bf16");
}

TEST(CpuInfoTest, EmptyTextGivesEmptyFields) {
  const CpuInfo info = ParseCpuInfo("");
  EXPECT_EQ(info.model_name, "");
  EXPECT_TRUE(info.flags.empty());
  EXPECT_FALSE(info.HasNativeBf16());
  EXPECT_EQ(info.MatmulFlagsString(), "");
}

}  // namespace
}  // namespace t5xx::device
