// IntraOpParallelFor (kernels/cpu/intra_op_parallel.h): every index exactly
// once, and on libtorch's intra-op threads -- two distinct threads when
// at::set_num_threads(2), which a plain at::parallel_for in a file compiled
// without -fopenmp does not give (it runs the range on the caller).
#include "t5xx/kernels/cpu/intra_op_parallel.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace t5xx::device {
namespace {

// Restores libtorch's intra-op thread count when a test ends.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(at::get_num_threads()) {}
  ~ThreadCountGuard() { at::set_num_threads(saved_); }

 private:
  int saved_;
};

TEST(IntraOpParallelForTest, CoversEveryIndexOnce) {
  ThreadCountGuard guard;
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    for (int64_t n : {0, 1, 2, 3, 7, 100, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      for (auto& h : hits) h = 0;
      IntraOpParallelFor(n, [&](int64_t begin, int64_t end) {
        ASSERT_LE(0, begin);
        ASSERT_LT(begin, end);
        ASSERT_LE(end, n);
        for (int64_t i = begin; i < end; ++i) ++hits[static_cast<size_t>(i)];
      });
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n " << n << " index " << i;
      }
    }
  }
}

TEST(IntraOpParallelForTest, RunsOnTwoThreadsWhenLibtorchHasTwo) {
  ThreadCountGuard guard;
  at::set_num_threads(2);
  std::mutex mu;
  std::set<std::thread::id> ids;
  int calls = 0;
  IntraOpParallelFor(64, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
    ++calls;
  });
  // libtorch's OpenMP loop gives each of the 2 threads one half.
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_EQ(calls, 2);

  at::set_num_threads(1);
  ids.clear();
  calls = 0;
  IntraOpParallelFor(64, [&](int64_t begin, int64_t end) {
    ids.insert(std::this_thread::get_id());
    ++calls;
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 64);
  });
  EXPECT_EQ(ids, std::set<std::thread::id>{std::this_thread::get_id()});
  EXPECT_EQ(calls, 1);
}

TEST(IntraOpParallelForTest, RethrowsAnExceptionFromAnyThread) {
  ThreadCountGuard guard;
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    // Index 63 falls to the second thread when there are two.
    EXPECT_THROW(IntraOpParallelFor(64,
                                    [](int64_t begin, int64_t end) {
                                      if (begin <= 63 && 63 < end) throw std::runtime_error("63");
                                    }),
                 std::runtime_error)
        << threads << " threads";
  }
}

}  // namespace
}  // namespace t5xx::device

namespace t5xx::device {
namespace {

TEST(IntraOpParallelForChunksTest, PiecesHaveFixedBoundsOnAnyThreadCount) {
  ThreadCountGuard guard;
  EXPECT_EQ(ChunkCount(0, 4), 0);
  EXPECT_EQ(ChunkCount(8, 4), 2);
  EXPECT_EQ(ChunkCount(9, 4), 3);
  for (int threads : {1, 2, 3}) {
    at::set_num_threads(threads);
    for (int64_t n : {0, 1, 4, 9, 1000}) {
      std::vector<std::pair<int64_t, int64_t>> bounds(static_cast<size_t>(ChunkCount(n, 4)),
                                                      {-1, -1});
      IntraOpParallelForChunks(n, 4, [&](int64_t piece, int64_t begin, int64_t end) {
        bounds[static_cast<size_t>(piece)] = {begin, end};
      });
      for (size_t p = 0; p < bounds.size(); ++p) {
        const int64_t begin = static_cast<int64_t>(p) * 4;
        EXPECT_EQ(bounds[p].first, begin) << threads << " threads, n " << n;
        EXPECT_EQ(bounds[p].second, std::min<int64_t>(n, begin + 4)) << threads << " threads";
      }
    }
  }
  EXPECT_THROW(IntraOpParallelForChunks(5, 0, [](int64_t, int64_t, int64_t) {}),
               std::invalid_argument);
}

}  // namespace
}  // namespace t5xx::device
