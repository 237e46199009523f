// ParallelFor: independent jobs over a few threads (see parallel_for.h).
#include "t5xx/util/system/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace t5xx {

int DefaultThreadCount() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void ParallelFor(size_t n, int num_threads, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  const size_t threads =
      std::min(n, static_cast<size_t>(num_threads > 0 ? num_threads : DefaultThreadCount()));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  std::mutex mu;
  auto work = [&] {
    while (!failed) {
      const size_t i = next++;
      if (i >= n) return;
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!first) first = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace t5xx
