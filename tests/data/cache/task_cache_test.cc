// Tests for data/cache/task_cache.h (where caches live, the reader) and
// data/cache/cache_encoding.h (the records, info and stats). Expected values are
// worked out by hand from seqio's rules (dataset_providers.py
// _CachedDataSource, utils.py, beam_utils.py) or printed by Python's
// json.dumps, as noted beside them.
#include "t5xx/data/cache/task_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "t5xx/data/cache/cache_encoding.h"
#include "t5xx/data/sources/tf_example.h"
#include "t5xx/data/sources/tfrecord_file.h"
#include "t5xx/data/vocabularies/byte_vocabulary.h"
#include "t5xx/data/vocabularies/passthrough_vocabulary.h"
#include "t5xx/util/files/file_utils.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using t5xx::testing::TempDir;

Example Ex(const std::string& text, Tokens ids) { return {{"text", text}, {"ids", ids}}; }

// Writes a cache of `shards` (each a list of examples) for `split` in dir,
// with info features from the first example.
void WriteCache(const std::string& dir, const std::string& split,
                const std::vector<std::vector<Example>>& shards,
                const OutputFeatures& output_features = {}) {
  MakeDirs(dir);
  CacheStats stats;
  nlohmann::json features = nlohmann::json::object();
  for (size_t s = 0; s < shards.size(); ++s) {
    std::vector<std::string> records;
    for (const Example& ex : shards[s]) {
      if (features.empty()) features = CacheFeaturesOf(ex);
      records.push_back(EncodeCacheExample(ex));
      stats.Add(ex, output_features);
    }
    WriteTFRecordFile(CachedShardPath(dir, split, s, shards.size()), records);
  }
  WriteStringToFileAtomic(CachedInfoPath(dir, split),
                          CacheJsonText(CacheInfoJson(features, shards.size())));
  WriteStringToFileAtomic(CachedStatsPath(dir, split), CacheJsonText(stats.ToJson()));
}

std::vector<Example> ReadAll(const std::string& dir, const std::string& split,
                             ShardInfo shard = {}) {
  DatasetPtr ds = MakeCachedDataSource(dir, split)->GetDataset(split, false, 0, shard);
  return Collect(*ds);
}

TEST(TaskCacheTest, TaskDirFromNameAndPaths) {
  // posixpath.join(*name.split(":")).
  EXPECT_EQ(TaskDirFromName("glue:cola_v2"), "glue/cola_v2");
  EXPECT_EQ(TaskDirFromName("a:b:c"), "a/b/c");
  EXPECT_EQ(TaskDirFromName("plain_task"), "plain_task");
  EXPECT_EQ(CachedInfoPath("/c/t", "train"), "/c/t/info.train.json");
  EXPECT_EQ(CachedStatsPath("/c/t", "validation"), "/c/t/stats.validation.json");
  EXPECT_EQ(CachedTfrecordPrefix("/c/t", "train"), "/c/t/train.tfrecord");
  EXPECT_EQ(CachedShardPath("/c/t", "train", 3, 64), "/c/t/train.tfrecord-00003-of-00064");
  EXPECT_EQ(CachedShardPath("/c/t", "train", 7, 123456), "/c/t/train.tfrecord-00007-of-123456");
}

TEST(TaskCacheTest, GlobalCacheDirsAndFindTaskCacheDir) {
  SetGlobalCacheDirs({"/a"});
  AddGlobalCacheDirs({"/b", "/c"});
  EXPECT_EQ(GetGlobalCacheDirs(), (std::vector<std::string>{"/a", "/b", "/c"}));
  SetGlobalCacheDirs({});
  EXPECT_TRUE(GetGlobalCacheDirs().empty());

  TempDir one, two;
  MakeDirs(two.path + "/glue/cola");
  EXPECT_EQ(FindTaskCacheDir("glue:cola", {one.path, two.path}), std::nullopt);
  WriteStringToFileAtomic(two.path + "/glue/cola/COMPLETED", "");
  EXPECT_EQ(FindTaskCacheDir("glue:cola", {one.path, two.path}), two.path + "/glue/cola");
  MakeDirs(one.path + "/glue/cola");
  WriteStringToFileAtomic(one.path + "/glue/cola/COMPLETED", "");
  EXPECT_EQ(FindTaskCacheDir("glue:cola", {one.path, two.path}), one.path + "/glue/cola");
}

TEST(TaskCacheTest, InfoAndStatsTextAreSeqiosWriteJson) {
  // python3 -c "import json; print(json.dumps({'features': {'inputs': {'dtype':
  //   'int32', 'shape': [None]}, 'text': {'dtype': 'string', 'shape': []}},
  //   'num_shards': 3, 'seqio_version': '0.0.19', 't5xx_cache_format': 1},
  //   sort_keys=True, indent=2))"
  const std::string info_text =
      "{\n  \"features\": {\n    \"inputs\": {\n      \"dtype\": \"int32\",\n"
      "      \"shape\": [\n        null\n      ]\n    },\n    \"text\": {\n"
      "      \"dtype\": \"string\",\n      \"shape\": []\n    }\n  },\n"
      "  \"num_shards\": 3,\n  \"seqio_version\": \"0.0.19\",\n  \"t5xx_cache_format\": 1\n}\n";
  EXPECT_EQ(CacheJsonText(CacheInfoJson(
                CacheFeaturesOf({{"text", std::string("x")}, {"inputs", Tokens{4}}}), 3)),
            info_text);
  // json.dumps({'examples': 3, 'targets_tokens': 7, 'targets_max_tokens': 4},
  //            sort_keys=True, indent=2)
  CacheStats s;
  s.examples = 3;
  s.tokens["targets"] = 7;
  s.max_tokens["targets"] = 4;
  EXPECT_EQ(CacheJsonText(s.ToJson()),
            "{\n  \"examples\": 3,\n  \"targets_max_tokens\": 4,\n  \"targets_tokens\": 7\n}\n");
}

TEST(TaskCacheTest, StatsCountTokensOtherThanEosAndPad) {
  auto bytes = std::make_shared<ByteVocabulary>();             // pad 0, eos 1
  auto pass = std::make_shared<PassThroughVocabulary>(100);    // pad 0, no eos
  const OutputFeatures of{{"inputs", {bytes, true, true}}, {"targets", {pass, true, true}}};
  CacheStats stats;
  // inputs [5 6 1 0]: 2 tokens (EOS and PAD excluded); targets [1 2 0]:
  // 2 (1 counts: no EOS in the pass-through vocabulary); "extra" is not an
  // output feature, "inputs_pretokenized" is a string: neither counted.
  stats.Add({{"inputs", Tokens{5, 6, 1, 0}}, {"targets", Tokens{1, 2, 0}},
             {"extra", Tokens{7, 7}}, {"inputs_pretokenized", std::string("ab")}},
            of);
  // inputs [9 9 9 1]: 3; no targets.
  stats.Add({{"inputs", Tokens{9, 9, 9, 1}}}, of);
  EXPECT_EQ(stats.ToJson(), nlohmann::json({{"examples", 2},
                                            {"inputs_tokens", 5},
                                            {"inputs_max_tokens", 3},
                                            {"targets_tokens", 2},
                                            {"targets_max_tokens", 2}}));
  CacheStats other;
  other.Add({{"targets", Tokens{3, 4, 5, 6}}}, of);  // 4 tokens
  stats.Merge(other);
  EXPECT_EQ(stats.examples, 3);
  EXPECT_EQ(stats.tokens["targets"], 6);
  EXPECT_EQ(stats.max_tokens["targets"], 4);
  EXPECT_EQ(stats.max_tokens["inputs"], 3);
  const CacheStats back = CacheStats::FromJson(stats.ToJson(), "stats.json");
  EXPECT_EQ(back.ToJson(), stats.ToJson());
  EXPECT_ERROR_CONTAINS(CacheStats::FromJson({{"inputs_tokens", 1}}, "s.json"), "\"examples\"");
}

TEST(TaskCacheTest, RoundTripInInterleavedOrder) {
  TempDir tmp;
  std::vector<Example> a, b;
  for (int i = 0; i < 20; ++i) a.push_back(Ex("a" + std::to_string(i), Tokens{i, 1}));
  for (int i = 0; i < 3; ++i) b.push_back(Ex("b" + std::to_string(i), Tokens{}));
  WriteCache(tmp.path, "train", {a, b});
  // Interleave(cycle 16, block 16): a0..a15, then b0..b2 (b ends), then a16..a19.
  std::vector<Example> want(a.begin(), a.begin() + 16);
  want.insert(want.end(), b.begin(), b.end());
  want.insert(want.end(), a.begin() + 16, a.end());
  EXPECT_EQ(ReadAll(tmp.path, "train"), want);
  // Two readers: file-level sharding (2 files >= 2 shards).
  EXPECT_EQ(ReadAll(tmp.path, "train", {1, 2}), b);
  // Three readers of 2 files: every 3rd example of the interleaved stream
  // from position 1: want[1], want[4], ...
  std::vector<Example> third;
  for (size_t p = 1; p < want.size(); p += 3) third.push_back(want[p]);
  EXPECT_EQ(ReadAll(tmp.path, "train", {1, 3}), third);
  EXPECT_EQ(ReadCachedStats(tmp.path, "train")["examples"], 23);
  const CachedSplitInfo info = ReadCachedInfo(tmp.path, "train");
  EXPECT_EQ(info.num_shards, 2);
  EXPECT_EQ(info.t5xx_cache_format, kCacheFormatVersion);
  EXPECT_EQ(info.features.at("ids").dtype, "int32");
  EXPECT_TRUE(info.features.at("ids").tokens);
  EXPECT_FALSE(info.features.at("text").tokens);
}

// A cache written by hand as seqio would: info without t5xx fields.
void WriteSeqioStyle(const std::string& dir, const nlohmann::json& features,
                     const std::vector<Example>& records, const std::string& version = "0.0.19") {
  MakeDirs(dir);
  nlohmann::json info = {{"features", features}, {"num_shards", 1}};
  if (!version.empty()) info["seqio_version"] = version;
  WriteStringToFileAtomic(CachedInfoPath(dir, "train"), info.dump());
  WriteStringToFileAtomic(CachedStatsPath(dir, "train"), "{\"examples\": 1}");
  std::vector<std::string> recs;
  for (const auto& r : records) recs.push_back(EncodeCacheExample(r));
  WriteTFRecordFile(CachedShardPath(dir, "train", 0, 1), recs);
}

const nlohmann::json kRank1 = {{"dtype", "int64"}, {"shape", {nullptr}}};
const nlohmann::json kString = {{"dtype", "string"}, {"shape", nlohmann::json::array()}};

TEST(TaskCacheTest, PlaintextRenamedMissingSequenceEmptyUndeclaredDropped) {
  TempDir tmp;
  WriteSeqioStyle(tmp.path, {{"inputs_plaintext", kString}, {"inputs", kRank1}, {"targets", kRank1}},
                  {{{"inputs_plaintext", std::string("hi")}, {"inputs", Tokens{3, 1}},
                    {"not_declared", Tokens{9}}}});
  // targets is missing from the record: an empty sequence (allow_missing).
  const Example want{{"inputs_pretokenized", std::string("hi")}, {"inputs", Tokens{3, 1}},
                     {"targets", Tokens{}}};
  EXPECT_EQ(ReadAll(tmp.path, "train"), std::vector<Example>{want});
}

TEST(TaskCacheTest, Int64OfOldCachesIsInt32) {
  TempDir old_cache, new_cache, pre;
  WriteSeqioStyle(old_cache.path, {{"ids", kRank1}}, {{{"ids", Tokens{1}}}}, /*version=*/"");
  WriteSeqioStyle(new_cache.path, {{"ids", kRank1}}, {{{"ids", Tokens{1}}}}, "0.0.19");
  WriteSeqioStyle(pre.path, {{"ids", kRank1}}, {{{"ids", Tokens{1}}}}, "0.0.0.dev3");
  EXPECT_EQ(ReadCachedInfo(old_cache.path, "train").features.at("ids").dtype, "int32");
  EXPECT_EQ(ReadCachedInfo(new_cache.path, "train").features.at("ids").dtype, "int64");
  EXPECT_EQ(ReadCachedInfo(pre.path, "train").features.at("ids").dtype, "int32");
  EXPECT_EQ(ReadCachedInfo(new_cache.path, "train").t5xx_cache_format, 0);
}

TEST(TaskCacheTest, RefusesWhatT5xxCannotHold) {
  TempDir tmp;
  const std::string info_path = CachedInfoPath(tmp.path, "train");
  WriteSeqioStyle(tmp.path, {{"ragged", {{"dtype", "int32"}, {"shape", {nullptr, nullptr}}}}},
                  {});
  EXPECT_ERROR_CONTAINS(MakeCachedDataSource(tmp.path, "train"),
                        info_path + ": feature 'ragged' has shape [null,null] (rank 2)");
  EXPECT_ERROR_CONTAINS(MakeCachedDataSource(tmp.path, "train"), "`_rl:<dim>:ragged`");
  WriteSeqioStyle(tmp.path, {{"z", {{"dtype", "complex64"}, {"shape", {nullptr}}}}}, {});
  EXPECT_ERROR_CONTAINS(MakeCachedDataSource(tmp.path, "train"), "has dtype 'complex64'");
  // A declared scalar holding two values.
  WriteSeqioStyle(tmp.path, {{"id", {{"dtype", "int64"}, {"shape", nlohmann::json::array()}}}},
                  {{{"id", Tokens{1, 2}}}});
  EXPECT_ERROR_CONTAINS(ReadAll(tmp.path, "train"), "feature 'id' holds 2 values but");
  // Rank 2 is not written.
  Array grid;
  grid.dtype = Array::DType::kInt32;
  grid.shape = {2, 1};
  grid.ints = {1, 2};
  EXPECT_ERROR_CONTAINS(CacheFeaturesOf({{"grid", grid}}),
                        "feature 'grid' is an array (int32 [2, 1]): t5xx's task caches hold "
                        "scalars and rank-1 features so far");
  // A record carrying a ragged feature's row lengths.
  WriteSeqioStyle(tmp.path, {{"ids", kRank1}}, {});
  WriteTFRecordFile(CachedShardPath(tmp.path, "train", 0, 1),
                    {SerializeTFExample({{"ids", Tokens{1, 2}}, {"_rl:0:ids", Tokens{2}}})});
  EXPECT_ERROR_CONTAINS(ReadAll(tmp.path, "train"),
                        "train.tfrecord-00000-of-00001: record 0: key '_rl:0:ids' holds the row "
                        "lengths of a ragged feature");
  EXPECT_ERROR_CONTAINS(EncodeCacheExample({{"_rl:0:x", Tokens{1}}}),
                        "cannot cache feature '_rl:0:x'");
  // A string feature missing from a record.
  WriteSeqioStyle(tmp.path, {{"text", kString}}, {{{"other", Tokens{1}}}});
  EXPECT_ERROR_CONTAINS(ReadAll(tmp.path, "train"), "string feature 'text'");
}

// What TFDS sources give t5's catalog tasks before their placeholder:
// scalars ("idx", "label", a float score), rank-1 arrays ("answers" of
// strings, bools) beside text and token ids; info.json declares each with
// its dtype and [] / [null], as seqio's GetInfo, and they read back equal.
TEST(TaskCacheTest, ArraysRoundTrip) {
  TempDir tmp;
  Array flags;
  flags.dtype = Array::DType::kBool;
  flags.shape = {3};
  flags.ints = {1, 0, 1};
  Array no_answers = Array::Strings({});
  const Example a{{"idx", Array::Int32(7)},
                  {"label", Array::Int64(-1)},
                  {"score", Array::Float32(3.25f)},
                  {"answers", Array::Strings({"Denver Broncos", "Broncos"})},
                  {"flags", flags},
                  {"text", std::string("q")},
                  {"targets", Tokens{5, 1}}};
  Example b = a;
  b["idx"] = Array::Int32(8);
  b["answers"] = no_answers;
  WriteCache(tmp.path, "train", {{a, b}});
  std::ifstream info(CachedInfoPath(tmp.path, "train"));
  const nlohmann::json features = nlohmann::json::parse(info)["features"];
  EXPECT_EQ(features["idx"], (nlohmann::json{{"dtype", "int32"}, {"shape", nlohmann::json::array()}}));
  EXPECT_EQ(features["answers"], (nlohmann::json{{"dtype", "string"}, {"shape", {nullptr}}}));
  EXPECT_EQ(features["score"], (nlohmann::json{{"dtype", "float32"}, {"shape", nlohmann::json::array()}}));
  EXPECT_EQ(features["flags"], (nlohmann::json{{"dtype", "bool"}, {"shape", {nullptr}}}));
  EXPECT_EQ(ReadAll(tmp.path, "train"), (std::vector<Example>{a, b}));
}

TEST(TaskCacheTest, RefusesAFormatFromTheFuture) {
  TempDir tmp;
  WriteCache(tmp.path, "train", {{Ex("x", Tokens{1})}});
  nlohmann::json info = nlohmann::json::parse(ReadFileToString(CachedInfoPath(tmp.path, "train")));
  info["t5xx_cache_format"] = kCacheFormatVersion + 1;
  WriteStringToFileAtomic(CachedInfoPath(tmp.path, "train"), info.dump());
  const std::string msg = t5xx::testing::ErrorOf([&] { MakeCachedDataSource(tmp.path, "train"); });
  EXPECT_NE(msg.find(CachedInfoPath(tmp.path, "train") + ": t5xx_cache_format 2 was written by "
                                                         "a newer t5xx"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("t5xx cache_tasks"), std::string::npos) << msg;
}

TEST(TaskCacheTest, MissingFilesAreNamed) {
  TempDir tmp;
  EXPECT_ERROR_CONTAINS(MakeCachedDataSource(tmp.path, "train"),
                        CachedInfoPath(tmp.path, "train") + ": no such file");
  WriteCache(tmp.path, "train", {{Ex("x", Tokens{1})}, {Ex("y", Tokens{2})}, {}});
  std::filesystem::remove(CachedShardPath(tmp.path, "train", 1, 3));
  EXPECT_ERROR_CONTAINS(MakeCachedDataSource(tmp.path, "train"),
                        CachedShardPath(tmp.path, "train", 1, 3) + ": missing");
  std::filesystem::remove(CachedStatsPath(tmp.path, "train"));
  EXPECT_ERROR_CONTAINS(ReadCachedStats(tmp.path, "train"),
                        CachedStatsPath(tmp.path, "train") + ": no such file");
  WriteStringToFileAtomic(CachedStatsPath(tmp.path, "train"), "{\"tokens\": 3}");
  EXPECT_ERROR_CONTAINS(ReadCachedStats(tmp.path, "train"), "\"examples\"");
}

TEST(TaskCacheTest, SaveAndRestoreMidStream) {
  TempDir tmp;
  std::vector<Example> a, b;
  for (int i = 0; i < 30; ++i) a.push_back(Ex("a", Tokens{i}));
  for (int i = 0; i < 25; ++i) b.push_back(Ex("b", Tokens{i}));
  WriteCache(tmp.path, "train", {a, b});
  const auto all = ReadAll(tmp.path, "train");
  auto source = MakeCachedDataSource(tmp.path, "train");
  DatasetPtr ds = source->GetDataset("train", false, 0, {});
  for (int i = 0; i < 21; ++i) ds->Next();
  const nlohmann::json state = ds->SaveState();
  DatasetPtr resumed = source->GetDataset("train", false, 0, {});
  resumed->RestoreState(state);
  EXPECT_EQ(Collect(*resumed), std::vector<Example>(all.begin() + 21, all.end()));
}

}  // namespace
}  // namespace t5xx::seqio
