// See intra_op_parallel.h.
#include "t5xx/kernels/cpu/intra_op_parallel.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/TensorIterator.h>

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <stdexcept>
#include <string>

namespace t5xx::device {

void IntraOpParallelFor(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn) {
  if (n <= 0) return;
  // Calls from inside fn on this thread (depth > 0) run serially, also where
  // in_parallel_region() cannot tell (a team of one): the cache below is
  // this thread's and in use.
  thread_local int depth = 0;
  if (n == 1 || at::get_num_threads() <= 1 || at::in_parallel_region() || depth > 0) {
    fn(0, n);
    return;
  }
  struct Depth {
    Depth() { ++depth; }
    ~Depth() { --depth; }
  } const in_loop;
  // One byte per index; only the addresses are used: the loop's data
  // pointer minus the base is the first index of its range. Building the
  // iterator costs ~5 us (measured on a 2-core AMD EPYC: 6.0 us a call
  // against 0.85 us with it kept), as much as a decode step's small
  // kernels: each thread keeps its iterators, one per n, up to
  // kIteratorCacheSize of them.
  constexpr size_t kIteratorCacheSize = 64;
  struct IndexIterator {
    at::Tensor index;
    at::TensorIterator iter;
  };
  thread_local std::unordered_map<int64_t, std::unique_ptr<IndexIterator>> cache;
  // None of them is in use here (this is the thread's outermost call).
  if (cache.size() >= kIteratorCacheSize && cache.count(n) == 0) cache.clear();
  std::unique_ptr<IndexIterator>& slot = cache[n];
  if (!slot) {
    slot = std::make_unique<IndexIterator>();
    slot->index = at::empty({n}, at::TensorOptions().dtype(at::kByte));
    slot->iter = at::TensorIteratorConfig()
                     .add_output(slot->index)
                     .check_all_same_dtype(false)
                     .resize_outputs(false)
                     .build();
  }
  at::TensorIterator& iter = slot->iter;
  const char* base = static_cast<const char*>(slot->index.data_ptr());
  // grain_size 1: every index may go to another thread.
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t size0, int64_t size1) {
        for (int64_t j = 0; j < size1; ++j) {
          const int64_t begin = (data[0] + j * strides[1]) - base;
          fn(begin, begin + size0);
        }
      },
      /*grain_size=*/1);
}

void IntraOpParallelForChunks(
    int64_t n, int64_t chunk,
    const std::function<void(int64_t piece, int64_t begin, int64_t end)>& fn) {
  if (chunk <= 0) {
    throw std::invalid_argument("IntraOpParallelForChunks: chunk must be positive, got " +
                                std::to_string(chunk));
  }
  IntraOpParallelFor(ChunkCount(n, chunk), [&](int64_t first, int64_t last) {
    for (int64_t piece = first; piece < last; ++piece) {
      fn(piece, piece * chunk, std::min(n, (piece + 1) * chunk));
    }
  });
}

}  // namespace t5xx::device
