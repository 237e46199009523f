// Tests for the TFRecord reader/writer, tf.Example parsing and
// TFExampleDataSource. Byte layouts are derived by hand from the TFRecord and
// protobuf wire formats documented in tfrecord_source.h.
#include "t5xx/data/sources/tf_example.h"
#include "t5xx/data/sources/tfrecord_file.h"
#include "t5xx/data/sources/tfrecord_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "t5xx/util/crc32c.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

class TFRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/t5xx_tfrec_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  static std::string ReadRaw(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void WriteRaw(const std::string& p, const std::string& data) {
    std::ofstream(p, std::ios::binary) << data;
  }
  // File `name` with n examples {"text": "<tag>-<j>", "ids": {j}}.
  std::string WriteTagged(const std::string& name, const std::string& tag,
                          int n) {
    std::vector<std::string> recs;
    for (int j = 0; j < n; ++j) {
      recs.push_back(SerializeTFExample(
          {{"text", tag + "-" + std::to_string(j)}, {"ids", Tokens{j}}}));
    }
    WriteTFRecordFile(Path(name), recs);
    return Path(name);
  }
  static std::vector<std::string> Texts(Dataset& ds) {
    std::vector<std::string> out;
    while (auto ex = ds.Next()) out.push_back(std::get<std::string>(ex->at("text")));
    return out;
  }
  std::string dir_;
};

// CRC-32C itself is tested in tests/util/crc32c_test.cc.

TEST(TFExampleTest, SerializeMatchesHandEncoding) {
  // Example{features{feature{key:"a" value{bytes_list{value:"x"}}}}}:
  //  BytesList = 0a 01 'x'; Feature = 0a 03 <BytesList>;
  //  entry = 0a 01 'a' 12 05 <Feature>; Features = 0a 0a <entry>;
  //  Example = 0a 0c <Features>.
  const std::string expected("\x0a\x0c\x0a\x0a\x0a\x01" "a" "\x12\x05\x0a\x03\x0a\x01" "x",
                             14);
  EXPECT_EQ(SerializeTFExample({{"a", std::string("x")}}), expected);
}

TEST(TFExampleTest, ParsesUnpackedInt64AndNegative) {
  // Int64List with unpacked values 5 and -1 (varint of 2^64-1: ten bytes).
  std::string list = std::string("\x08\x05", 2) + "\x08" +
                     std::string(9, '\xff') + "\x01";
  std::string feature = "\x1a" + std::string(1, char(list.size())) + list;
  std::string entry = std::string("\x0a\x01k\x12", 4) +
                      std::string(1, char(feature.size())) + feature;
  std::string feats = "\x0a" + std::string(1, char(entry.size())) + entry;
  std::string ex = "\x0a" + std::string(1, char(feats.size())) + feats;
  Example parsed = ParseTFExample(ex, {}, "rec");
  EXPECT_EQ(std::get<Tokens>(parsed.at("k")), (Tokens{5, -1}));
}

TEST(TFExampleTest, FloatFeatureIsAFloat32Array) {
  // FloatList packed {1.0f}: 0a 04 00 00 80 3f; Feature field 2.
  std::string list("\x0a\x04\x00\x00\x80\x3f", 6);
  std::string feature = "\x12" + std::string(1, char(list.size())) + list;
  std::string entry = std::string("\x0a\x01" "f\x12", 4) +
                      std::string(1, char(feature.size())) + feature;
  std::string text_entry_feat =
      SerializeTFExample({{"t", std::string("hi")}}).substr(4);  // entry bytes
  std::string feats_body = "\x0a" + std::string(1, char(entry.size())) + entry;
  // Reuse the entry of a serialized string example: strip the Example and
  // Features headers (0a LL 0a LL).
  feats_body += std::string("\x0a") + char(text_entry_feat.size()) + text_entry_feat;
  std::string ex = "\x0a" + std::string(1, char(feats_body.size())) + feats_body;
  // A float_list is a float32 array (seqio's tf.io.VarLenFeature(tf.float32)).
  const Example all = ParseTFExample(ex, {}, "f.tfrecord: record 0");
  const Array& f = GetArray(all, "f");
  EXPECT_EQ(f.dtype, Array::DType::kFloat32);
  EXPECT_EQ(f.shape, std::vector<int64_t>{1});
  EXPECT_EQ(f.floats, std::vector<float>{1.0f});
  Example only_t = ParseTFExample(ex, {"t"}, "x");
  EXPECT_EQ(std::get<std::string>(only_t.at("t")), "hi");
  EXPECT_EQ(only_t.size(), 1u);
}

TEST(TFExampleTest, MalformedProtoErrors) {
  EXPECT_ERROR_CONTAINS(ParseTFExample(std::string("\x0a\x10\x0a", 3), {}, "w"),
                        "w: malformed tf.Example");
}

TEST_F(TFRecordTest, RoundTripPlainAndGzip) {
  const std::vector<Example> examples = {
      {{"text", std::string("hello world")}, {"ids", Tokens{1, 2, 3}}},
      {{"text", std::string("")}, {"ids", Tokens{}}},
      {{"text", std::string("a\0b", 3)},
       {"ids", Tokens{std::numeric_limits<int32_t>::min(), -7, 0,
                      std::numeric_limits<int32_t>::max()}}},
      {{"other", Tokens(300, 42)}},
  };
  std::vector<std::string> recs;
  for (const auto& e : examples) recs.push_back(SerializeTFExample(e));
  for (bool gz : {false, true}) {
    SCOPED_TRACE(gz ? "gzip" : "plain");
    const std::string p = Path(gz ? "d.tfrecord.gz" : "d.tfrecord");
    WriteTFRecordFile(p, recs, gz);
    const std::string raw = ReadRaw(p);
    ASSERT_GE(raw.size(), 2u);
    EXPECT_EQ(raw[0] == '\x1f' && raw[1] == '\x8b', gz);
    EXPECT_EQ(ReadTFRecordFile(p), recs);
    TFExampleDataSource src({{"train", p}});
    auto ds = src.GetDataset("train", false, 0, ShardInfo{});
    EXPECT_EQ(Collect(*ds), examples);
  }
  // Plain size: each record adds 16 bytes of framing.
  size_t payload = 0;
  for (const auto& r : recs) payload += r.size() + 16;
  EXPECT_EQ(ReadRaw(Path("d.tfrecord")).size(), payload);
}

TEST_F(TFRecordTest, EmptyFileHasNoRecords) {
  WriteTFRecordFile(Path("e.tfrecord"), {});
  EXPECT_TRUE(ReadTFRecordFile(Path("e.tfrecord")).empty());
}

TEST_F(TFRecordTest, SelectsFeaturesAndReportsMissingKey) {
  const std::string p = WriteTagged("t.tfrecord", "x", 3);
  TFExampleDataSource src({{"train", p}}, {"text"});
  auto ds = src.GetDataset("train", false, 0, ShardInfo{});
  auto ex = ds->Next();
  ASSERT_TRUE(ex);
  EXPECT_EQ(ex->size(), 1u);
  EXPECT_EQ(std::get<std::string>(ex->at("text")), "x-0");

  TFExampleDataSource missing({{"train", p}}, {"text", "targets"});
  auto ds2 = missing.GetDataset("train", false, 0, ShardInfo{});
  const std::string msg = testing::ErrorOf([&] { ds2->Next(); });
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  EXPECT_NE(msg.find("record 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing feature 'targets'"), std::string::npos) << msg;
}

TEST_F(TFRecordTest, DataCrcCorruptionNamesFileAndOffset) {
  std::vector<std::string> recs = {
      SerializeTFExample({{"text", std::string("first")}}),
      SerializeTFExample({{"text", std::string("second")}})};
  const std::string p = Path("c.tfrecord");
  WriteTFRecordFile(p, recs);
  std::string raw = ReadRaw(p);
  // Flip a data byte of the second record, which starts at 16 + |rec0|.
  const size_t second = 16 + recs[0].size();
  raw[second + 12 + 3] ^= 0x01;
  WriteRaw(p, raw);
  TFRecordReader reader(p);
  std::string rec;
  ASSERT_TRUE(reader.Next(&rec));
  EXPECT_EQ(rec, recs[0]);
  const std::string msg = testing::ErrorOf([&] { reader.Next(&rec); });
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  EXPECT_NE(msg.find("byte offset " + std::to_string(second)),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("data CRC mismatch"), std::string::npos) << msg;
}

TEST_F(TFRecordTest, LengthCrcCorruptionDetected) {
  const std::string p = Path("l.tfrecord");
  WriteTFRecordFile(p, {"abc"});
  std::string raw = ReadRaw(p);
  raw[0] ^= 0x40;  // length byte
  WriteRaw(p, raw);
  EXPECT_ERROR_CONTAINS(ReadTFRecordFile(p), "byte offset 0");
  EXPECT_ERROR_CONTAINS(ReadTFRecordFile(p), "length CRC mismatch");
}

TEST_F(TFRecordTest, TruncatedFileDetected) {
  const std::string p = Path("t.tfrecord");
  WriteTFRecordFile(p, {"abcdef", "ghijkl"});
  const std::string raw = ReadRaw(p);  // 2 x 22 bytes
  ASSERT_EQ(raw.size(), 44u);
  WriteRaw(p, raw.substr(0, 22 + 12 + 3));  // second record's data cut
  EXPECT_ERROR_CONTAINS(ReadTFRecordFile(p), "truncated TFRecord at byte offset 22");
  WriteRaw(p, raw.substr(0, 22 + 5));  // header cut
  EXPECT_ERROR_CONTAINS(ReadTFRecordFile(p), "truncated TFRecord header at byte offset 22");
  WriteRaw(p, raw.substr(0, 44 - 1));  // footer cut
  EXPECT_ERROR_CONTAINS(ReadTFRecordFile(p), "data CRC missing");
  // A truncated gzip stream is an error too (never a silent short read).
  const std::string gz = Path("t.tfrecord.gz");
  std::vector<std::string> many;
  for (int i = 0; i < 200; ++i) many.push_back("record-" + std::to_string(i));
  WriteTFRecordFile(gz, many, /*gzip=*/true);
  const std::string graw = ReadRaw(gz);
  WriteRaw(gz, graw.substr(0, graw.size() / 2));
  EXPECT_ERROR_CONTAINS(ReadTFRecordFile(gz), gz);
}

TEST_F(TFRecordTest, Int64OverflowNamesFeature) {
  // Hand-build an int64_list holding 2^31 (does not fit int32).
  std::string packed;
  uint64_t v = uint64_t{1} << 31;
  while (v >= 0x80) { packed.push_back(char((v & 0x7f) | 0x80)); v >>= 7; }
  packed.push_back(char(v));
  std::string list = "\x0a" + std::string(1, char(packed.size())) + packed;
  std::string feature = "\x1a" + std::string(1, char(list.size())) + list;
  std::string entry = std::string("\x0a\x03" "big\x12", 6) +
                      std::string(1, char(feature.size())) + feature;
  std::string feats = "\x0a" + std::string(1, char(entry.size())) + entry;
  std::string ex = "\x0a" + std::string(1, char(feats.size())) + feats;
  const std::string p = Path("o.tfrecord");
  WriteTFRecordFile(p, {ex});
  TFExampleDataSource src({{"train", p}});
  auto ds = src.GetDataset("train", false, 0, ShardInfo{});
  const std::string msg = testing::ErrorOf([&] { ds->Next(); });
  EXPECT_NE(msg.find("feature 'big'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2147483648"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
  // Not requested -> never decoded.
  WriteTFRecordFile(p, {ex + SerializeTFExample({{"t", std::string("ok")}})});
  // (Concatenated Example messages merge, as in protobuf.)
  TFExampleDataSource only_t({{"train", p}}, {"t"});
  auto ds2 = only_t.GetDataset("train", false, 0, ShardInfo{});
  EXPECT_EQ(Collect(*ds2), (std::vector<Example>{{{"t", std::string("ok")}}}));
}

TEST_F(TFRecordTest, ShardsByFiles) {
  WriteTagged("s-0.tfrecord", "a", 2);
  WriteTagged("s-1.tfrecord", "b", 2);
  WriteTagged("s-2.tfrecord", "c", 2);
  TFExampleDataSource src({{"train", Path("s-*.tfrecord")}});
  EXPECT_EQ(src.ListShards("train").size(), 3u);
  // 3 files, 2 shards: shard 0 reads files 0 and 2, shard 1 reads file 1.
  auto s0 = src.GetDataset("train", false, 0, ShardInfo{0, 2});
  EXPECT_EQ(Texts(*s0), (std::vector<std::string>{"a-0", "a-1", "c-0", "c-1"}));
  auto s1 = src.GetDataset("train", false, 0, ShardInfo{1, 2});
  EXPECT_EQ(Texts(*s1), (std::vector<std::string>{"b-0", "b-1"}));
  // 4 shards > 3 files: example-level, every 4th record of the whole stream.
  auto e1 = src.GetDataset("train", false, 0, ShardInfo{1, 4});
  EXPECT_EQ(Texts(*e1), (std::vector<std::string>{"a-1", "c-1"}));
  // Shuffle permutes whole files, keeps records' order, same seed -> same.
  auto sh = src.GetDataset("train", true, 7, ShardInfo{});
  auto t1 = Texts(*sh);
  auto t2 = Texts(*src.GetDataset("train", true, 7, ShardInfo{}));
  EXPECT_EQ(t1, t2);
  ASSERT_EQ(t1.size(), 6u);
  for (size_t i = 0; i < 6; i += 2) {
    EXPECT_EQ(t1[i].substr(0, 2), t1[i + 1].substr(0, 2));
    EXPECT_EQ(t1[i].substr(1), "-0");
  }
  EXPECT_EQ(std::set<std::string>(t1.begin(), t1.end()).size(), 6u);
}

TEST_F(TFRecordTest, SourceErrors) {
  EXPECT_ERROR_CONTAINS(TFExampleDataSource({}), "split_to_filepattern is empty");
  TFExampleDataSource src({{"train", Path("none-*.tfrecord")}});
  EXPECT_ERROR_CONTAINS(src.GetDataset("validation", false, 0, ShardInfo{}),
                        "known splits: 'train'");
  EXPECT_ERROR_CONTAINS(src.GetDataset("train", false, 0, ShardInfo{}),
                        "matches no file");
  WriteTagged("x.tfrecord", "x", 1);
  TFExampleDataSource ok({{"train", Path("x.tfrecord")}});
  EXPECT_ERROR_CONTAINS(ok.GetDataset("train", false, 0, ShardInfo{2, 2}),
                        "invalid ShardInfo");
  EXPECT_ERROR_CONTAINS(TFRecordReader(Path("nope.tfrecord")), "cannot open");
}

}  // namespace
}  // namespace t5xx::seqio

namespace t5xx::seqio {
namespace {

// Issue 17: a FIFO (or directory) given as a data file is refused when it is
// opened, naming it, instead of blocking the reader for ever.
TEST_F(TFRecordTest, FifoAndDirectoryAreRefusedWithoutBlocking) {
  const std::string fifo = Path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(t5xx::testing::ErrorOf([&] { TFRecordReader r(fifo); }),
            fifo + ": cannot open TFRecord file: it is not a regular file (a FIFO, socket or "
                   "device)");
  EXPECT_EQ(t5xx::testing::ErrorOf([&] { LineReader r(fifo); }),
            "cannot read '" + fifo + "': it is not a regular file (a FIFO, socket or device)");
  EXPECT_EQ(t5xx::testing::ErrorOf([&] { LineReader r(dir_); }),
            "cannot read '" + dir_ + "': it is a directory");
}

// A header whose length (with a matching CRC) exceeds protobuf's 2 GiB is
// corruption, refused before any data is read for it.
TEST_F(TFRecordTest, LengthOverTwoGiBIsRefused) {
  const uint64_t length = (uint64_t{1} << 31) + 1;
  char header[12];
  for (int i = 0; i < 8; ++i) header[i] = static_cast<char>(length >> (8 * i));
  const uint32_t crc = MaskedCrc32c(header, 8);
  for (int i = 0; i < 4; ++i) header[8 + i] = static_cast<char>(crc >> (8 * i));
  std::ofstream(Path("big.tfrecord"), std::ios::binary) << std::string(header, 12) << "x";
  const std::string message =
      t5xx::testing::ErrorOf([&] { ReadTFRecordFile(Path("big.tfrecord")); });
  EXPECT_EQ(message, Path("big.tfrecord") +
                         ": corrupt TFRecord at byte offset 0 (record 0): it declares 2147483649 "
                         "data bytes, more than a protobuf message can have (2 GiB)");
}

}  // namespace
}  // namespace t5xx::seqio
