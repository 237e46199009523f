// Tests for FunctionDataSource (seqio.FunctionDataSource semantics).
#include "t5xx/data/sources/function_source.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

struct Call {
  std::string split;
  bool shuffle;
  uint64_t seed;
};

TEST(FunctionDataSourceTest, PassesSplitShuffleAndSeed) {
  std::vector<Call> calls;
  FunctionDataSource src(
      [&calls](const std::string& split, bool shuffle, uint64_t seed) {
        calls.push_back({split, shuffle, seed});
        return FromVector({{{"text", split}}});
      },
      {"train", "test"});
  EXPECT_EQ(src.splits(), (std::vector<std::string>{"train", "test"}));
  auto ds = src.GetDataset("test", true, 42, ShardInfo{});
  auto all = Collect(*ds);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(std::get<std::string>(all[0].at("text")), "test");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].split, "test");
  EXPECT_TRUE(calls[0].shuffle);
  EXPECT_EQ(calls[0].seed, 42u);
  EXPECT_EQ(src.ListShards("train"), (std::vector<std::string>{"train"}));
}

TEST(FunctionDataSourceTest, DefaultSplitsAreTrainAndValidation) {
  FunctionDataSource src([](const std::string&, bool, uint64_t) {
    return FromVector({});
  });
  EXPECT_EQ(src.splits(), (std::vector<std::string>{"train", "validation"}));
}

TEST(FunctionDataSourceTest, UnknownSplitListsSplits) {
  FunctionDataSource src(
      [](const std::string&, bool, uint64_t) { return FromVector({}); },
      {"train", "validation"});
  EXPECT_ERROR_CONTAINS(src.GetDataset("test", false, 0, ShardInfo{}),
                        "unknown split 'test'; known splits: 'train', 'validation'");
  EXPECT_ERROR_CONTAINS(src.ListShards("test"), "unknown split 'test'");
}

TEST(FunctionDataSourceTest, SingleShardOnly) {
  int calls = 0;
  FunctionDataSource src([&calls](const std::string&, bool, uint64_t) {
    ++calls;
    return FromVector({});
  });
  EXPECT_ERROR_CONTAINS(src.GetDataset("train", false, 0, ShardInfo{1, 2}),
                        "FunctionDataSource has a single shard");
  EXPECT_ERROR_CONTAINS(src.GetDataset("train", false, 0, ShardInfo{0, 2}),
                        "shard 0 of 2");
  EXPECT_ERROR_CONTAINS(src.GetDataset("train", false, 0, ShardInfo{0, 0}),
                        "invalid ShardInfo");
  EXPECT_EQ(calls, 0);
  EXPECT_NE(src.GetDataset("train", false, 0, ShardInfo{0, 1}), nullptr);
  EXPECT_EQ(calls, 1);
}

TEST(FunctionDataSourceTest, ConstructionErrors) {
  EXPECT_ERROR_CONTAINS(FunctionDataSource(DatasetFn{}), "dataset_fn is empty");
  auto fn = [](const std::string&, bool, uint64_t) { return FromVector({}); };
  EXPECT_ERROR_CONTAINS(FunctionDataSource(fn, {}), "splits is empty");
  EXPECT_ERROR_CONTAINS(FunctionDataSource(fn, {"a", "a"}), "listed twice");
  FunctionDataSource null_src(
      [](const std::string&, bool, uint64_t) { return DatasetPtr(); });
  EXPECT_ERROR_CONTAINS(null_src.GetDataset("train", false, 0, ShardInfo{}),
                        "returned no dataset");
}

}  // namespace
}  // namespace t5xx::seqio
