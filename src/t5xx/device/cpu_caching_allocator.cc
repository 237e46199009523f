// The caching CPU allocator (see cpu_caching_allocator.h).
#include "t5xx/device/cpu_caching_allocator.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "t5xx/util/error.h"
#include "t5xx/util/system/system_memory.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::device {
namespace {

constexpr size_t kMinCached = 64 * 1024;  // below this, the default allocator
constexpr size_t kAlignment = 64;         // libtorch's gAlignment on x86
constexpr size_t kRound = 4096;

class CachingCpuAllocator final : public c10::Allocator {
 public:
  explicit CachingCpuAllocator(c10::Allocator* fallback) : fallback_(fallback) {}

  c10::DataPtr allocate(size_t n) T5XX_ALLOCATOR_ALLOCATE_CONST override {
    if (n < kMinCached) return fallback_->allocate(n);
    void* p = Take(n);
    return {p, p, &Free, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &Free; }

#if T5XX_ALLOCATOR_HAS_COPY_DATA
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
#endif

  void set_limit(size_t limit) {
    std::lock_guard<std::mutex> lock(mu_);
    limit_ = limit;
    TrimLocked();
  }

  void Empty() const {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t keep = limit_;
    limit_ = 0;
    TrimLocked();
    limit_ = keep;
  }

  CpuCacheStats Stats() {
    std::lock_guard<std::mutex> lock(mu_);
    CpuCacheStats s;
    s.installed = true;
    s.limit_bytes = limit_;
    s.cached_bytes = cached_;
    s.in_use_bytes = in_use_;
    s.peak_in_use_bytes = peak_in_use_;
    s.hits = hits_;
    s.misses = misses_;
    return s;
  }

  void ResetPeak() {
    std::lock_guard<std::mutex> lock(mu_);
    peak_in_use_ = in_use_;
  }

  static CachingCpuAllocator* instance;

 private:
  // const: libtorch < 2.3 calls allocate() on a const allocator; the cache
  // state is mutable.
  void* Take(size_t n) const {
    const size_t want = (n + kRound - 1) / kRound * kRound;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.lower_bound(want);
      if (it != free_.end() && it->first <= want + want / 8 + kMinCached) {
        void* p = it->second;
        cached_ -= it->first;
        in_use_ += it->first;
        peak_in_use_ = std::max(peak_in_use_, in_use_);
        free_.erase(it);
        ++hits_;
        return p;
      }
      ++misses_;
    }
    void* p = nullptr;
    if (posix_memalign(&p, kAlignment, want) != 0 || p == nullptr) {
      // Free what the cache holds and try once more before giving up.
      Empty();
      if (posix_memalign(&p, kAlignment, want) != 0 || p == nullptr) {
        throw t5xx::Error("out of CPU memory: could not allocate " + std::to_string(want) +
                          " bytes for a tensor");
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    sizes_[p] = want;
    in_use_ += want;
    peak_in_use_ = std::max(peak_in_use_, in_use_);
    return p;
  }

  static void Free(void* p) {
    if (p == nullptr) return;
    instance->Give(p);
  }

  void Give(void* p) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      const auto it = sizes_.find(p);
      if (it != sizes_.end()) {
        const size_t size = it->second;
        in_use_ -= size;
        free_.emplace(size, p);
        cached_ += size;
        TrimLocked();
        return;
      }
    }
    // Not a block of the cache: a block below kMinCached that the fallback
    // allocated, now freed through this allocator's raw_deleter (libtorch's
    // raw_allocate / raw_deallocate pair, which oneDNN's bfloat16 matmul uses
    // for its scratch memory, pairs the current allocator's allocate with its
    // raw_deleter), or one allocated before the install. Its owner frees it.
    const c10::DeleterFnPtr fallback_free = fallback_->raw_deleter();
    if (fallback_free != nullptr) {
      fallback_free(p);
    } else {
      std::free(p);
    }
  }

  // Returns the largest free blocks to the system until within the limit.
  void TrimLocked() const {
    while (cached_ > limit_ && !free_.empty()) {
      auto last = std::prev(free_.end());
      cached_ -= last->first;
      sizes_.erase(last->second);
      std::free(last->second);
      free_.erase(last);
    }
  }

  c10::Allocator* fallback_;
  mutable std::mutex mu_;
  mutable std::multimap<size_t, void*> free_;        // size -> free block
  mutable std::unordered_map<void*, size_t> sizes_;  // every block -> its size
  mutable size_t limit_ = 0, cached_ = 0, in_use_ = 0, peak_in_use_ = 0;
  mutable int64_t hits_ = 0, misses_ = 0;
};

CachingCpuAllocator* CachingCpuAllocator::instance = nullptr;
std::mutex g_install_mu;

}  // namespace

void InstallCpuCachingAllocator(size_t limit_bytes) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (CachingCpuAllocator::instance != nullptr) {
    CachingCpuAllocator::instance->set_limit(limit_bytes);
    return;
  }
  if (limit_bytes == 0) return;
  // Never deleted: tensors freed during static destruction still reach it.
  auto* a = new CachingCpuAllocator(c10::GetCPUAllocator());
  a->set_limit(limit_bytes);
  CachingCpuAllocator::instance = a;
  // Priority above libtorch's default registration (0) and the mobile one.
  c10::SetCPUAllocator(a, /*priority=*/100);
}

size_t DefaultCpuCacheLimitBytes(int processes_per_host) {
  if (const char* env = std::getenv("T5XX_CPU_CACHE_MIB")) {
    const std::string s = env;
    char* end = nullptr;
    const unsigned long long mib = std::strtoull(s.c_str(), &end, 10);
    T5XX_CHECK(!s.empty() && s[0] != '-' && end != nullptr && *end == '\0',
               "T5XX_CPU_CACHE_MIB='" + s +
                   "' is not a whole number of MiB; set it to the most free CPU memory (MiB) "
                   "t5xx may keep for reuse, or 0 to turn the CPU tensor cache off");
    return static_cast<size_t>(mib) * 1024 * 1024;
  }
  return static_cast<size_t>(PhysicalMemoryBytes() / 4 /
                             static_cast<uint64_t>(std::max(1, processes_per_host)));
}

void EmptyCpuCache() {
  if (CachingCpuAllocator::instance != nullptr) CachingCpuAllocator::instance->Empty();
#if defined(__GLIBC__)
  // Blocks below glibc's (dynamic, up to 32 MiB) mmap threshold went back to
  // its heap, not to the system: hand their pages back too.
  malloc_trim(0);
#endif
}

CpuCacheStats GetCpuCacheStats() {
  if (CachingCpuAllocator::instance == nullptr) return {};
  return CachingCpuAllocator::instance->Stats();
}

void ResetCpuCachePeak() {
  if (CachingCpuAllocator::instance != nullptr) CachingCpuAllocator::instance->ResetPeak();
}

}  // namespace t5xx::device
