// Tests for the cached variant of the demo pretraining task,
// c4_demo_span_corruption_cached (demo_tasks.h): `cache_tasks` stores its
// tokenized documents (the steps before the placeholder: rekey, tokenize),
// and use_cached=True reads them back and runs only span_corruption and
// append_eos_after_trim, as t5's c4_v220_span_corruption does with seqio's
// cache. The corpus is a small one built here from a hand-written fortunes
// file (as freedict_task_test.cc builds it).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "small_corpus.h"
#include "t5xx/data/cache/task_cache.h"
#include "t5xx/data/cache_tasks/cache_tasks.h"
#include "t5xx/data/sources/tf_example.h"
#include "t5xx/demo/demo_tasks.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using t5xx::testing::ErrorOf;
using t5xx::testing::TempDir;

class CachedDemoTaskTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir();
    std::vector<std::string> texts;
    for (int i = 0; i < 60; ++i) {
      texts.push_back("Saying " + std::to_string(i) + ": many hands make light work, and " +
                      (i % 3 ? "still waters run deep." : "the pen is mightier than the sword."));
    }
    demo_testing::BuildSmallCorpus(tmp_->path, tmp_->path + "/data", texts);
  }
  static void TearDownTestSuite() { delete tmp_; }
  void TearDown() override { SetGlobalCacheDirs({}); }

  static std::string DataDir() { return tmp_->path + "/data"; }
  static TempDir* tmp_;
};
TempDir* CachedDemoTaskTest::tmp_ = nullptr;

// Examples as sorted serialized tf.Examples, to compare multisets.
std::vector<std::string> Sorted(Dataset& ds) {
  std::vector<std::string> out;
  while (auto ex = ds.Next()) out.push_back(SerializeTFExample(*ex));
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(CachedDemoTaskTest, CacheHoldsThePrecacheExamplesAndTrainsFromThem) {
  TaskRegistry registry;
  ASSERT_EQ(RegisterDemoTasks(DataDir(), registry), std::nullopt);
  const TaskPtr task = registry.Get(kDemoCachedTaskName);
  ASSERT_TRUE(task->supports_caching());
  ASSERT_FALSE(task->requires_caching());
  EXPECT_EQ(task->cache_step()->index, 2u);  // after rekey and tokenize
  EXPECT_FALSE(registry.Get(kDemoTaskName)->supports_caching());

  TempDir cache;
  CacheTasksOptions options;
  options.tasks = {kDemoCachedTaskName};
  options.output_cache_dir = cache.path;
  options.min_shards = 3;
  const CacheTasksReport report = CacheTasks(options, registry);
  ASSERT_EQ(report.splits.size(), 2u);  // train and validation

  const std::string dir = cache.path + "/" + kDemoCachedTaskName;
  for (const std::string split : {"train", "validation"}) {
    // The cache holds exactly the pre-cache steps' output of every source
    // example (rekey and tokenize draw nothing, so the seeds do not matter),
    // in another order (the cache's global shuffle).
    DatasetPtr cached = MakeCachedDataSource(dir, split)->GetDataset(split, false, 0, {});
    DatasetPtr precache = task->PreprocessPrecache(
        task->source()->GetDataset(split, false, 0, {}), /*seed=*/0);
    const std::vector<std::string> a = Sorted(*cached), b = Sorted(*precache);
    EXPECT_GT(b.size(), 0u) << split;
    EXPECT_EQ(a, b) << split;
    EXPECT_EQ(ReadCachedStats(dir, split).at("examples").get<int64_t>(),
              static_cast<int64_t>(b.size()))
        << split;
    // seqio's rule: max(source shards, min_shards) output shards (the corpus
    // writes 4 train files and 1 validation file).
    const int64_t source_shards = static_cast<int64_t>(task->source()->ListShards(split).size());
    EXPECT_EQ(source_shards, split == std::string("train") ? 4 : 1);
    EXPECT_EQ(ReadCachedInfo(dir, split).num_shards, std::max<int64_t>(source_shards, 3)) << split;
  }

  // use_cached without the cache directory: one error naming the task and
  // the command that builds the cache.
  const std::string msg = ErrorOf([&] {
    task->GetDataset({{"inputs", 64}, {"targets", 16}}, "train", false, 0, {}, 1, true,
                     /*use_cached=*/true);
  });
  EXPECT_NE(msg.find(kDemoCachedTaskName), std::string::npos) << msg;
  EXPECT_NE(msg.find("t5xx cache_tasks"), std::string::npos) << msg;

  // With it: span-corrupted examples from the cache, each feature ending in
  // EOS within its length; as many source documents as the cache holds
  // feed them.
  AddGlobalCacheDirs({cache.path});
  EXPECT_EQ(task->CacheDir(), dir);
  DatasetPtr ds = task->GetDataset({{"inputs", 64}, {"targets", 16}}, "train", false, 0, {}, 1,
                                   true, /*use_cached=*/true);
  const int32_t eos = task->output_features().at("inputs").vocabulary->eos_id();
  int n = 0;
  while (auto ex = ds->Next()) {
    const Tokens& inputs = GetTokens(*ex, "inputs");
    const Tokens& targets = GetTokens(*ex, "targets");
    ASSERT_FALSE(inputs.empty());
    ASSERT_FALSE(targets.empty());
    EXPECT_LE(inputs.size(), 64u);
    EXPECT_LE(targets.size(), 16u);
    EXPECT_EQ(inputs.back(), eos);
    EXPECT_EQ(targets.back(), eos);
    ++n;
  }
  EXPECT_GT(n, 0);
  // The same steps read on the fly give examples of the same kind.
  DatasetPtr fly = task->GetDataset({{"inputs", 64}, {"targets", 16}}, "train", false);
  EXPECT_TRUE(fly->Next().has_value());
}

}  // namespace
}  // namespace t5xx::seqio
