// Plain C++ loops on libtorch's intra-op threads, for t5xx's own CPU kernels
// (e.g. the fused Adafactor update, optim/adafactor_fused.h).
//
// Why not at::parallel_for: in libtorch's OpenMP builds (Debian's 1.13, the
// PyPI wheels) at::parallel_for is an inline template that opens
// `#pragma omp parallel` only when the *including* file is compiled with
// -fopenmp (ATen/ParallelOpenMP.h defines INTRA_OP_PARALLEL under _OPENMP);
// t5xx is compiled without it, so there it runs the whole range on the
// calling thread. Compiling t5xx with -fopenmp would link the system's
// libgomp, a second OpenMP runtime beside the one a PyPI libtorch carries.
// IntraOpParallelFor instead hands the range to libtorch's own compiled
// parallel loop (TensorIteratorBase::for_each over a scratch index tensor),
// so the work runs on the threads, runtime and thread count
// (at::set_num_threads) of libtorch's own kernels, in 1.13 and 2.x alike.
#pragma once

#include <cstdint>
#include <functional>

namespace t5xx::device {

// Calls fn(begin, end) on disjoint ranges that together cover [0, n), split
// among libtorch's intra-op threads (one contiguous share each, as
// at::parallel_for splits) when n > 1 and at::get_num_threads() > 1, else
// once as fn(0, n) on the calling thread. Returns when every call has
// returned. How [0, n) is split depends on the thread count, so a caller
// that wants results independent of it gives each index a fixed piece of
// work and combines per-index results in index order. fn runs on other
// threads: it must not use tensor operations (libtorch's thread-local state
// is not copied), only raw data. An exception from fn is rethrown here once
// the other threads' calls have returned (as at::parallel_for does). n <= 0
// calls nothing.
void IntraOpParallelFor(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn);

// IntraOpParallelFor(n, fn) when `work` (the caller's measure of the whole
// range's cost, e.g. multiply-adds) is at least `min_work`, else fn(0, n) on
// the calling thread (a parallel region costs about a microsecond: below
// min_work it costs more than it saves). n <= 0 calls nothing.
inline void IntraOpParallelForIfWorth(int64_t n, int64_t work, int64_t min_work,
                                      const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (work >= min_work) {
    IntraOpParallelFor(n, fn);
  } else {
    fn(0, n);
  }
}

// How many pieces of `chunk` (> 0) cover [0, n): ceil(n / chunk), 0 for n <= 0.
inline int64_t ChunkCount(int64_t n, int64_t chunk) { return n <= 0 ? 0 : (n + chunk - 1) / chunk; }

// [0, n) cut into ChunkCount(n, chunk) pieces of `chunk` elements (the last
// one shorter), the pieces shared among threads as IntraOpParallelFor shares
// indices: calls fn(piece, begin, end) once per piece. A piece's bounds
// depend only on n and chunk, never on the thread count, so per-piece
// results combined in piece order are thread-count independent. Same rules
// for fn as IntraOpParallelFor; throws std::invalid_argument for chunk <= 0.
void IntraOpParallelForChunks(
    int64_t n, int64_t chunk,
    const std::function<void(int64_t piece, int64_t begin, int64_t end)>& fn);

}  // namespace t5xx::device
