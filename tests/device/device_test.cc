// The device layer (src/t5xx/device/device.h). Run as is, it checks the
// CPU (and what a CPU-only build or a machine without a GPU must say); with
// T5XX_TEST_DEVICE=cuda (scripts/gpu_check.sh) the same tests also check a
// GPU: pinned asynchronous copies, per-device generators, memory counters.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "t5xx/device/device.h"
#include "t5xx/util/torch_compat.h"
#include "test_util.h"

namespace t5xx::device {
namespace {

using t5xx::testing::ErrorOf;

// The device under test: T5XX_TEST_DEVICE (unset: the CPU).
at::Device DeviceUnderTest() {
  const char* v = std::getenv("T5XX_TEST_DEVICE");
  return ResolveDevice(v ? v : "cpu", 0, "T5XX_TEST_DEVICE");
}

TEST(DeviceTest, CpuSpecsResolveToTheCpu) {
  EXPECT_EQ(ResolveDevice("cpu", 0, "--device"), at::Device(at::kCPU));
  EXPECT_EQ(ResolveDevice("CPU", 3, "--device"), at::Device(at::kCPU));
  if (CudaDeviceCount() == 0) {
    // auto: the CPU when no GPU is visible, whatever the local rank.
    EXPECT_EQ(ResolveDevice("auto", 0, "--device"), at::Device(at::kCPU));
    EXPECT_EQ(ResolveDevice("", 5, "--device"), at::Device(at::kCPU));
  }
}

TEST(DeviceTest, GpuSpecsPickTheLocalRanksGpuOrSayWhyNot) {
  const int64_t n = CudaDeviceCount();
  if (n == 0) {
    for (const std::string spec : {"cuda", "cuda:0", "gpu"}) {
      const std::string e = ErrorOf([&] { ResolveDevice(spec, 0, "--device"); });
      EXPECT_NE(e.find("--device = '" + spec + "' asks for a GPU"), std::string::npos) << e;
      EXPECT_NE(e.find("--device=cpu"), std::string::npos) << e;
      EXPECT_NE(e.find(BuiltWithCuda() ? "none is visible" : "without CUDA"), std::string::npos)
          << e;
    }
    return;
  }
  // One process per GPU: LOCAL_RANK r takes GPU r mod n (torchrun's rule).
  EXPECT_EQ(ResolveDevice("cuda", 0, "--device"), at::Device(at::kCUDA, 0));
  EXPECT_EQ(ResolveDevice("cuda", static_cast<int>(n), "--device"), at::Device(at::kCUDA, 0));
  EXPECT_EQ(ResolveDevice("auto", static_cast<int>(n) + 1, "--device"),
            at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(1 % n)));
  EXPECT_EQ(ResolveDevice("cuda:0", 7, "--device"), at::Device(at::kCUDA, 0));
  const std::string e = ErrorOf([&] { ResolveDevice("cuda:" + std::to_string(n), 0, "--device"); });
  EXPECT_NE(e.find("this process sees " + std::to_string(n) + " GPU"), std::string::npos) << e;
}

TEST(DeviceTest, MalformedSpecsNameTheFlagAndTheChoices) {
  for (const std::string spec : {"tpu", "cuda:", "cuda:-1", "cuda:x", "cuda0", "cpu:0"}) {
    const std::string e = ErrorOf([&] { ResolveDevice(spec, 0, "--device"); });
    EXPECT_EQ(e, "--device = '" + spec +
                     "' is not a device; use auto (a GPU when there is one, else the CPU), cpu, "
                     "cuda (the GPU of this process's LOCAL_RANK) or cuda:N")
        << spec;
  }
}

TEST(DeviceTest, DataSheetPeaksByName) {
  // Dense bf16 tensor-core rates (NVIDIA data sheets): H100/H200 SXM
  // 989.4 TFLOP/s, H100 PCIe 756, A100 312, L40S 362.05, L4 121.
  EXPECT_DOUBLE_EQ(DenseBf16PeakFlops("NVIDIA H200"), 989.4e12);
  EXPECT_DOUBLE_EQ(DenseBf16PeakFlops("NVIDIA H100 80GB HBM3"), 989.4e12);
  EXPECT_DOUBLE_EQ(DenseBf16PeakFlops("NVIDIA H100 PCIe"), 756e12);
  EXPECT_DOUBLE_EQ(DenseBf16PeakFlops("NVIDIA A100-SXM4-80GB"), 312e12);
  EXPECT_DOUBLE_EQ(DenseBf16PeakFlops("NVIDIA L40S"), 362.05e12);
  EXPECT_DOUBLE_EQ(DenseBf16PeakFlops("NVIDIA L4"), 121e12);
  EXPECT_DOUBLE_EQ(DenseBf16PeakFlops("Tesla V100-SXM2-16GB"), 0.0);
  EXPECT_DOUBLE_EQ(DenseBf16PeakFlops("cpu"), 0.0);
}

TEST(DeviceTest, CpuHasNoDeviceMemoryCountersAndDescribesItsThreads) {
  const at::Device cpu(at::kCPU);
  EXPECT_FALSE(DeviceMemory(cpu).has_value());
  EXPECT_FALSE(TotalDeviceMemoryBytes(cpu).has_value());
  EXPECT_EQ(DeviceName(cpu), "cpu");
  EXPECT_EQ(Describe(cpu).rfind("cpu (", 0), 0u) << Describe(cpu);
  Synchronize(cpu);  // a no-op
  ResetPeakMemory(cpu);
}

TEST(DeviceTest, ToDeviceCopiesValuesAndKeepsATensorAlreadyThere) {
  const at::Device d = DeviceUnderTest();
  const at::Tensor host = at::arange(12, at::kLong).reshape({3, 4}).t();  // not contiguous
  const at::Tensor on = ToDevice(host, d);
  EXPECT_EQ(on.device(), d);
  EXPECT_EQ(on.scalar_type(), at::kLong);
  // Reading back waits for the asynchronous copy (same stream).
  const at::Tensor back = on.to(at::kCPU);
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(back[i][j].item<int64_t>(), j * 4 + i);
  }
  EXPECT_TRUE(ToDevice(on, d).is_same(on));
  EXPECT_FALSE(ToDevice(at::Tensor(), d).defined());
}

TEST(DeviceTest, GeneratorsRepeatPerSeedAndDifferAcrossSeeds) {
  const at::Device d = DeviceUnderTest();
  auto draw = [&](uint64_t seed) {
    at::Generator g = MakeGenerator(seed, d);
    at::Tensor t = at::empty({64}, at::TensorOptions().device(d));
    t.uniform_(0.0, 1.0, g);
    return t.to(at::kCPU);
  };
  EXPECT_TRUE(at::equal(draw(7), draw(7)));
  EXPECT_FALSE(at::equal(draw(7), draw(8)));
  if (d.is_cpu()) {
    // On the CPU it is the CPU generator parameter initialisation uses.
    at::Generator g = compat::MakeCpuGenerator(7);
    at::Tensor t = at::empty({64});
    t.uniform_(0.0, 1.0, g);
    EXPECT_TRUE(at::equal(draw(7), t));
  }
  // A generator made for a step does not move the device's default one.
  at::Generator base = at::globalContext().defaultGenerator(d);
  const uint64_t before = base.current_seed();
  draw(123);
  EXPECT_EQ(base.current_seed(), before);
}

TEST(DeviceTest, GpuMemoryCountersFollowAllocations) {
  const at::Device d = DeviceUnderTest();
  if (!d.is_cuda()) GTEST_SKIP() << "no GPU under test (T5XX_TEST_DEVICE)";
  Synchronize(d);
  ResetPeakMemory(d);
  const auto before = DeviceMemory(d);
  ASSERT_TRUE(before.has_value());
  {
    at::Tensor big = at::empty({64 << 20}, at::TensorOptions().dtype(at::kFloat).device(d));
    const auto during = DeviceMemory(d);
    EXPECT_GE(during->allocated - before->allocated, int64_t{256} << 20);
  }
  const auto after = DeviceMemory(d);
  EXPECT_GE(after->peak_allocated - before->allocated, int64_t{256} << 20);
  EXPECT_GT(*TotalDeviceMemoryBytes(d), int64_t{1} << 30);
  EXPECT_NE(Describe(d).find("compute capability"), std::string::npos) << Describe(d);
}

}  // namespace
}  // namespace t5xx::device
