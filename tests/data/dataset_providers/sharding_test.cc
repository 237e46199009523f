// seqio's ShardInfo as a Task applies it (Task.get_dataset): shard i of n
// reads files i, i+n, ... when the source has at least n files, else every
// n-th example of the whole source; either way the n shards are disjoint and
// together are the data. Also the Shard op (tf.data shard) and its saved
// position. Expected values follow from the files each test writes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/sources/function_source.h"
#include "t5xx/data/sources/text_line_source.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

std::vector<std::string> Texts(Dataset& ds) {
  std::vector<std::string> out;
  while (auto ex = ds.Next()) out.push_back(std::get<std::string>(ex->at("text")));
  return out;
}

class ShardingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/t5xx_shard_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  // `files` text files f<i>.txt of `lines` lines "f<i>-<j>".
  void WriteFiles(int files, int lines) {
    for (int i = 0; i < files; ++i) {
      std::ofstream out(dir_ + "/f" + std::to_string(i) + ".txt");
      for (int j = 0; j < lines; ++j) out << "f" << i << "-" << j << "\n";
    }
  }
  Task TextTask() const {
    return Task("lines", std::make_shared<TextLineDataSource>(
                             std::map<std::string, std::string>{{"train", dir_ + "/f*.txt"}}),
                {}, OutputFeatures{}, /*shuffle_buffer_size=*/4);
  }
  // Every shard's texts, read for one epoch.
  static std::vector<std::vector<std::string>> Shards(const Task& task, int n, bool shuffle) {
    std::vector<std::vector<std::string>> out;
    for (int i = 0; i < n; ++i) {
      auto ds = task.GetDataset({}, "train", shuffle, /*seed=*/7, ShardInfo{i, n}, 1);
      out.push_back(Texts(*ds));
    }
    return out;
  }
  // The shards are disjoint and their union is `all` (as multisets: no
  // example twice).
  static void ExpectPartition(const std::vector<std::vector<std::string>>& shards,
                              std::vector<std::string> all) {
    std::multiset<std::string> seen;
    for (const auto& s : shards) seen.insert(s.begin(), s.end());
    std::multiset<std::string> want(all.begin(), all.end());
    EXPECT_EQ(seen, want);
    for (const std::string& t : want) EXPECT_EQ(seen.count(t), 1u) << t;
  }
  std::string dir_;
};

TEST_F(ShardingTest, FileLevelWhenThereAreEnoughFiles) {
  WriteFiles(4, 3);
  const Task task = TextTask();
  const std::vector<std::string> all = Texts(*task.GetDataset({}, "train", false, 0, {}, 1));
  ASSERT_EQ(all.size(), 12u);
  // 4 files >= 2 shards: shard 0 reads files 0 and 2 whole, shard 1 files 1
  // and 3 (tf.data's files.shard(2, i) on the sorted names).
  const auto shards = Shards(task, 2, /*shuffle=*/false);
  EXPECT_EQ(shards[0], (std::vector<std::string>{"f0-0", "f0-1", "f0-2", "f2-0", "f2-1", "f2-2"}));
  EXPECT_EQ(shards[1], (std::vector<std::string>{"f1-0", "f1-1", "f1-2", "f3-0", "f3-1", "f3-2"}));
  ExpectPartition(shards, all);
  // 4 shards of 4 files: one file each.
  const auto four = Shards(task, 4, false);
  EXPECT_EQ(four[3], (std::vector<std::string>{"f3-0", "f3-1", "f3-2"}));
  ExpectPartition(four, all);
  // Shuffled (files and examples, with the same seed on every shard): still
  // a partition of the data, each shard still whole files.
  const auto shuffled = Shards(task, 2, true);
  ExpectPartition(shuffled, all);
  for (const std::string& t : shuffled[0]) EXPECT_TRUE(t[1] == '0' || t[1] == '2') << t;
}

TEST_F(ShardingTest, ExampleLevelWhenThereAreFewerFilesThanShards) {
  WriteFiles(2, 5);
  const Task task = TextTask();
  const std::vector<std::string> all = Texts(*task.GetDataset({}, "train", false, 0, {}, 1));
  ASSERT_EQ(all.size(), 10u);
  // 2 files < 3 shards: every file is read and shard i keeps the examples
  // at positions p % 3 == i of the whole stream (seqio's ds.shard).
  const auto shards = Shards(task, 3, false);
  EXPECT_EQ(shards[0], (std::vector<std::string>{"f0-0", "f0-3", "f1-1", "f1-4"}));
  EXPECT_EQ(shards[1], (std::vector<std::string>{"f0-1", "f0-4", "f1-2"}));
  EXPECT_EQ(shards[2], (std::vector<std::string>{"f0-2", "f1-0", "f1-3"}));
  ExpectPartition(shards, all);
  // Shuffled: the whole source is shuffled with the same seed everywhere,
  // so the positions still partition it.
  ExpectPartition(Shards(task, 3, true), all);
}

TEST_F(ShardingTest, ASourceOfOneShardIsShardedByExamples) {
  // seqio's FunctionDataSource has one shard per split and refuses
  // num_shards > 1 itself; its Task shards the examples instead.
  auto source = std::make_shared<FunctionDataSource>(
      [](const std::string&, bool, uint64_t) {
        std::vector<Example> v;
        for (int i = 0; i < 7; ++i) v.push_back({{"text", "e" + std::to_string(i)}});
        return FromVector(std::move(v));
      });
  EXPECT_THROW(source->GetDataset("train", false, 0, ShardInfo{1, 2}), Error);
  const Task task("fn", source, {}, OutputFeatures{}, 4);
  const auto shards = Shards(task, 2, false);
  EXPECT_EQ(shards[0], (std::vector<std::string>{"e0", "e2", "e4", "e6"}));
  EXPECT_EQ(shards[1], (std::vector<std::string>{"e1", "e3", "e5"}));
  ExpectPartition(shards, {"e0", "e1", "e2", "e3", "e4", "e5", "e6"});
  // Every epoch is sharded the same way.
  auto two_epochs = task.GetDataset({}, "train", false, 0, ShardInfo{1, 2}, 2);
  EXPECT_EQ(Texts(*two_epochs),
            (std::vector<std::string>{"e1", "e3", "e5", "e1", "e3", "e5"}));
}

TEST(ShardOpTest, KeepsEveryNthAndResumesFromItsSavedPosition) {
  auto make = [] {
    std::vector<Example> v;
    for (int i = 0; i < 10; ++i) v.push_back({{"text", std::to_string(i)}});
    return Shard(FromVector(std::move(v)), 3, 1);
  };
  auto ds = make();
  EXPECT_EQ(Texts(*ds), (std::vector<std::string>{"1", "4", "7"}));
  auto a = make();
  ASSERT_TRUE(a->Next().has_value());  // "1"
  const auto state = a->SaveState();
  auto b = make();
  b->RestoreState(state);
  EXPECT_EQ(Texts(*b), (std::vector<std::string>{"4", "7"}));
  EXPECT_THROW(Shard(FromVector({}), 2, 2), Error);
  EXPECT_THROW(Shard(FromVector({}), 0, 0), Error);
}

}  // namespace
}  // namespace t5xx::seqio
