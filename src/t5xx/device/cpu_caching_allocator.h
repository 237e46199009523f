// A caching allocator for libtorch's CPU tensors.
//
// Why: a training step frees and re-allocates the same large activation,
// gradient and logits buffers every step. glibc's malloc hands buffers above
// its mmap threshold (at most 32 MiB) back to the kernel on free, so the next
// step takes a page fault (and a page of zeroing) for every 4 KiB it touches:
// on T5.1.1 tiny (batch 32, 128+32) that was ~180,000 faults and ~40% of the
// CPU time in the kernel per step (measured with /usr/bin/time -v on
// t5xx_train_bench). This allocator keeps freed blocks of >= 64 KiB and hands
// them out again, so a steady-state step allocates no new pages. It plays the
// role of the CUDA caching allocator for CPU memory (PyTorch has none for
// server CPUs; c10's CPUCachingAllocator is per-thread and mobile-only).
//
// Blocks below 64 KiB go to libtorch's default CPU allocator (glibc's bins
// already reuse them). A request is served by the smallest cached block of at
// least its size and at most 1/8 (plus 64 KiB) larger; otherwise a new block
// of the size rounded up to 4 KiB is allocated, 64-byte aligned as libtorch's
// default. Freed blocks are kept while the cached (free) bytes stay within the
// limit; beyond it the largest free blocks are returned to the system. The
// cache is shared by all threads (one mutex).
#pragma once

#include <cstddef>
#include <cstdint>

namespace t5xx::device {

// What InstallCpuCachingAllocator installed and what the cache holds now.
struct CpuCacheStats {
  bool installed = false;
  size_t limit_bytes = 0;     // most free bytes kept
  size_t cached_bytes = 0;    // free bytes held now
  size_t in_use_bytes = 0;    // bytes of live blocks from the cache
  size_t peak_in_use_bytes = 0;  // most in_use_bytes since install or ResetCpuCachePeak
  int64_t hits = 0;           // requests served from the cache
  int64_t misses = 0;         // requests that allocated a new block
};

// Makes the caching allocator libtorch's CPU allocator (c10::SetCPUAllocator)
// with a free-bytes limit of `limit_bytes`; idempotent (a second call only
// changes the limit). Tensors allocated before the call keep their own
// deleter and are freed as before. limit_bytes = 0 leaves libtorch's default
// allocator in place (and is what T5XX_CPU_CACHE_MIB=0 asks for).
void InstallCpuCachingAllocator(size_t limit_bytes);

// The limit t5xx uses by default: $T5XX_CPU_CACHE_MIB MiB when set (0
// disables the cache), else a quarter of the machine's physical memory
// shared among the `processes_per_host` processes of this host (each
// process of a 4-process host keeps at most 1/16 of it).
// Throws t5xx::Error naming T5XX_CPU_CACHE_MIB when it is not a non-negative
// integer.
size_t DefaultCpuCacheLimitBytes(int processes_per_host = 1);

// Returns the free cached blocks to the system (tensors in use are not
// touched), and with glibc the free pages of its heap (malloc_trim).
void EmptyCpuCache();

CpuCacheStats GetCpuCacheStats();

// Sets peak_in_use_bytes to the bytes in use now (benchmarks measure the
// peak of a span this way, without sampling).
void ResetCpuCachePeak();

}  // namespace t5xx::device
