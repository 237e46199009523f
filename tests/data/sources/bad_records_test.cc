// Tests for BadRecordPolicy: skipping and counting malformed JSON lines and
// bad TFRecords (t5xx/data/sources/json_lines_source.h, tfrecord_source.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/sources/json_lines_source.h"
#include "t5xx/data/sources/tf_example.h"
#include "t5xx/data/sources/tfrecord_file.h"
#include "t5xx/data/sources/tfrecord_source.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using ::t5xx::testing::ErrorOf;

std::string MakeDir() {
  std::string tmpl = ::testing::TempDir() + "/t5xx_bad_XXXXXX";
  char* d = mkdtemp(tmpl.data());
  EXPECT_NE(d, nullptr);
  return tmpl;
}

void WriteRaw(const std::string& path, const std::string& body) {
  std::ofstream f(path, std::ios::binary);
  f << body;
}

std::string ReadRaw(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::vector<std::string> Texts(Dataset& ds) {
  std::vector<std::string> out;
  for (const auto& ex : Collect(ds)) out.push_back(std::get<std::string>(ex.at("text")));
  return out;
}

const char* kJson =
    "{\"text\": \"a\"}\n"
    "{\"text\": oops\n"      // line 2: malformed
    "{\"text\": \"b\"}\n"
    "{\"url\": \"x\"}\n"      // line 4: missing field
    "{\"text\": 3}\n"         // line 5: not a string
    "{\"text\": \"c\"}\n";

TEST(BadRecords, JsonDefaultErrorNamesFileAndLine) {
  const std::string dir = MakeDir();
  WriteRaw(dir + "/a.jsonl", kJson);
  JsonLinesDataSource src({{"train", dir + "/a.jsonl"}}, {"text"});
  auto ds = src.GetDataset("train", false, 0, ShardInfo{});
  const std::string msg = ErrorOf([&] { Collect(*ds); });
  EXPECT_NE(msg.find(dir + "/a.jsonl:2: malformed JSON line"), std::string::npos)
      << msg;
  EXPECT_EQ(src.skipped_records(), 0);
}

TEST(BadRecords, JsonSkipCountsAndRestoreKeepsCount) {
  const std::string dir = MakeDir();
  WriteRaw(dir + "/a.jsonl", kJson);
  BadRecordPolicy policy;
  policy.skip = true;
  JsonLinesDataSource src({{"train", dir + "/a.jsonl"}}, {"text"}, policy);
  auto ds = src.GetDataset("train", false, 0, ShardInfo{});
  EXPECT_EQ(Texts(*ds), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(src.skipped_records(), 3);

  // Save after "b" (line 2 skipped), restore into a fresh source.
  JsonLinesDataSource src2({{"train", dir + "/a.jsonl"}}, {"text"}, policy);
  EXPECT_EQ(src2.skipped_records(), 3);  // same shared counter
  BadRecordPolicy p3;
  p3.skip = true;
  JsonLinesDataSource src3({{"train", dir + "/a.jsonl"}}, {"text"}, p3);
  auto d3 = src3.GetDataset("train", false, 0, ShardInfo{});
  ASSERT_TRUE(d3->Next());
  ASSERT_TRUE(d3->Next());  // "b"
  const auto state = SavePipelineState(*d3);
  EXPECT_EQ(src3.skipped_records(), 1);

  BadRecordPolicy p4;
  p4.skip = true;
  JsonLinesDataSource src4({{"train", dir + "/a.jsonl"}}, {"text"}, p4);
  auto d4 = src4.GetDataset("train", false, 0, ShardInfo{});
  RestorePipelineState(*d4, state);
  EXPECT_EQ(src4.skipped_records(), 1);
  EXPECT_EQ(Texts(*d4), (std::vector<std::string>{"c"}));
  EXPECT_EQ(src4.skipped_records(), 3);
  EXPECT_EQ(d4->SaveState().at("skipped").get<int64_t>(), 3);
}

// Three records "r0", "r1", "r2" as tf.Examples {"text": ...}.
std::string WriteRecords(const std::string& path) {
  std::vector<std::string> recs;
  for (const char* t : {"r0", "r1", "r2"})
    recs.push_back(SerializeTFExample({{"text", std::string(t)}}));
  WriteTFRecordFile(path, recs);
  return ReadRaw(path);
}

TEST(BadRecords, TFRecordDataCrcSkippedAndCounted) {
  const std::string dir = MakeDir();
  std::string bytes = WriteRecords(dir + "/a.tfrecord");
  // Record 1 starts after record 0 (12 + len0 + 4 bytes); flip its last
  // data byte so its data CRC mismatches.
  const size_t len0 = bytes.size() / 3 - 16;  // all records have equal size
  const size_t rec1 = 16 + len0;
  bytes[rec1 + 12 + len0 - 1] ^= 0x1;
  WriteRaw(dir + "/a.tfrecord", bytes);
  WriteRecords(dir + "/b.tfrecord");

  TFExampleDataSource strict({{"train", dir + "/a.tfrecord"}}, {"text"});
  auto ds = strict.GetDataset("train", false, 0, ShardInfo{});
  const std::string msg = ErrorOf([&] { Collect(*ds); });
  EXPECT_NE(msg.find("a.tfrecord"), std::string::npos) << msg;
  EXPECT_NE(msg.find("byte offset " + std::to_string(rec1)), std::string::npos)
      << msg;

  BadRecordPolicy policy;
  policy.skip = true;
  TFExampleDataSource src({{"train", dir + "/*.tfrecord"}}, {"text"}, policy);
  auto d = src.GetDataset("train", false, 0, ShardInfo{});
  EXPECT_EQ(Texts(*d),
            (std::vector<std::string>{"r0", "r2", "r0", "r1", "r2"}));
  EXPECT_EQ(src.skipped_records(), 1);

  // Restore after "r2" of a.tfrecord (past the bad record) keeps the count
  // and replays over the bad record.
  BadRecordPolicy p2;
  p2.skip = true;
  TFExampleDataSource s2({{"train", dir + "/*.tfrecord"}}, {"text"}, p2);
  auto d2 = s2.GetDataset("train", false, 0, ShardInfo{});
  ASSERT_TRUE(d2->Next());
  ASSERT_TRUE(d2->Next());
  const auto state = SavePipelineState(*d2);
  BadRecordPolicy p3;
  p3.skip = true;
  TFExampleDataSource s3({{"train", dir + "/*.tfrecord"}}, {"text"}, p3);
  auto d3 = s3.GetDataset("train", false, 0, ShardInfo{});
  RestorePipelineState(*d3, state);
  EXPECT_EQ(s3.skipped_records(), 1);
  EXPECT_EQ(Texts(*d3), (std::vector<std::string>{"r0", "r1", "r2"}));
  EXPECT_EQ(s3.skipped_records(), 1);
}

TEST(BadRecords, TFRecordLengthCrcSkipsRestOfFile) {
  const std::string dir = MakeDir();
  std::string bytes = WriteRecords(dir + "/a.tfrecord");
  const size_t rec1 = bytes.size() / 3;
  bytes[rec1 + 8] ^= 0x1;  // length CRC of record 1
  WriteRaw(dir + "/a.tfrecord", bytes);
  WriteRecords(dir + "/b.tfrecord");

  TFExampleDataSource strict({{"train", dir + "/a.tfrecord"}}, {"text"});
  auto ds = strict.GetDataset("train", false, 0, ShardInfo{});
  const std::string msg = ErrorOf([&] { Collect(*ds); });
  EXPECT_NE(msg.find("length CRC mismatch"), std::string::npos) << msg;

  BadRecordPolicy policy;
  policy.skip = true;
  TFExampleDataSource src({{"train", dir + "/*.tfrecord"}}, {"text"}, policy);
  auto d = src.GetDataset("train", false, 0, ShardInfo{});
  EXPECT_EQ(Texts(*d), (std::vector<std::string>{"r0", "r0", "r1", "r2"}));
  EXPECT_EQ(src.skipped_records(), 1);
}

TEST(BadRecords, TFRecordUnparsableExampleSkipped) {
  const std::string dir = MakeDir();
  WriteTFRecordFile(dir + "/a.tfrecord",
                    {SerializeTFExample({{"text", std::string("ok")}}),
                     std::string("\xff\xff\xff", 3),
                     SerializeTFExample({{"url", std::string("x")}})});
  BadRecordPolicy policy;
  policy.skip = true;
  TFExampleDataSource src({{"train", dir + "/a.tfrecord"}}, {"text"}, policy);
  auto d = src.GetDataset("train", false, 0, ShardInfo{});
  EXPECT_EQ(Texts(*d), (std::vector<std::string>{"ok"}));
  EXPECT_EQ(src.skipped_records(), 2);
  EXPECT_EQ(d->SaveState().at("skipped").get<int64_t>(), 2);
}

}  // namespace
}  // namespace t5xx::seqio
