// See intra_op_parallel.h.
#include "t5xx/kernels/cpu/intra_op_parallel.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/TensorIterator.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace t5xx::device {

void IntraOpParallelFor(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn) {
  if (n <= 0) return;
  if (n == 1 || at::get_num_threads() <= 1 || at::in_parallel_region()) {
    fn(0, n);
    return;
  }
  // One byte per index; only the addresses are used: the loop's data
  // pointer minus the base is the first index of its range.
  at::Tensor index = at::empty({n}, at::TensorOptions().dtype(at::kByte));
  at::TensorIterator iter = at::TensorIteratorConfig()
                                .add_output(index)
                                .check_all_same_dtype(false)
                                .resize_outputs(false)
                                .build();
  const char* base = static_cast<const char*>(index.data_ptr());
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
