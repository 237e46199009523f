// TfdsDataSource against TensorFlow Datasets itself: tests/testdata/tfds/
// holds datasets TFDS's writer made and tfds_reads.json what TFDS's reader
// yields from them (tests/interop/make_tfds_fixtures.py; ctest
// interop_tfds_reads checks the file against TFDS again): every split's
// examples in TFDS's order, and the examples of slices, '+' and per-file
// input pipelines. Then the bad input of dataset_info.h and features.h.
#include "t5xx/data/tfds/tfds_data_source.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "t5xx/data/pipeline/array_json.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kFixtures = std::string(T5XX_SOURCE_DIR) + "/tests/testdata/tfds";

const json& Reads() {
  static const json reads = [] {
    std::ifstream in(kFixtures + "/tfds_reads.json");
    return json::parse(in);
  }();
  return reads;
}

// The t5xx value as tfds_reads.json writes TFDS's.
json AsOracle(const FeatureValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) {
    return {{"dtype", "string"}, {"shape", json::array()}, {"value", *s}};
  }
  const Array& a = std::get<Array>(v);
  return {{"dtype", DTypeName(a.dtype)}, {"shape", a.shape}, {"value", ArrayToNestedJson(a)}};
}

json AsOracle(const Example& ex) {
  json out = json::object();
  for (const auto& [k, v] : ex) out[k] = AsOracle(v);
  return out;
}

std::vector<json> ReadAll(const TfdsDataSource& source, const std::string& split,
                          ShardInfo shard = {}) {
  DatasetPtr ds = source.GetDataset(split, /*shuffle=*/false, 0, shard);
  std::vector<json> out;
  while (auto ex = ds->Next()) out.push_back(AsOracle(*ex));
  return out;
}

TEST(TfdsDataSourceTest, EverySplitDecodesAsTfdsReadsIt) {
  int splits = 0, examples = 0;
  for (const auto& [key, want] : Reads()["examples"].items()) {
    const std::string name = key.substr(0, key.find(' ')), split = key.substr(key.find(' ') + 1);
    TfdsDataSource source(name, kFixtures + "/data", {});
    const std::vector<json> got = ReadAll(source, split);
    ASSERT_EQ(got.size(), want.size()) << key;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], want[i]) << key << " example " << i;
    }
    EXPECT_EQ(source.num_input_examples(split), static_cast<int64_t>(want.size())) << key;
    ++splits;
    examples += static_cast<int>(got.size());
  }
  EXPECT_EQ(splits, 96);
  EXPECT_GT(examples, 500);
}

TEST(TfdsDataSourceTest, SlicesSumsAndInputPipelinesReadWhatTfdsReads) {
  int cases = 0;
  for (const auto& [key, order] : Reads()["orders"].items()) {
    // "<name> <spec>" or "<name> <spec> shard i/n".
    std::istringstream words(key);
    std::string name, spec, shard_word, shard;
    words >> name >> spec >> shard_word >> shard;
    ShardInfo info;
    if (shard_word == "shard") {
      info.index = std::stoi(shard.substr(0, shard.find('/')));
      info.num_shards = std::stoi(shard.substr(shard.find('/') + 1));
    }
    TfdsDataSource source(name, kFixtures + "/data", {{"x", spec}});
    const std::vector<json> got = ReadAll(source, "x", info);
    ASSERT_EQ(got.size(), order.size()) << key;
    for (size_t i = 0; i < got.size(); ++i) {
      const json& at = order[i];
      const json& want =
          Reads()["examples"][name + " " + at[0].get<std::string>()][at[1].get<size_t>()];
      ASSERT_EQ(got[i], want) << key << " example " << i;
    }
    if (info.num_shards == 1) {
      EXPECT_EQ(source.num_input_examples("x"), static_cast<int64_t>(order.size())) << key;
    }
    ++cases;
  }
  EXPECT_EQ(cases, 97);
}

TEST(TfdsDataSourceTest, SplitsListShardsAndTheDataDirectory) {
  TfdsDataSource all("glue/cola:1.0.0", kFixtures + "/data", {});
  // dataset_info.json's order.
  EXPECT_EQ(all.splits(), (std::vector<std::string>{"train", "validation", "test"}));
  const std::string dir = kFixtures + "/data/glue/cola/1.0.0/";
  EXPECT_EQ(all.ListShards("train"), (std::vector<std::string>{
                                         dir + "glue-train.tfrecord-00000-of-00002",
                                         dir + "glue-train.tfrecord-00001-of-00002"}));
  TfdsDataSource sliced("glue/cola:1.0.0", kFixtures + "/data", {{"validation", "train[:10%]"}});
  EXPECT_EQ(sliced.splits(), std::vector<std::string>{"validation"});
  EXPECT_EQ(sliced.ListShards("validation"),
            std::vector<std::string>{dir + "glue-train.tfrecord-00000-of-00002"});
  EXPECT_FALSE(sliced.supports_arbitrary_sharding());
  // Wildcards take the highest version matching; no version, the highest.
  EXPECT_EQ(TfdsDataSource("glue/cola:1.*.*", kFixtures + "/data", {}).dataset().version, "1.0.0");
  EXPECT_EQ(TfdsDataSource("squad/v1.1", kFixtures + "/data", {}).dataset().version, "3.0.0");
  // One config on disk and none named: that one (t5's "cnn_dailymail:3.4.0"
  // has none at all).
  EXPECT_EQ(TfdsDataSource("trivia_qa:1.1.0", kFixtures + "/data", {}).dataset().config, "rc");
  EXPECT_EQ(TfdsDataSource("cnn_dailymail:3.4.0", kFixtures + "/data", {}).dataset().config, "");
  // seqio's override (t5x's --tfds_data_dir) before the source's dir.
  SetTfdsDataDirOverride(kFixtures + "/data");
  TfdsDataSource elsewhere("glue/cola:1.0.0", "/nonexistent", {});
  EXPECT_EQ(elsewhere.dataset().dir, dir.substr(0, dir.size() - 1));
  SetTfdsDataDirOverride("");
  EXPECT_EQ(TfdsDataDir("", "/a"), "/a");
  ::setenv("TFDS_DATA_DIR", "/from_env", 1);
  EXPECT_EQ(TfdsDataDir("", ""), "/from_env");
  ::unsetenv("TFDS_DATA_DIR");
}

TEST(TfdsDataSourceTest, ShuffledFilesHoldTheSameExamples) {
  TfdsDataSource source("c4/en:2.2.0", kFixtures + "/data", {});
  DatasetPtr a = source.GetDataset("train", /*shuffle=*/true, 7, {});
  DatasetPtr b = source.GetDataset("train", /*shuffle=*/true, 7, {});
  std::multiset<std::string> got, want;
  std::vector<std::string> order_a, order_b;
  while (auto ex = a->Next()) {
    order_a.push_back(GetString(*ex, "url"));
    got.insert(order_a.back());
  }
  while (auto ex = b->Next()) order_b.push_back(GetString(*ex, "url"));
  for (const json& ex : Reads()["examples"]["c4/en:2.2.0 train"]) {
    want.insert(ex["url"]["value"].get<std::string>());
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(order_a, order_b);  // the seed decides
}

// Bad input: one error naming what and where, with the way out.
class TfdsBadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "t5xx_tfds_bad_" + std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::copy(kFixtures + "/data/glue", dir_ + "/glue", fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Error(const std::string& name, const std::string& split,
                    std::map<std::string, std::string> splits = {}, ShardInfo shard = {}) {
    try {
      TfdsDataSource source(name, dir_, std::move(splits));
      DatasetPtr ds = source.GetDataset(split, false, 0, shard);
      while (ds->Next()) {
      }
    } catch (const t5xx::Error& e) {
      return e.what();
    }
    return "(no error)";
  }
  std::string dir_;
};

TEST_F(TfdsBadInputTest, MissingDatasetVersionConfigAndSplit) {
  std::string e = Error("squad/v1.1:3.0.0", "train");
  EXPECT_NE(e.find("not prepared under " + dir_), std::string::npos) << e;
  EXPECT_NE(e.find("tfds build squad/v1.1 --data_dir=" + dir_), std::string::npos) << e;
  e = Error("glue/cola:2.0.0", "train");
  EXPECT_NE(e.find("no version matching 2.0.0"), std::string::npos) << e;
  EXPECT_NE(e.find("(there: '1.0.0')"), std::string::npos) << e;
  e = Error("glue:1.0.0", "train");
  EXPECT_NE(e.find("names no config"), std::string::npos) << e;
  EXPECT_NE(e.find("'ax', 'cola', 'mnli'"), std::string::npos) << e;
  e = Error("glue/mnli_x:1.0.0", "train");
  EXPECT_NE(e.find("no config 'mnli_x'"), std::string::npos) << e;
  e = Error("glue/cola:1.0.0", "dev");
  EXPECT_NE(e.find("no split 'dev' (its splits: 'train', 'validation', 'test')"),
            std::string::npos) << e;
  e = Error("glue/cola:1.0.0", "validation", {{"train", "train"}});
  EXPECT_NE(e.find("unknown split 'validation'; its splits: 'train'"), std::string::npos) << e;
}

TEST_F(TfdsBadInputTest, SlicesOutOfRangeOrMalformed) {
  std::string e = Error("glue/cola:1.0.0", "x", {{"x", "train[3:40]"}});
  EXPECT_NE(e.find("the slice [3:40] is out of range for the 30 examples of 'train'"),
            std::string::npos) << e;
  e = Error("glue/cola:1.0.0", "x", {{"x", "train[:10%"}});
  EXPECT_NE(e.find("is not a TFDS split"), std::string::npos) << e;
  e = Error("glue/cola:1.0.0", "x", {{"x", "train[1.5:3]"}});
  EXPECT_NE(e.find("absolute bounds are integers"), std::string::npos) << e;
  // As TFDS: a slice that selects nothing, percents beyond 100 and spaces
  // inside a part are errors (spaces around '+' are not).
  for (const char* spec : {"train[:0]", "train[33%:34%]", "train[5:5]"}) {
    e = Error("glue/cola:1.0.0", "x", {{"x", spec}});
    EXPECT_NE(e.find("selects no example of 'train' (30 examples)"), std::string::npos) << e;
  }
  e = Error("glue/cola:1.0.0", "x", {{"x", "train[:101%]"}});
  EXPECT_NE(e.find("percent slice boundaries must be in [-100, 100]"), std::string::npos) << e;
  e = Error("glue/cola:1.0.0", "x", {{"x", "train[ :3]"}});
  EXPECT_NE(e.find("is not a TFDS split"), std::string::npos) << e;
  EXPECT_EQ(Error("glue/cola:1.0.0", "x", {{"x", "train[:3] + validation"}}), "(no error)");
  // TFDS shards by file: more input pipelines than files is refused (seqio's
  // Task shards the examples instead).
  e = Error("glue/cola:1.0.0", "train", {}, ShardInfo{0, 3});
  EXPECT_NE(e.find("reads 2 files, fewer than the 3 readers"), std::string::npos) << e;
}

TEST_F(TfdsBadInputTest, UnreadFeaturesAndCorruptShards) {
  const std::string version = dir_ + "/glue/cola/1.0.0";
  {
    std::ifstream in(version + "/features.json");
    json f = json::parse(in);
    f["featuresDict"]["features"]["image"] = {
        {"pythonClassName", "tensorflow_datasets.core.features.image_feature.Image"},
        {"image", {{"shape", {{"dimensions", {"-1", "-1", "3"}}}}, {"dtype", "uint8"}}}};
    std::ofstream(version + "/features.json") << f.dump();
  }
  std::string e = Error("glue/cola:1.0.0", "train");
  EXPECT_NE(e.find(version + "/features.json: feature /image (tensorflow_datasets.core."
                             "features.image_feature.Image): this kind of TFDS feature is not "
                             "read by t5xx"),
            std::string::npos) << e;
  fs::copy_file(kFixtures + "/data/glue/cola/1.0.0/features.json", version + "/features.json",
                fs::copy_options::overwrite_existing);
  // A flipped byte in a record's data: its CRC names the file and offset.
  const std::string shard = version + "/glue-train.tfrecord-00001-of-00002";
  std::string bytes;
  {
    std::ifstream in(shard, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[40] ^= 0x5a;
  std::ofstream(shard, std::ios::binary) << bytes;
  e = Error("glue/cola:1.0.0", "train");
  EXPECT_NE(e.find(shard), std::string::npos) << e;
  EXPECT_NE(e.find("CRC"), std::string::npos) << e;
  fs::copy_file(kFixtures + "/data/glue/cola/1.0.0/glue-train.tfrecord-00001-of-00002", shard,
                fs::copy_options::overwrite_existing);
  // A shard shorter or longer than dataset_info.json's shardLengths (15
  // each): named (TFDS itself reads what is there).
  const std::string first = version + "/glue-train.tfrecord-00000-of-00002";
  std::ofstream(first, std::ios::binary | std::ios::trunc).close();
  e = Error("glue/cola:1.0.0", "train");
  EXPECT_NE(e.find(first + " ends before record 1 of the 15 its dataset_info.json says "
                           "(shardLengths)"),
            std::string::npos) << e;
  e = Error("glue/cola:1.0.0", "x", {{"x", "train[3:7]"}});
  EXPECT_NE(e.find(first + " ends before record 4 of the 15"), std::string::npos) << e;
  {
    std::ifstream in(shard, std::ios::binary);
    std::string twice(std::istreambuf_iterator<char>(in), {});
    twice += twice;
    std::ofstream(first, std::ios::binary | std::ios::trunc) << twice;
  }
  e = Error("glue/cola:1.0.0", "train");
  EXPECT_NE(e.find(first + " holds more records than the 15 its dataset_info.json says"),
            std::string::npos) << e;
  fs::copy_file(kFixtures + "/data/glue/cola/1.0.0/glue-train.tfrecord-00000-of-00002", first,
                fs::copy_options::overwrite_existing);
  // array_record shards are named, not misread.
  {
    std::ifstream in(version + "/dataset_info.json");
    json info = json::parse(in);
    info["fileFormat"] = "array_record";
    std::ofstream(version + "/dataset_info.json") << info.dump();
  }
  e = Error("glue/cola:1.0.0", "train");
  EXPECT_NE(e.find("fileFormat is 'array_record'; t5xx reads TFDS's tfrecord shards only"),
            std::string::npos) << e;
}

}  // namespace
}  // namespace t5xx::seqio
