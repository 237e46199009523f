// Runs independent jobs on a few threads: fn(i) for every i in [0, n), each
// index exactly once, on min(n, num_threads) threads (the caller's among
// them). Used where work splits into whole files or arrays (checkpoint
// chunks compressed and written, arrays read and decompressed), as
// TensorStore does for t5x's checkpoints. Framework-free.
#pragma once

#include <cstddef>
#include <functional>

namespace t5xx {

// Threads to use for `num_threads` = 0: the machine's hardware threads (at
// least 1).
int DefaultThreadCount();

// Calls fn(i) for i in [0, n); returns when all calls have returned. If any
// call throws, the remaining indices are not started and the first
// exception (in time) is rethrown. num_threads <= 0 means
// DefaultThreadCount().
void ParallelFor(size_t n, int num_threads, const std::function<void(size_t)>& fn);

}  // namespace t5xx
