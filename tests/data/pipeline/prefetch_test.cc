// Tests for the Prefetch stage (t5xx/data/pipeline/dataset.h, prefetch.cc), the
// BackgroundProducer behind it (background_producer.h) and the
// process-wide data thread count (data_threads.h).
//
// Expected values are built by hand (ranges of integers) or by the same
// pipeline without threads: a prefetched stream must equal its input.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "test_util.h"

#include "t5xx/data/pipeline/background_producer.h"
#include "t5xx/data/pipeline/data_threads.h"
#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

using json = nlohmann::json;

// Yields {"x": [i]} for i in [0, n) (n < 0: forever), counting the calls to
// Next() in *reads; throws t5xx::Error("boom at <i>") at i == throw_at.
class CountingRange : public Dataset {
 public:
  CountingRange(int64_t n, std::atomic<int64_t>* reads, int64_t throw_at = -1)
      : n_(n), reads_(reads), throw_at_(throw_at) {}
  std::optional<Example> Next() override {
    if (reads_) ++*reads_;
    if (n_ >= 0 && pos_ >= n_) return std::nullopt;
    if (pos_ == throw_at_) throw DataStepError("boom at " + std::to_string(pos_));
    return Example{{"x", Tokens{static_cast<int32_t>(pos_++)}}};
  }
  json SaveState() const override { return {{"pos", pos_}}; }
  void RestoreState(const json& state) override { pos_ = state.at("pos").get<int64_t>(); }

 private:
  int64_t n_;
  std::atomic<int64_t>* reads_;
  int64_t throw_at_;
  int64_t pos_ = 0;
};

std::vector<int32_t> Values(const std::vector<Example>& exs) {
  std::vector<int32_t> out;
  for (const auto& e : exs) out.push_back(GetTokens(e, "x").at(0));
  return out;
}

std::vector<int32_t> Iota(int32_t begin, int32_t end) {
  std::vector<int32_t> out;
  for (int32_t i = begin; i < end; ++i) out.push_back(i);
  return out;
}

TEST(PrefetchTest, SameStreamForEveryBufferSize) {
  for (size_t buffer : {0, 1, 2, 5, 64, 5000}) {
    auto ds = Prefetch(std::make_unique<CountingRange>(1000, nullptr), buffer);
    EXPECT_EQ(Values(Collect(*ds)), Iota(0, 1000)) << "buffer " << buffer;
    EXPECT_FALSE(ds->Next().has_value()) << "the end is sticky";
  }
  // Two prefetch stages in a row, with a map between them.
  auto ds = Prefetch(Map(Prefetch(std::make_unique<CountingRange>(300, nullptr), 8),
                         [](Example ex) {
                           GetMutableTokens(ex, "x")[0] *= 2;
                           return ex;
                         }),
                     3);
  std::vector<int32_t> want;
  for (int32_t i = 0; i < 300; ++i) want.push_back(2 * i);
  EXPECT_EQ(Values(Collect(*ds)), want);
}

TEST(PrefetchTest, ReadsAheadAtMostItsBuffer) {
  // buffer 8: blocks of 4 examples, at most 2 blocks queued.
  std::atomic<int64_t> reads{0};
  auto ds = Prefetch(std::make_unique<CountingRange>(-1, &reads), 8);
  ASSERT_EQ(GetTokens(*ds->Next(), "x")[0], 0);
  // 1 block taken by the consumer + 2 queued = 12 examples read.
  ::t5xx::testing::WaitForAtLeast(reads, 12);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(reads.load(), 12);
}

TEST(PrefetchTest, SaveWithFullBufferRestoresTheConsumersPosition) {
  for (size_t k : {0, 1, 7, 8, 9, 100, 599}) {
    std::atomic<int64_t> reads{0};
    auto ds = Prefetch(std::make_unique<CountingRange>(600, &reads), 16);
    const auto head = Collect(*ds, k);
    // Let the thread fill its buffer (16 ahead, or to the end): the saved
    // state must not depend on how far it has read.
    if (k > 0) ::t5xx::testing::WaitForAtLeast(reads, std::min<int64_t>(k + 16, 601));
    const json saved = json::parse(SavePipelineState(*ds).dump());
    // The consumer's position, no examples: the start of the block of 8 it
    // takes from (the one holding example k - 1) and the examples taken.
    const int64_t start = k == 0 ? 0 : static_cast<int64_t>((k - 1) / 8 * 8);
    EXPECT_EQ(saved["state"], (json{{"input", {{"pos", start}}},
                                    {"skip", static_cast<int64_t>(k) - start}}))
        << "k=" << k;
    const auto rest = Values(Collect(*ds));
    EXPECT_EQ(rest, Iota(static_cast<int32_t>(k), 600)) << "k=" << k;
    // Restored with and without a thread: the same continuation.
    for (size_t buffer : {0, 4, 16}) {
      auto fresh = Prefetch(std::make_unique<CountingRange>(600, nullptr), buffer);
      RestorePipelineState(*fresh, saved);
      EXPECT_EQ(Values(Collect(*fresh)), rest) << "k=" << k << " buffer " << buffer;
    }
  }
  // A position saved without a thread restores into a prefetching stage.
  auto plain = Prefetch(std::make_unique<CountingRange>(50, nullptr), 0);
  Collect(*plain, 20);
  const json saved = SavePipelineState(*plain);
  EXPECT_EQ(saved["state"], (json{{"input", {{"pos", 20}}}, {"skip", 0}}));
  auto fresh = Prefetch(std::make_unique<CountingRange>(50, nullptr), 6);
  RestorePipelineState(*fresh, saved);
  EXPECT_EQ(Values(Collect(*fresh)), Iota(20, 50));
}

TEST(PrefetchTest, SavedBytesDependOnlyOnThePosition) {
  // Run A saves after 45 examples; run B saves after 20, is restored, reads
  // to 45 and saves again: the same bytes (a resumed training run writes
  // the same dataset checkpoint as one in one go), here with blocks of 8.
  auto make = [] {
    return Prefetch(Map(std::make_unique<CountingRange>(1000, nullptr),
                        [](Example ex) { return ex; }),
                    16);
  };
  auto a = make();
  Collect(*a, 45);
  const std::string saved_a = SavePipelineState(*a).dump();
  for (size_t j : {1, 3, 20, 44, 45}) {
    auto b1 = make();
    Collect(*b1, j);
    const std::string saved_j = SavePipelineState(*b1).dump();
    auto b2 = make();
    RestorePipelineState(*b2, json::parse(saved_j));
    if (j == 45) EXPECT_EQ(SavePipelineState(*b2).dump(), saved_a) << "before any read";
    Collect(*b2, 45 - j);
    EXPECT_EQ(SavePipelineState(*b2).dump(), saved_a) << "restored at " << j;
  }
  // The consumer is in the block of 8 that starts at example 40.
  EXPECT_EQ(saved_a, R"({"state":{"input":{"input":{"pos":40}},"skip":5},"version":2})");
}

TEST(PrefetchTest, RestoreAfterTheFirstReadThrows) {
  auto ds = Prefetch(std::make_unique<CountingRange>(10, nullptr), 4);
  const json saved = SavePipelineState(*ds);
  ds->Next();
  EXPECT_ERROR_CONTAINS(RestorePipelineState(*ds, saved),
                        "Prefetch: RestoreState must be called before the first Next()");
}

TEST(PrefetchTest, ErrorsArriveAfterTheExamplesBeforeThemWithTheirMessage) {
  for (size_t buffer : {0, 1, 8, 100}) {
    auto ds = Prefetch(std::make_unique<CountingRange>(100, nullptr, /*throw_at=*/57), buffer);
    EXPECT_EQ(Values(Collect(*ds, 57)), Iota(0, 57)) << "buffer " << buffer;
    try {
      ds->Next();
      ADD_FAILURE() << "no error, buffer " << buffer;
    } catch (const DataStepError& e) {  // the type is kept too
      EXPECT_STREQ(e.what(), "boom at 57");
    }
    if (buffer > 0) {
      // The thread stopped at the error: later reads see it again.
      EXPECT_ERROR_CONTAINS(ds->Next(), "boom at 57");
    }
  }
}

TEST(PrefetchTest, DestroyingWithABlockedProducerDoesNotHang) {
  // The thread waits on a full buffer of an endless input; destroying the
  // stage (as a run stopped early does) must return.
  auto done = std::async(std::launch::async, [] {
    for (size_t buffer : {1, 4, 64}) {
      std::atomic<int64_t> reads{0};
      auto ds = Prefetch(std::make_unique<CountingRange>(-1, &reads), buffer);
      ds->Next();
      ::t5xx::testing::WaitForAtLeast(reads, 2);
      ds.reset();
      // Destroyed before its first read: no thread was started.
      auto unused = Prefetch(std::make_unique<CountingRange>(-1, nullptr), buffer);
    }
    return true;
  });
  ASSERT_EQ(done.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(done.get());
}

TEST(BackgroundProducerTest, QueueOrderIdleSnapshotsAndPrepend) {
  int next = 0;
  BackgroundProducer<int> p([&]() -> std::optional<int> {
    if (next == 5) return std::nullopt;
    return next++;
  }, 2);
  EXPECT_TRUE(p.Prepend({100, 101}));
  EXPECT_FALSE(p.started());
  EXPECT_EQ(p.Next(), 100);
  EXPECT_FALSE(p.Prepend({7})) << "Prepend only before the start";
  EXPECT_EQ(p.Next(), 101);
  EXPECT_EQ(p.Next(), 0);
  // With the producer held, the counter and the queue agree: next is the
  // value after the last queued one.
  const bool consistent = p.WithProducerIdle([&](const std::deque<int>& q) {
    return q.empty() ? next == 1 : q.back() == next - 1 && q.front() == 1;
  });
  EXPECT_TRUE(consistent);
  EXPECT_TRUE(p.HasNext());
  EXPECT_EQ(p.Next(), 1);
  EXPECT_EQ(p.Next(), 2);
  EXPECT_EQ(p.Next(), 3);
  EXPECT_EQ(p.Next(), 4);
  EXPECT_FALSE(p.HasNext());
  EXPECT_EQ(p.Next(), std::nullopt);

  // Non-t5xx exceptions keep their type.
  BackgroundProducer<int> bad([]() -> std::optional<int> { throw std::out_of_range("oor"); },
                              1);
  EXPECT_THROW(bad.HasNext(), std::out_of_range);
  EXPECT_THROW(bad.Next(), std::out_of_range);
}

// Restores the default thread count when a test changes it.
struct DataThreadsGuard {
  ~DataThreadsGuard() {
    SetDataThreads(0);
    ::unsetenv(kDataThreadsEnv);
  }
};

TEST(DataThreadsTest, SetEnvironmentAndDefault) {
  DataThreadsGuard guard;
  ::unsetenv(kDataThreadsEnv);
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_EQ(DataThreads(), std::clamp(hw, 1, 8));
  ::setenv(kDataThreadsEnv, "3", 1);
  EXPECT_EQ(DataThreads(), 3);
  SetDataThreads(5);  // the call wins over the environment
  EXPECT_EQ(DataThreads(), 5);
  EXPECT_EQ(ResolveDataThreads(0), 5);
  EXPECT_EQ(ResolveDataThreads(2), 2);
  SetDataThreads(0);
  EXPECT_EQ(DataThreads(), 3);
  for (const char* bad : {"0", "-2", "two", "4x", "257"}) {
    ::setenv(kDataThreadsEnv, bad, 1);
    EXPECT_ERROR_CONTAINS(DataThreads(), std::string("T5XX_DATA_THREADS='") + bad +
                                             "' is not a thread count");
  }
  EXPECT_ERROR_CONTAINS(SetDataThreads(-1), "must be in [1, 256] (0 = the default), got -1");
  EXPECT_ERROR_CONTAINS(SetDataThreads(300), "got 300");
}

}  // namespace
}  // namespace t5xx::seqio
