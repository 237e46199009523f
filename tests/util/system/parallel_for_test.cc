// ParallelFor: every index once, on up to the threads asked for, and the
// first exception rethrown after the threads have stopped.
#include "t5xx/util/system/parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace t5xx {
namespace {

TEST(ParallelForTest, RunsEveryIndexOnceOnUpToTheThreadsAskedFor) {
  std::vector<std::atomic<int>> seen(1000);
  std::mutex mu;
  std::set<std::thread::id> threads;
  ParallelFor(seen.size(), 3, [&](size_t i) {
    ++seen[i];
    std::lock_guard<std::mutex> lock(mu);
    threads.insert(std::this_thread::get_id());
  });
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
  EXPECT_GE(threads.size(), 1u);
  EXPECT_LE(threads.size(), 3u);
  EXPECT_GE(DefaultThreadCount(), 1);
  ParallelFor(0, 4, [](size_t) { FAIL() << "no index for n = 0"; });
}

TEST(ParallelForTest, RethrowsTheFirstErrorAndStopsStartingJobs) {
  // One thread: jobs run in order, and none starts after job 5 fails.
  std::atomic<int> started{0};
  try {
    ParallelFor(100, 1, [&](size_t i) {
      ++started;
      if (i == 5) throw std::runtime_error("job 5 failed");
    });
    FAIL() << "expected the job's error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "job 5 failed");
  }
  EXPECT_EQ(started.load(), 6);
  // Several threads: the error still comes back to the caller.
  EXPECT_THROW(ParallelFor(100, 4,
                           [](size_t i) {
                             if (i == 50) throw std::runtime_error("job 50 failed");
                           }),
               std::runtime_error);
}

}  // namespace
}  // namespace t5xx
