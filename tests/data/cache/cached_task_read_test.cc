// Tests for reading a Task from its offline cache (Task::GetDataset with
// use_cached, CacheDir, AssertCached, GetCachedStats, CheckCacheUse), the
// placeholder rules (cache_placeholder.h: FindCacheStep,
// WithCachingPermitted), the preprocessor signatures seqio checks
// (PreprocessorRegistry::Signature) and seqio.mixing_rate_num_examples
// (mixing_rates.h).
//
// Two caches are used: one written here by hand (SerializeTFExample +
// WriteTFRecordFile + the JSON files, laid out as seqio's cache_tasks lays
// them out: info/stats.<split>.json, <split>.tfrecord-0000i-of-00002,
// COMPLETED), and tests/testdata/seqio_cache/interop_cached_upper, written
// by seqio 0.0.19's own cache_tasks (tests/interop/make_seqio_cache.py); its
// stats.train.json says "examples": 64, the figure the rates below start
// from.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "t5xx/data/cache/task_cache.h"
#include "t5xx/data/dataset_providers/cache_placeholder.h"
#include "t5xx/data/dataset_providers/mixing_rates.h"
#include "t5xx/data/dataset_providers/mixture.h"
#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/preprocessors/preprocessor_registry.h"
#include "t5xx/data/sources/tf_example.h"
#include "t5xx/data/sources/tfrecord_file.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using ::t5xx::testing::ErrorOf;
using ::t5xx::testing::TempDir;

const std::string kSeqioCacheRoot = std::string(T5XX_SOURCE_DIR) + "/tests/testdata/seqio_cache";

// A source that must not be read (a cached task never touches it).
class UnreadableSource : public DataSource {
 public:
  std::vector<std::string> splits() const override { return {"train", "validation"}; }
  DatasetPtr GetDataset(const std::string&, bool, uint64_t, const ShardInfo&) const override {
    throw Error("the raw source was read");
  }
};

OutputFeatures Features(std::vector<std::string> keys = {"targets"}) {
  auto v = std::make_shared<::t5xx::testing::FakeVocabulary>(1 << 20, 0);
  OutputFeatures of;
  for (const auto& k : keys) of[k] = {v, true, true};
  return of;
}

// Appends 7 to "targets" (a post-cache step).
Preprocessor AppendSeven() {
  return [](DatasetPtr ds, const PreprocessContext&) {
    return Map(std::move(ds), [](Example ex) {
      std::get<Tokens>(ex.at("targets")).push_back(7);
      return ex;
    });
  };
}

void WriteJson(const std::string& path, const nlohmann::json& j) {
  std::ofstream(path) << j.dump();
}

// <root>/<task>/: split "train" of targets {10+i, 20+i} for i < 4, two shards
// (i even in shard 0, odd in shard 1), then COMPLETED.
void WriteHandCache(const std::string& root, const std::string& task) {
  const std::string dir = root + "/" + task;
  std::filesystem::create_directories(dir);
  std::vector<std::string> shard[2];
  for (int i = 0; i < 4; ++i)
    shard[i % 2].push_back(SerializeTFExample({{"targets", Tokens{10 + i, 20 + i}}}));
  WriteTFRecordFile(dir + "/train.tfrecord-00000-of-00002", shard[0]);
  WriteTFRecordFile(dir + "/train.tfrecord-00001-of-00002", shard[1]);
  WriteJson(dir + "/info.train.json",
            {{"features", {{"targets", {{"dtype", "int32"}, {"shape", {nullptr}}}}}},
             {"num_shards", 2},
             {"seqio_version", "0.0.19"}});
  WriteJson(dir + "/stats.train.json",
            {{"examples", 4}, {"targets_tokens", 8}, {"targets_max_tokens", 2}});
  std::ofstream(dir + "/COMPLETED");
}

TEST(CachedTaskRead, ReadsTheCacheAndRunsOnlyPostCacheSteps) {
  TempDir tmp;
  WriteHandCache(tmp.path, "hand");
  SetGlobalCacheDirs({tmp.path + "/empty", tmp.path});
  Task t("hand", std::make_shared<UnreadableSource>(), {AppendSeven(), AppendSeven()},
         Features(), 1000, nullptr, {}, {}, CacheStep{1, false});
  EXPECT_EQ(t.CacheDir(), tmp.path + "/hand");
  EXPECT_TRUE(t.CheckCacheUse("train", true));
  std::vector<Tokens> got;
  for (const Example& ex : Collect(*t.GetDataset({}, "train", false, 0, {}, 1, true, true)))
    got.push_back(std::get<Tokens>(ex.at("targets")));
  // seqio reads the two files interleaved by blocks of 16 records: all of
  // shard 0 (i = 0, 2), then shard 1 (i = 1, 3); one post-cache 7 each.
  EXPECT_EQ(got, (std::vector<Tokens>{{10, 20, 7}, {12, 22, 7}, {11, 21, 7}, {13, 23, 7}}));
  // Two epochs: the cache twice; sharding by file.
  EXPECT_EQ(Collect(*t.GetDataset({}, "train", false, 0, {}, 2, true, true)).size(), 8u);
  const auto shard1 = Collect(*t.GetDataset({}, "train", false, 0, {1, 2}, 1, true, true));
  ASSERT_EQ(shard1.size(), 2u);
  EXPECT_EQ(std::get<Tokens>(shard1[0].at("targets")), (Tokens{11, 21, 7}));
  EXPECT_EQ(t.GetCachedStats("train")["examples"], 4);
  SetGlobalCacheDirs({});
}

TEST(CachedTaskRead, MissingCacheNamesTaskDirectoriesAndCommand) {
  Task t("glue:cola", std::make_shared<UnreadableSource>(), {AppendSeven()}, Features(), 1000,
         nullptr, {}, {}, CacheStep{0, false});
  SetGlobalCacheDirs({});
  EXPECT_FALSE(t.CacheDir().has_value());
  EXPECT_EQ(ErrorOf([&] { t.GetDataset({}, "train", false, 0, {}, 1, true, true); }),
            "task 'glue:cola' is read from its cache (use_cached=True) but has none: no cache "
            "directories were given; build it with `t5xx cache_tasks --tasks=glue:cola "
            "--output_cache_dir=<dir>` (with this run's --gin_file flags when the task is "
            "defined in gin) and pass that directory with "
            "--seqio_additional_cache_dirs=<dir> (or --cache_dir=<dir>)");
  SetGlobalCacheDirs({"/nonexistent/a", "/nonexistent/b"});
  // seqio's get_task_dir_from_name: "glue:cola" -> glue/cola.
  EXPECT_ERROR_CONTAINS(t.CheckCacheUse("train", true),
                        "no COMPLETED cache in /nonexistent/a/glue/cola, "
                        "/nonexistent/b/glue/cola; build it with `t5xx cache_tasks "
                        "--tasks=glue:cola --output_cache_dir=<dir>`");
  // Without use_cached nothing is looked up.
  EXPECT_FALSE(t.CheckCacheUse("train", false));
  // A directory without COMPLETED is not a cache.
  TempDir tmp;
  WriteHandCache(tmp.path, "hand");
  std::filesystem::remove(tmp.path + "/hand/COMPLETED");
  SetGlobalCacheDirs({tmp.path});
  Task hand("hand", std::make_shared<UnreadableSource>(), {}, Features(), 1000, nullptr, {}, {},
            CacheStep{0, false});
  EXPECT_ERROR_CONTAINS(hand.AssertCached(), "no COMPLETED cache in " + tmp.path + "/hand");
  SetGlobalCacheDirs({});
}

TEST(CachedTaskRead, CacheWithoutTheSplitNamesTheTask) {
  TempDir tmp;
  WriteHandCache(tmp.path, "hand");
  SetGlobalCacheDirs({tmp.path});
  Task t("hand", std::make_shared<UnreadableSource>(), {}, Features(), 1000, nullptr, {}, {},
         CacheStep{0, false});
  const std::string msg = ErrorOf([&] { t.CheckCacheUse("validation", true); });
  EXPECT_EQ(msg.rfind("task 'hand', cache " + tmp.path + "/hand: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("info.validation.json"), std::string::npos) << msg;
  SetGlobalCacheDirs({});
}

TEST(CachedTaskRead, SeqioWrittenCacheAndMixingRateNumExamples) {
  SetGlobalCacheDirs({kSeqioCacheRoot});
  auto make = [](const std::string& name) {
    return std::make_shared<Task>(name, std::make_shared<UnreadableSource>(),
                                  std::vector<Preprocessor>{}, Features({"inputs", "targets"}),
                                  1000, nullptr, std::vector<MetricFn>{},
                                  std::vector<std::string>{}, CacheStep{0, false});
  };
  TaskRegistry tasks;
  tasks.Add(make("interop_cached_upper"));
  tasks.Add(make("uncached"));
  const Task& cached = *tasks.Get("interop_cached_upper");
  EXPECT_EQ(Collect(*cached.GetDataset({}, "train", false, 0, {}, 1, true, true)).size(), 64u);
  // Hand arithmetic from 64 examples.
  EXPECT_DOUBLE_EQ(MixingRateNumExamples(cached), 64.0);
  MixingRateNumExamplesOptions o;
  o.scale = 0.5;
  EXPECT_DOUBLE_EQ(MixingRateNumExamples(cached, o), 32.0);
  o.maximum = 20;  // min(64 * 0.5, 20)
  EXPECT_DOUBLE_EQ(MixingRateNumExamples(cached, o), 20.0);
  o.temperature = 2.0;  // 20 ** (1 / 2)
  EXPECT_DOUBLE_EQ(MixingRateNumExamples(cached, o), std::sqrt(20.0));
  MixingRateNumExamplesOptions zero_max;  // seqio's `if maximum:` skips 0
  zero_max.maximum = 0;
  EXPECT_DOUBLE_EQ(MixingRateNumExamples(cached, zero_max), 64.0);
  MixingRateNumExamplesOptions validation;
  validation.split = "validation";
  EXPECT_DOUBLE_EQ(MixingRateNumExamples(cached, validation),
                   ReadCachedStats(*cached.CacheDir(), "validation")["examples"].get<double>());
  // As a Mixture rate: 64 against a fixed 16 -> probability 0.8.
  MixtureRegistry mixtures;
  Mixture m("mix", {{"interop_cached_upper", MixingRateNumExamplesRate({})}, {"uncached", 16.0}},
            std::nullopt, tasks, mixtures);
  EXPECT_DOUBLE_EQ(m.GetRate(cached), 64.0);
  EXPECT_DOUBLE_EQ(m.TotalRate(), 80.0);
  // A default_rate function applies to every entry; the uncached one fails.
  Mixture all("all", {"interop_cached_upper", "uncached"}, MixingRateNumExamplesRate({}), tasks,
              mixtures);
  const std::string msg = ErrorOf([&] { all.TotalRate(); });
  EXPECT_NE(msg.find("seqio.mixing_rate_num_examples for task 'uncached': the task has no "
                     "cache, and its source does not know its number of input examples"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("no COMPLETED cache in " + kSeqioCacheRoot + "/uncached"),
            std::string::npos)
      << msg;
  MixingRateNumExamplesOptions strict;
  strict.fallback_to_num_input_examples = false;
  EXPECT_ERROR_CONTAINS(MixingRateNumExamples(*tasks.Get("uncached"), strict),
                        "seqio.mixing_rate_num_examples for task 'uncached': task 'uncached' "
                        "has no cache: no COMPLETED cache in " + kSeqioCacheRoot + "/uncached");
  MixingRateNumExamplesOptions bad;
  bad.temperature = 0;
  EXPECT_ERROR_CONTAINS(MixingRateNumExamplesRate(bad), "temperature must be a finite number > 0");
  SetGlobalCacheDirs({});
}

TEST(CachePlaceholderRules, FindCacheStep) {
  const PreprocessorSignature plain{}, length{true, false}, seeded{false, true};
  std::ostringstream warnings;
  EXPECT_FALSE(FindCacheStep("t", {{"a", false, false, length}}, warnings).has_value());
  auto step = FindCacheStep(
      "t", {{"rekey", false, false, plain}, {"ph", true, true, {}}, {"span", false, false, length}},
      warnings);
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->index, 1u);
  EXPECT_TRUE(step->required);
  EXPECT_TRUE(warnings.str().empty());
  EXPECT_EQ(ErrorOf([&] {
              FindCacheStep("t", {{"p1, bound at t.gin:3:5", true, false, {}},
                                  {"tok", false, false, plain},
                                  {"p2, bound at t.gin:5:5", true, false, {}}},
                            warnings);
            }),
            "task 't': seqio.CacheDatasetPlaceholder may appear at most once in the "
            "preprocessors, found entry 0 (p1, bound at t.gin:3:5) and entry 2 (p2, bound at "
            "t.gin:5:5); keep one");
  EXPECT_EQ(ErrorOf([&] {
              FindCacheStep("t", {{"tok", false, false, plain},
                                  {"t5.data.preprocessors.span_corruption, bound at t.gin:4:7",
                                   false, false, length},
                                  {"ph", true, false, {}}},
                            warnings);
            }),
            "task 't': preprocessors entry 1 (t5.data.preprocessors.span_corruption, bound at "
            "t.gin:4:7) takes sequence_length but comes before seqio.CacheDatasetPlaceholder "
            "(entry 2 (ph)); sequence lengths are known only when the task is read, after its "
            "cache was written: move the step after the placeholder");
  // A seed before the placeholder: a warning, as seqio logs; still cached.
  step = FindCacheStep("t", {{"noisy", false, false, seeded}, {"ph", true, false, {}}}, warnings);
  EXPECT_EQ(step->index, 1u);
  EXPECT_EQ(warnings.str(),
            "t5xx: warning: task 't': preprocessors entry 0 (noisy) takes a seed but comes "
            "before seqio.CacheDatasetPlaceholder; the cache holds one draw of it, so every "
            "epoch read from the cache repeats the same samples\n");
}

TEST(CachePlaceholderRules, RegisteredSignaturesFollowThePythonFunctions) {
  // From the Python signatures: seqio 0.0.19 preprocessors.py and t5's
  // t5/data/preprocessors.py (inspect.signature parameter names).
  PreprocessorRegistry r;
  RegisterSeqioPreprocessors(r);
  for (const char* name :
       {"seqio.preprocessors.append_eos_after_trim", "seqio.preprocessors.truncate_inputs_left",
        "t5.data.preprocessors.span_corruption", "t5.data.preprocessors.prefix_lm",
        "t5.data.preprocessors.full_lm", "t5.data.preprocessors.iid_denoising",
        "t5.data.preprocessors.select_random_chunk"})
    EXPECT_TRUE(r.Signature(name).takes_sequence_length) << name;
  for (const char* name :
       {"seqio.preprocessors.rekey", "seqio.preprocessors.tokenize",
        "seqio.preprocessors.tokenize_and_append_eos", "seqio.preprocessors.append_eos",
        "t5.data.preprocessors.reduce_concat_tokens", "t5.data.preprocessors.split_tokens",
        "t5.data.preprocessors.translate", "t5.data.preprocessors.summarize",
        "t5.data.preprocessors.glue"})
    EXPECT_FALSE(r.Signature(name).takes_sequence_length) << name;
  for (const std::string& name : r.Names()) EXPECT_FALSE(r.Signature(name).takes_seed) << name;
  EXPECT_THROW(r.Signature("seqio.preprocessors.nope"), Error);
}

TEST(CachePlaceholderRules, WithCachingPermitted) {
  auto src = std::make_shared<UnreadableSource>();
  EXPECT_EQ(WithCachingPermitted(src, true), src);  // already permitted: itself
  DataSourcePtr forbidden = WithCachingPermitted(src, false);
  EXPECT_FALSE(forbidden->caching_permitted());
  EXPECT_EQ(forbidden->splits(), src->splits());
  EXPECT_ERROR_CONTAINS(forbidden->GetDataset("train", false, 0, {}), "the raw source was read");
  EXPECT_TRUE(WithCachingPermitted(forbidden, true)->caching_permitted());
}

}  // namespace
}  // namespace t5xx::seqio
