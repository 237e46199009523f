// Tests for ParallelMap, Take, Skip, Interleave (t5xx/data/pipeline/dataset.h) and
// span corruption's num_threads (t5xx/data/preprocessors/span_corruption.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/preprocessors/span_corruption.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

Example Ex(int32_t v) { return Example{{"x", Tokens{v}}}; }

std::vector<Example> Range(int32_t begin, int32_t end) {
  std::vector<Example> out;
  for (int32_t i = begin; i < end; ++i) out.push_back(Ex(i));
  return out;
}

std::vector<int32_t> Values(const std::vector<Example>& exs) {
  std::vector<int32_t> out;
  for (const auto& e : exs) out.push_back(GetTokens(e, "x").at(0));
  return out;
}

// A pure, non-trivial function of the input.
Example Square(Example ex) {
  const int32_t v = GetTokens(ex, "x").at(0);
  ex["x"] = Tokens{v * v + 1, v};
  ex["s"] = std::string("v") + std::to_string(v);
  return ex;
}

// Collects k examples, saves the state (through JSON text), then checks a
// fresh pipeline restored from it yields exactly the remainder.
void CheckRoundTrip(const std::function<DatasetPtr()>& make, size_t k) {
  auto full_ds = make();
  const auto full = Collect(*full_ds);
  auto ds = make();
  auto head = Collect(*ds, k);
  const std::string saved = SavePipelineState(*ds).dump();
  auto rest = Collect(*ds);
  auto fresh = make();
  RestorePipelineState(*fresh, nlohmann::json::parse(saved));
  auto restored_rest = Collect(*fresh);
  EXPECT_EQ(rest, restored_rest) << "k=" << k;
  head.insert(head.end(), rest.begin(), rest.end());
  EXPECT_EQ(head, full) << "k=" << k;
}

TEST(ParallelMapTest, IdenticalForAnyThreadCountAndEqualsMap) {
  const auto input = Range(0, 1000);
  auto m = Map(FromVector(input), Square);
  const auto want = Collect(*m);
  ASSERT_EQ(want.size(), 1000u);
  for (int threads : {0, 1, 2, 4}) {
    auto ds = ParallelMap(FromVector(input), Square, threads);
    EXPECT_EQ(Collect(*ds), want) << threads << " threads";
  }
}

TEST(ParallelMapTest, IndexedGivesInputOrderIndices) {
  for (int threads : {1, 3}) {
    auto ds = ParallelMapIndexed(
        FromVector(Range(100, 400)),
        [](Example ex, uint64_t i) {
          ex["i"] = Tokens{static_cast<int32_t>(i)};
          return ex;
        },
        threads);
    const auto out = Collect(*ds);
    ASSERT_EQ(out.size(), 300u);
    for (size_t i = 0; i < out.size(); ++i) {
      EXPECT_EQ(GetTokens(out[i], "i")[0], static_cast<int32_t>(i));
      EXPECT_EQ(GetTokens(out[i], "x")[0], static_cast<int32_t>(100 + i));
    }
  }
}

TEST(ParallelMapTest, StateRoundTripMidChunk) {
  for (int threads : {1, 2, 4}) {
    auto make = [&] { return ParallelMap(FromVector(Range(0, 700)), Square, threads); };
    for (size_t k : {0, 1, 63, 64, 130, 256, 699, 700}) CheckRoundTrip(make, k);
  }
}

TEST(ParallelMapTest, ErrorsPropagateAndBadThreadCountThrows) {
  EXPECT_THROW(ParallelMap(FromVector(Range(0, 3)), Square, -1), Error);
  auto ds = ParallelMap(
      FromVector(Range(0, 100)),
      [](Example ex) -> Example {
        if (GetTokens(ex, "x")[0] == 57) throw Error("boom");
        return ex;
      },
      4);
  EXPECT_THROW(Collect(*ds), Error);
}

TEST(TakeSkipTest, Semantics) {
  auto t = Take(FromVector(Range(0, 5)), 3);
  EXPECT_EQ(Values(Collect(*t)), (std::vector<int32_t>{0, 1, 2}));
  auto t_all = Take(FromVector(Range(0, 3)), -1);
  EXPECT_EQ(Values(Collect(*t_all)), (std::vector<int32_t>{0, 1, 2}));
  auto t_more = Take(FromVector(Range(0, 2)), 10);
  EXPECT_EQ(Values(Collect(*t_more)), (std::vector<int32_t>{0, 1}));
  auto t0 = Take(FromVector(Range(0, 2)), 0);
  EXPECT_TRUE(Collect(*t0).empty());
  auto s = Skip(FromVector(Range(0, 5)), 3);
  EXPECT_EQ(Values(Collect(*s)), (std::vector<int32_t>{3, 4}));
  auto s_all = Skip(FromVector(Range(0, 5)), -1);
  EXPECT_TRUE(Collect(*s_all).empty());
  auto s_more = Skip(FromVector(Range(0, 2)), 7);
  EXPECT_TRUE(Collect(*s_more).empty());
  auto s0 = Skip(FromVector(Range(0, 2)), 0);
  EXPECT_EQ(Values(Collect(*s0)), (std::vector<int32_t>{0, 1}));
  // skip(2).take(2) over 0..9 = 2, 3.
  auto st = Take(Skip(FromVector(Range(0, 10)), 2), 2);
  EXPECT_EQ(Values(Collect(*st)), (std::vector<int32_t>{2, 3}));
  EXPECT_THROW(Take(FromVector(Range(0, 1)), -2), Error);
  EXPECT_THROW(Skip(FromVector(Range(0, 1)), -2), Error);
}

TEST(TakeSkipTest, StateRoundTrips) {
  auto make = [] { return Take(Skip(FromVector(Range(0, 20)), 5), 8); };
  for (size_t k = 0; k <= 8; ++k) CheckRoundTrip(make, k);
}

std::vector<std::function<DatasetPtr()>> AbcFactories() {
  // a = 0 1 2, b = 10, c = 20 21.
  return {[] { return FromVector(Range(0, 3)); },
          [] { return FromVector(Range(10, 11)); },
          [] { return FromVector(Range(20, 22)); }};
}

TEST(InterleaveTest, CycleAndBlockSemantics) {
  // cycle 2, block 1: a0 b0 a1 (b ends -> back to a) a2 (slot 1 opens c) c0
  // (a ends) c1.
  auto d = Interleave(AbcFactories(), 2, 1);
  EXPECT_EQ(Values(Collect(*d)), (std::vector<int32_t>{0, 10, 1, 2, 20, 21}));
  // cycle 2, block 2: a0 a1 | b0 (b ends) | a2 (a ends) | c0 c1.
  auto d2 = Interleave(AbcFactories(), 2, 2);
  EXPECT_EQ(Values(Collect(*d2)), (std::vector<int32_t>{0, 1, 10, 2, 20, 21}));
  // cycle 3, block 1: a0 b0 c0 a1 (b ends) c1 a2.
  auto d3 = Interleave(AbcFactories(), 3, 1);
  EXPECT_EQ(Values(Collect(*d3)), (std::vector<int32_t>{0, 10, 20, 1, 21, 2}));
  // cycle 1 = concatenation.
  auto d1 = Interleave(AbcFactories(), 1, 2);
  EXPECT_EQ(Values(Collect(*d1)), (std::vector<int32_t>{0, 1, 2, 10, 20, 21}));
  // Empty inputs are skipped.
  auto de = Interleave({[] { return FromVector({}); },
                        [] { return FromVector(Range(5, 7)); }},
                       2, 1);
  EXPECT_EQ(Values(Collect(*de)), (std::vector<int32_t>{5, 6}));
  auto none = Interleave({}, 2, 1);
  EXPECT_TRUE(Collect(*none).empty());
  EXPECT_THROW(Interleave(AbcFactories(), 0, 1), Error);
  EXPECT_THROW(Interleave(AbcFactories(), 1, 0), Error);
}

TEST(InterleaveTest, StateRoundTrips) {
  for (int cycle : {1, 2, 3, 5}) {
    for (int block : {1, 2, 3}) {
      auto make = [=] { return Interleave(AbcFactories(), cycle, block); };
      for (size_t k = 0; k <= 6; ++k) CheckRoundTrip(make, k);
    }
  }
}

// Span corruption: num_threads 1 vs 2 vs 4 give identical output and state
// round trips work with threads.
std::vector<Example> Docs() {
  std::vector<Example> docs;
  uint32_t s = 12345;
  for (int d = 0; d < 300; ++d) {
    Tokens t(50 + (d * 37) % 400);
    for (auto& x : t) {
      s = s * 1664525u + 1013904223u;
      x = 3 + static_cast<int32_t>((s >> 8) % 990);
    }
    docs.push_back(Example{{"targets", std::move(t)}});
  }
  return docs;
}

OutputFeatures Features() {
  auto v = std::make_shared<::t5xx::testing::FakeVocabulary>(1000, 100);
  return {{"inputs", {v, true, true}}, {"targets", {v, true, true}}};
}

TEST(SpanCorruptionThreadsTest, IdenticalForOneAndTwoThreads) {
  const FeatureLengths lengths{{"inputs", 64}, {"targets", 32}};
  const auto docs = Docs();
  auto make = [&](int threads) {
    return SpanCorruption(FromVector(docs), lengths, Features(), 7, 3.0, 0.15,
                          threads);
  };
  auto one = make(1);
  const auto want = Collect(*one);
  ASSERT_GT(want.size(), 500u);
  for (int threads : {2, 4}) {
    auto ds = make(threads);
    EXPECT_EQ(Collect(*ds), want) << threads << " threads";
  }
  // The default (no num_threads argument) is the 1-thread path.
  auto dflt = SpanCorruption(FromVector(docs), lengths, Features(), 7);
  EXPECT_EQ(Collect(*dflt), want);
  for (size_t k : {0, 1, 100, 129, 300}) {
    CheckRoundTrip([&] { return make(2); }, k);
  }
}

TEST(SpanCorruptionThreadsTest, PreprocessorPassesThreads) {
  PreprocessContext ctx;
  ctx.sequence_length = {{"inputs", 64}, {"targets", 32}};
  ctx.output_features = Features();
  ctx.seed = 3;
  auto a = SpanCorruptionPreprocessor(3.0, 0.15, 2)(FromVector(Docs()), ctx);
  auto b = SpanCorruptionPreprocessor()(FromVector(Docs()), ctx);
  EXPECT_EQ(Collect(*a), Collect(*b));
}

}  // namespace
}  // namespace t5xx::seqio
