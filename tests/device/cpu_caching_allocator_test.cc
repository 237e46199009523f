// device/cpu_caching_allocator.h: freed CPU tensors of >= 64 KiB are reused,
// the free-bytes limit is kept, small tensors bypass the cache, and the
// T5XX_CPU_CACHE_MIB setting is read and checked. Sizes are chosen by hand:
// a [256, 1024] float32 tensor is exactly 1 MiB (a multiple of the 4 KiB
// rounding), a [16] float32 tensor 64 bytes.
#include "t5xx/device/cpu_caching_allocator.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cstdlib>

#include "t5xx/util/error.h"
#include "t5xx/util/system/system_memory.h"

namespace t5xx::device {
namespace {

constexpr size_t kMiB = 1024 * 1024;

class CpuCache : public ::testing::Test {
 protected:
  void SetUp() override {
    InstallCpuCachingAllocator(64 * kMiB);
    EmptyCpuCache();
  }
};

TEST_F(CpuCache, AFreedBlockIsHandedOutAgain) {
  const CpuCacheStats before = GetCpuCacheStats();
  ASSERT_TRUE(before.installed);
  void* first = nullptr;
  {
    at::Tensor t = at::empty({256, 1024}, at::kFloat);
    first = t.data_ptr();
    EXPECT_EQ(GetCpuCacheStats().in_use_bytes, before.in_use_bytes + kMiB);
  }
  EXPECT_EQ(GetCpuCacheStats().cached_bytes, kMiB);
  at::Tensor again = at::empty({256, 1024}, at::kFloat);
  EXPECT_EQ(again.data_ptr(), first);
  const CpuCacheStats after = GetCpuCacheStats();
  EXPECT_EQ(after.hits, before.hits + 1);
  EXPECT_EQ(after.misses, before.misses + 1);
  EXPECT_EQ(after.cached_bytes, 0u);
}

TEST_F(CpuCache, ASlightlySmallerRequestReusesTheBlock) {
  void* first = nullptr;
  { first = at::empty({256, 1024}, at::kFloat).data_ptr(); }
  // 1 MiB - 4 KiB: within the 1/8 + 64 KiB slack of the 1 MiB block.
  at::Tensor t = at::empty({256 * 1024 - 1024}, at::kFloat);
  EXPECT_EQ(t.data_ptr(), first);
  // 4 MiB asks for more than the cached block: a new one.
  at::Tensor big = at::empty({1024, 1024}, at::kFloat);
  EXPECT_NE(big.data_ptr(), first);
}

TEST_F(CpuCache, SmallTensorsBypassTheCache) {
  const CpuCacheStats before = GetCpuCacheStats();
  { at::Tensor t = at::ones({16}, at::kFloat); }
  const CpuCacheStats after = GetCpuCacheStats();
  EXPECT_EQ(after.hits + after.misses, before.hits + before.misses);
  EXPECT_EQ(after.cached_bytes, before.cached_bytes);
}

// libtorch's raw_allocate / raw_deallocate (oneDNN's bfloat16 matmul takes
// its scratch memory this way) free through the allocator's raw_deleter:
// that must take both a cache block and a small block the fallback made
// (it threw std::out_of_range for the latter, aborting the train bench).
TEST_F(CpuCache, RawAllocationsOfEverySizeAreFreed) {
  c10::Allocator* allocator = c10::GetAllocator(c10::DeviceType::CPU);
  const CpuCacheStats before = GetCpuCacheStats();
  void* small = allocator->raw_allocate(100);
  ASSERT_NE(small, nullptr);
  allocator->raw_deallocate(small);
  EXPECT_EQ(GetCpuCacheStats().cached_bytes, before.cached_bytes);  // not the cache's
  void* large = allocator->raw_allocate(kMiB);
  ASSERT_NE(large, nullptr);
  allocator->raw_deallocate(large);
  EXPECT_EQ(GetCpuCacheStats().cached_bytes, before.cached_bytes + kMiB);  // kept
}

TEST_F(CpuCache, PeakInUseCountsTheMostLiveBytes) {
  ResetCpuCachePeak();
  const size_t base = GetCpuCacheStats().in_use_bytes;
  EXPECT_EQ(GetCpuCacheStats().peak_in_use_bytes, base);
  {
    at::Tensor one = at::empty({256, 1024}, at::kFloat);   // 1 MiB
    at::Tensor two = at::empty({512, 1024}, at::kFloat);   // 2 MiB
  }
  { at::Tensor again = at::empty({256, 1024}, at::kFloat); }  // reuses a freed block
  EXPECT_EQ(GetCpuCacheStats().peak_in_use_bytes, base + 3 * kMiB);
  ResetCpuCachePeak();
  EXPECT_EQ(GetCpuCacheStats().peak_in_use_bytes, base);
}

TEST_F(CpuCache, FreeBytesStayWithinTheLimit) {
  InstallCpuCachingAllocator(3 * kMiB);
  {
    at::Tensor a = at::empty({256, 1024}, at::kFloat);      // 1 MiB
    at::Tensor b = at::empty({2, 256, 1024}, at::kFloat);   // 2 MiB
    at::Tensor c = at::empty({4, 256, 1024}, at::kFloat);   // 4 MiB
  }
  // 7 MiB freed, 3 MiB kept: the largest blocks go first (4 MiB), then 1 + 2 fit.
  EXPECT_EQ(GetCpuCacheStats().cached_bytes, 3 * kMiB);
  EXPECT_EQ(GetCpuCacheStats().limit_bytes, 3 * kMiB);
  EmptyCpuCache();
  EXPECT_EQ(GetCpuCacheStats().cached_bytes, 0u);
  InstallCpuCachingAllocator(64 * kMiB);
}

TEST_F(CpuCache, ValuesSurviveReuse) {
  { at::Tensor t = at::full({256, 1024}, 7.0f); }
  at::Tensor u = at::arange(256 * 1024, at::kFloat).reshape({256, 1024});
  EXPECT_EQ(u.index({255, 1023}).item<float>(), 256.0f * 1024 - 1);
  EXPECT_EQ(u.sum().item<double>(), (256.0 * 1024 - 1) * (256.0 * 1024) / 2);
}

TEST(DefaultCpuCacheLimitBytes, ReadsTheEnvironment) {
  ::setenv("T5XX_CPU_CACHE_MIB", "512", 1);
  EXPECT_EQ(DefaultCpuCacheLimitBytes(), 512 * kMiB);
  ::setenv("T5XX_CPU_CACHE_MIB", "0", 1);
  EXPECT_EQ(DefaultCpuCacheLimitBytes(), 0u);
  for (const char* bad : {"-1", "lots", "12MiB", ""}) {
    ::setenv("T5XX_CPU_CACHE_MIB", bad, 1);
    try {
      DefaultCpuCacheLimitBytes();
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const t5xx::Error& e) {
      EXPECT_NE(std::string(e.what()).find("T5XX_CPU_CACHE_MIB"), std::string::npos);
    }
  }
  ::unsetenv("T5XX_CPU_CACHE_MIB");
  EXPECT_GT(DefaultCpuCacheLimitBytes(), 0u);
  // A quarter of physical memory, shared among a host's processes; an
  // explicit T5XX_CPU_CACHE_MIB is per process, whatever their number.
  EXPECT_EQ(DefaultCpuCacheLimitBytes(), PhysicalMemoryBytes() / 4);
  EXPECT_EQ(DefaultCpuCacheLimitBytes(4), PhysicalMemoryBytes() / 4 / 4);
  ::setenv("T5XX_CPU_CACHE_MIB", "512", 1);
  EXPECT_EQ(DefaultCpuCacheLimitBytes(4), 512 * kMiB);
  ::unsetenv("T5XX_CPU_CACHE_MIB");
}

}  // namespace
}  // namespace t5xx::device
