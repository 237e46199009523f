// Tests for data/cache_tasks/cache_tasks.h (and the work items of cache_work_items.h):
// task selection as seqio's regexes, a written cache read back and its
// info/stats by hand arithmetic, the shard seeds reaching the pre-cache
// steps, byte-identical output for any thread or worker count, resuming
// after a kill, a changed plan refused, and --overwrite.
#include "t5xx/data/cache_tasks/cache_tasks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include "t5xx/data/cache/task_cache.h"
#include "t5xx/data/cache_tasks/cache_seeds.h"
#include "t5xx/data/cache_tasks/cache_work_items.h"
#include "t5xx/data/sources/function_source.h"
#include "t5xx/data/sources/text_line_source.h"
#include "t5xx/data/vocabularies/byte_vocabulary.h"
#include "t5xx/util/files/file_utils.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

namespace fs = std::filesystem;
using t5xx::testing::TempDir;

TEST(SelectCacheTasksTest, SeqiosRegexRules) {
  // Goldens from Python: names = ['a', 'ab', 'b_1', 'glue:cola', 'xa'];
  // inc = re.compile(r'(%s\Z)' % r'\Z|'.join(tasks or ['.*']));
  // exc = re.compile(r'(%s\Z)' % r'\Z|'.join(excluded or []));
  // [t for t in names if inc.match(t) and not exc.match(t)]
  const std::vector<std::string> names = {"a", "ab", "b_1", "glue:cola", "xa"};
  using V = std::vector<std::string>;
  EXPECT_EQ(SelectCacheTasks(names, {"a"}, {}), V({"a"}));
  EXPECT_EQ(SelectCacheTasks(names, {"a.*"}, {"ab"}), V({"a"}));
  EXPECT_EQ(SelectCacheTasks(names, {}, {}), names);
  EXPECT_EQ(SelectCacheTasks(names, {"a|b_1"}, {}), V({"a", "ab", "b_1"}));
  EXPECT_EQ(SelectCacheTasks(names, {"glue:.*", "b"}, {"glue:c.l."}), V{});
  EXPECT_EQ(SelectCacheTasks(names, {}, {"a"}), V({"ab", "b_1", "glue:cola", "xa"}));
  EXPECT_ERROR_CONTAINS(SelectCacheTasks(names, {"a("}, {}), "--tasks: 'a(' is not a valid");
}

class CacheTasksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.Clear();
    // Three source files of lines "<shard>-<line>" of varying length.
    for (int s = 0; s < 3; ++s) {
      std::ofstream f(data_.path + "/src-" + std::to_string(s) + ".txt");
      for (int l = 0; l < 10 + 5 * s; ++l) {
        f << "s" << s << "-" << std::string(l % 7, 'x') << l << "\n";
      }
    }
    AddTask("lines", 4);
  }

  // Task `name`: text lines -> tokenize(targets) -> record the step seed
  // -> append EOS, the placeholder after the first `index` steps.
  void AddTask(const std::string& name, size_t index, bool placeholder = true) {
    auto vocab = std::make_shared<ByteVocabulary>();
    OutputFeatures of{{"targets", {vocab, true, true}}};
    std::vector<Preprocessor> steps = {
        RekeyPreprocessor({{"targets", "text"}}),
        [fail = fail_](DatasetPtr ds, const PreprocessContext& ctx) {
          return Map(std::move(ds), [fail, seed = ctx.seed](Example ex) {
            T5XX_CHECK(!(*fail && GetTokens(ex, "targets").empty() == false &&
                         GetTokens(ex, "targets")[1] == '2' + 3),
                       "injected failure");
            ex["seed"] = Tokens{static_cast<int32_t>(seed & 0x7fffffff)};
            return ex;
          });
        },
        AppendEosPreprocessor()};
    steps.insert(steps.begin() + 1, TokenizePreprocessor(/*copy_pretokenized=*/false));
    auto task = std::make_shared<Task>(
        name,
        std::make_shared<TextLineDataSource>(
            std::map<std::string, std::string>{{"train", data_.path + "/src-*.txt"}}),
        steps, of, 1000, nullptr, std::vector<MetricFn>{}, std::vector<std::string>{},
        placeholder ? std::optional<CacheStep>(CacheStep{index, false}) : std::nullopt);
    registry_.Add(task);
  }

  CacheTasksOptions Options(const std::string& out) const {
    CacheTasksOptions o;
    o.output_cache_dir = out;
    o.min_shards = 4;
    o.poll_interval_s = 0.01;
    return o;
  }

  // Every file of a finished cache, name -> bytes.
  static std::map<std::string, std::string> Files(const std::string& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_regular_file()) {
        out[fs::relative(e.path(), dir).string()] = ReadFileToString(e.path().string());
      }
    }
    return out;
  }

  TaskRegistry registry_;
  TempDir data_;
  std::shared_ptr<bool> fail_ = std::make_shared<bool>(false);
};

TEST_F(CacheTasksTest, WritesSeqiosLayoutReadBackWithHandCountedStats) {
  TempDir out;
  const CacheTasksReport report = CacheTasks(Options(out.path), registry_);
  ASSERT_EQ(report.splits.size(), 1u);
  const std::string dir = out.path + "/lines";
  // N = 3 files, min_shards 4: M = max(3, 4) = 4.
  EXPECT_EQ(report.splits[0].num_shards, 4);
  EXPECT_TRUE(FileExists(dir + "/COMPLETED"));
  EXPECT_FALSE(FileExists(CacheWorkRoot(dir)));
  for (int j = 0; j < 4; ++j) EXPECT_TRUE(FileExists(CachedShardPath(dir, "train", j, 4)));
  // 10 + 15 + 20 = 45 lines; a line "s<s>-" + (l % 7) x's + str(l) has
  // 3 + l % 7 + digits(l) bytes, each a token (EOS excluded from the count).
  int64_t tokens = 0, longest = 0;
  std::multiset<std::string> want;
  for (int s = 0; s < 3; ++s) {
    for (int l = 0; l < 10 + 5 * s; ++l) {
      const std::string line = "s" + std::to_string(s) + "-" + std::string(l % 7, 'x') +
                               std::to_string(l);
      tokens += static_cast<int64_t>(line.size());
      longest = std::max<int64_t>(longest, line.size());
      want.insert(line);
    }
  }
  EXPECT_EQ(longest, 3 + 6 + 2);  // l = 13 (files 1 and 2): "s1-xxxxxx13"
  const nlohmann::json stats = ReadCachedStats(dir, "train");
  EXPECT_EQ(stats, nlohmann::json({{"examples", 45},
                                   {"targets_tokens", tokens},
                                   {"targets_max_tokens", longest}}));
  EXPECT_EQ(report.splits[0].total_examples, 45);
  EXPECT_EQ(report.splits[0].total_tokens, tokens);
  const CachedSplitInfo info = ReadCachedInfo(dir, "train");
  EXPECT_EQ(info.num_shards, 4);
  EXPECT_EQ(info.features.size(), 2u);  // targets, seed
  EXPECT_TRUE(info.features.at("targets").tokens);
  // Reading back: every line once, tokenized as bytes + 3 with EOS 1.
  std::multiset<std::string> got;
  for (const Example& ex : Collect(*MakeCachedDataSource(dir, "train")->GetDataset("train", false, 0, {}))) {
    const Tokens& t = GetTokens(ex, "targets");
    ASSERT_EQ(t.back(), 1);
    std::string line;
    for (size_t p = 0; p + 1 < t.size(); ++p) line.push_back(static_cast<char>(t[p] - 3));
    got.insert(line);
  }
  EXPECT_EQ(got, want);
}

TEST_F(CacheTasksTest, ShardSeedsReachThePrecacheSteps) {
  TempDir out;
  CacheTasksOptions o = Options(out.path);
  o.base_seed = 7;
  CacheTasks(o, registry_);
  const auto task_seed = CacheTaskSeed("lines", 7);
  for (const Example& ex :
       Collect(*MakeCachedDataSource(out.path + "/lines", "train")->GetDataset("train", false, 0, {}))) {
    const int shard = GetTokens(ex, "targets")[1] - 3 - '0';  // "s<shard>-..."
    // PreprocessPrecache gives step 2 (the seed recorder) HashSeed(seed, 2).
    const uint64_t seed = CacheShardSeed("lines", shard, task_seed).Reduced();
    EXPECT_EQ(GetTokens(ex, "seed"), Tokens{static_cast<int32_t>(HashSeed(seed, 2) & 0x7fffffff)});
  }
}

TEST_F(CacheTasksTest, ShardCountRule) {
  for (auto [min_shards, max_shards, want] :
       std::vector<std::tuple<int, int, int>>{{0, 0, 3}, {64, 0, 64}, {64, 5, 5}, {2, 0, 3}, {0, 2, 2}}) {
    TempDir out;
    CacheTasksOptions o = Options(out.path);
    o.min_shards = min_shards;
    o.max_shards = max_shards;
    EXPECT_EQ(CacheTasks(o, registry_).splits.at(0).num_shards, want)
        << "min " << min_shards << " max " << max_shards;
    EXPECT_EQ(ReadCachedStats(out.path + "/lines", "train")["examples"], 45);
  }
}

TEST_F(CacheTasksTest, SameBytesForAnyThreadAndWorkerCount) {
  TempDir one, threads, workers;
  CacheTasks(Options(one.path), registry_);
  CacheTasksOptions t = Options(threads.path);
  t.num_threads = 2;
  CacheTasks(t, registry_);
  std::vector<std::thread> pool;
  std::vector<std::string> errors(3);
  for (int w = 0; w < 3; ++w) {
    pool.emplace_back([&, w] {
      CacheTasksOptions o = Options(workers.path);
      o.worker_index = w;
      o.num_workers = 3;
      o.wait_timeout_s = 60;
      errors[w] = t5xx::testing::ErrorOf([&] { CacheTasks(o, registry_); });
    });
  }
  for (auto& th : pool) th.join();
  for (const auto& e : errors) EXPECT_EQ(e, "<no t5xx::Error>");
  const auto want = Files(one.path);
  EXPECT_EQ(want.size(), 7u);  // 4 shards, info, stats, COMPLETED
  EXPECT_EQ(Files(threads.path), want);
  EXPECT_EQ(Files(workers.path), want);
}

TEST_F(CacheTasksTest, KilledRunsResumeToTheSameBytes) {
  TempDir clean, resumed, workers;
  CacheTasks(Options(clean.path), registry_);
  // A run that dies in map item 2 (lines "s2-..."): items 0 and 1 stay
  // published; add what a killed process leaves: a half-written item dir
  // and a half-written output shard.
  *fail_ = true;
  EXPECT_ERROR_CONTAINS(CacheTasks(Options(resumed.path), registry_),
                        "source shard 2 ('" + data_.path + "/src-2.txt')");
  *fail_ = false;
  const std::string work = CacheWorkRoot(resumed.path + "/lines") + "/train";
  EXPECT_TRUE(FileExists(work + "/map-00000") && FileExists(work + "/map-00001"));
  EXPECT_FALSE(FileExists(work + "/map-00002"));
  MakeDirs(work + "/map-00002.tmp-deadhost-1-0");
  WriteStringToFileAtomic(work + "/map-00002.tmp-deadhost-1-0/bucket-00000", "garbage");
  WriteStringToFileAtomic(work + "/train.tfrecord-00000-of-00004.tmp-deadhost-1-4", "half");
  const CacheTasksReport report = CacheTasks(Options(resumed.path), registry_);
  EXPECT_EQ(report.splits.at(0).map_items_run, 1);  // only item 2 was redone
  auto want = Files(clean.path);
  EXPECT_EQ(Files(resumed.path), want);

  // Workers that stop part way: worker 0 of 2 times out waiting for worker
  // 1's map items; worker 1 then runs alone (its maps and reduces, no
  // finalize); a single worker finishes what is left.
  CacheTasksOptions o = Options(workers.path);
  o.num_workers = 2;
  o.wait_timeout_s = 0.05;
  EXPECT_ERROR_CONTAINS(CacheTasks(o, registry_), "still missing: map item 1 (worker 1)");
  o.worker_index = 1;
  const CacheTasksReport w1 = CacheTasks(o, registry_);
  EXPECT_EQ(w1.splits.at(0).map_items_run, 1);
  EXPECT_EQ(w1.splits.at(0).reduce_items_run, 2);  // shards 1 and 3
  EXPECT_FALSE(w1.splits.at(0).finalized);
  EXPECT_FALSE(FileExists(workers.path + "/lines/COMPLETED"));
  const CacheTasksReport last = CacheTasks(Options(workers.path), registry_);
  EXPECT_EQ(last.splits.at(0).map_items_run, 0);
  EXPECT_EQ(last.splits.at(0).reduce_items_run, 2);  // shards 0 and 2
  EXPECT_TRUE(last.splits.at(0).finalized);
  EXPECT_EQ(Files(workers.path), want);
}

TEST_F(CacheTasksTest, AnotherPlanIsRefusedUnlessOverwrite) {
  TempDir out, clean;
  *fail_ = true;
  EXPECT_ERROR_CONTAINS(CacheTasks(Options(out.path), registry_), "injected failure");
  *fail_ = false;
  CacheTasksOptions o = Options(out.path);
  o.min_shards = 5;
  EXPECT_ERROR_CONTAINS(CacheTasks(o, registry_), "re-run with --overwrite=true");
  EXPECT_ERROR_CONTAINS(CacheTasks(o, registry_), "it differs in num_shards");
  o.base_seed = 3;
  EXPECT_ERROR_CONTAINS(CacheTasks(o, registry_), "num_shards, shard_seeds, shuffle_seed, task_seed");
  o.overwrite = true;
  CacheTasks(o, registry_);
  CacheTasksOptions c = Options(clean.path);
  c.min_shards = 5;
  c.base_seed = 3;
  CacheTasks(c, registry_);
  EXPECT_EQ(Files(out.path), Files(clean.path));
}

TEST_F(CacheTasksTest, CompletedCachesAreSkippedOrOverwritten) {
  TempDir out;
  CacheTasks(Options(out.path), registry_);
  const CacheTasksReport again = CacheTasks(Options(out.path), registry_);
  EXPECT_TRUE(again.splits.empty());
  ASSERT_EQ(again.skipped.size(), 1u);
  EXPECT_NE(again.skipped[0].find("lines: it is cached in '" + out.path + "/lines'"),
            std::string::npos);
  // The source changes; --overwrite rebuilds from it.
  std::ofstream(data_.path + "/src-0.txt", std::ios::app) << "s0-new\n";
  CacheTasksOptions o = Options(out.path);
  o.overwrite = true;
  const CacheTasksReport rebuilt = CacheTasks(o, registry_);
  EXPECT_TRUE(rebuilt.splits.at(0).finalized);
  EXPECT_EQ(ReadCachedStats(out.path + "/lines", "train")["examples"], 46);
}

TEST_F(CacheTasksTest, SkipsTasksWithoutPlaceholderAndChecksOptions) {
  AddTask("no_placeholder", 0, /*placeholder=*/false);
  TempDir out;
  CacheTasksOptions o = Options(out.path);
  o.tasks = {"no_.*"};
  const CacheTasksReport report = CacheTasks(o, registry_);
  EXPECT_TRUE(report.splits.empty());
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_NE(report.skipped[0].find("does not support caching"), std::string::npos);
  o.worker_index = 3;
  o.num_workers = 3;
  EXPECT_ERROR_CONTAINS(CacheTasks(o, registry_), "--worker_index must be in [0, --num_workers = 3)");
  EXPECT_ERROR_CONTAINS(CacheTasks(CacheTasksOptions{}, registry_), "--output_cache_dir is required");
  // Selecting nothing is refused (seqio_cache_tasks logs it and exits 0),
  // naming the registered tasks and nothing written.
  TempDir none;
  o = Options(none.path);
  o.tasks = {"ctask"};
  EXPECT_ERROR_CONTAINS(CacheTasks(o, registry_),
                        "--tasks=ctask selects no registered task; registered: lines, no_placeholder. A "
                        "task defined in gin is registered by the --gin_file that defines it");
  o.tasks = {"no_.*"};
  o.excluded_tasks = {"no_p.*"};
  EXPECT_ERROR_CONTAINS(CacheTasks(o, registry_),
                        "--tasks=no_.* selects no registered task not excluded by "
                        "--excluded_tasks");
  EXPECT_TRUE(std::filesystem::is_empty(none.path));
}

TEST_F(CacheTasksTest, ExamplesWithOtherFeaturesAreRefused) {
  auto vocab = std::make_shared<ByteVocabulary>();
  auto source = std::make_shared<FunctionDataSource>(
      [](const std::string&, bool, uint64_t) {
        return FromVector({{{"targets", Tokens{4}}}, {{"targets", Tokens{5}}, {"x", std::string("y")}}});
      },
      std::vector<std::string>{"train"});
  registry_.Add(std::make_shared<Task>("mixed", source, std::vector<Preprocessor>{},
                                       OutputFeatures{{"targets", {vocab, true, true}}}, 1000,
                                       nullptr, std::vector<MetricFn>{}, std::vector<std::string>{},
                                       CacheStep{0, false}));
  TempDir out;
  CacheTasksOptions o = Options(out.path);
  o.tasks = {"mixed"};
  EXPECT_ERROR_CONTAINS(CacheTasks(o, registry_),
                        "cache_tasks: task 'mixed', split 'train', source shard 0 ('train'): "
                        "example 1 has the features");
}

}  // namespace
}  // namespace t5xx::seqio
