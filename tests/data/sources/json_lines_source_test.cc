// Tests for JsonLinesDataSource, TextLineDataSource and file_utils.
//
// Expected values are derived by hand from the files each test writes and
// seqio's rules (comments say how).
#include "t5xx/data/sources/json_lines_source.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "t5xx/data/sources/text_line_source.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"

namespace t5xx::seqio {
namespace {

class JsonLinesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/t5xx_jsonl_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  std::string WritePlain(const std::string& name, const std::string& body) {
    const std::string p = dir_ + "/" + name;
    std::ofstream(p, std::ios::binary) << body;
    return p;
  }
  std::string WriteGz(const std::string& name, const std::string& body) {
    const std::string p = dir_ + "/" + name;
    gzFile f = gzopen(p.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    gzwrite(f, body.data(), static_cast<unsigned>(body.size()));
    gzclose(f);
    return p;
  }
  // Writes file `name` with examples {"text": "<tag>-<j>"} for j < n.
  std::string WriteTagged(const std::string& name, const std::string& tag,
                          int n) {
    std::string body;
    for (int j = 0; j < n; ++j) {
      body += "{\"text\": \"" + tag + "-" + std::to_string(j) +
              "\", \"url\": \"u\", \"timestamp\": \"t\"}\n";
    }
    return WriteGz(name, body);
  }
  static std::vector<std::string> Texts(Dataset& ds) {
    std::vector<std::string> out;
    while (auto ex = ds.Next()) out.push_back(std::get<std::string>(ex->at("text")));
    return out;
  }
  static std::string ErrorOf(const std::function<void()>& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.what();
    }
    return "<no t5xx::Error thrown>";
  }
  std::string dir_;
};

TEST_F(JsonLinesTest, ReadsPlainFileWithC4Fields) {
  const std::string p = WritePlain(
      "a.jsonl",
      "{\"text\": \"Hello\\nworld\", \"url\": \"http://x/1\", \"timestamp\": "
      "\"2019-01-01T00:00:00Z\", \"n\": 5}\n"
      "\n"  // blank lines are skipped
      "{\"text\": \"caf\\u00e9\", \"url\": \"http://x/2\", \"timestamp\": \"t2\"}\n");
  JsonLinesDataSource src({{"train", p}});
  EXPECT_EQ(src.splits(), std::vector<std::string>{"train"});
  auto ds = src.GetDataset("train", false, 0, ShardInfo{});
  auto e1 = ds->Next();
  ASSERT_TRUE(e1);
  // All string fields, the number "n" is skipped.
  EXPECT_EQ(e1->size(), 3u);
  EXPECT_EQ(std::get<std::string>(e1->at("text")), "Hello\nworld");
  EXPECT_EQ(std::get<std::string>(e1->at("url")), "http://x/1");
  EXPECT_EQ(std::get<std::string>(e1->at("timestamp")), "2019-01-01T00:00:00Z");
  auto e2 = ds->Next();
  ASSERT_TRUE(e2);
  EXPECT_EQ(std::get<std::string>(e2->at("text")), "caf\xC3\xA9");  // é in UTF-8
  EXPECT_FALSE(ds->Next());
}

TEST_F(JsonLinesTest, ReadsGzipFilesInSortedOrderAndSelectsFields) {
  // Written out of order: glob results are sorted, so b-0 < b-1 < b-2.
  WriteTagged("part-2.json.gz", "c", 1);
  WriteTagged("part-0.json.gz", "a", 2);
  WriteTagged("part-1.json.gz", "b", 1);
  JsonLinesDataSource src({{"train", dir_ + "/part-*.json.gz"}}, {"text"});
  EXPECT_EQ(src.ListShards("train").size(), 3u);
  auto ds = src.GetDataset("train", false, 0, ShardInfo{});
  auto first = ds->Next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->size(), 1u);  // only the requested field
  std::vector<std::string> texts = {std::get<std::string>(first->at("text"))};
  for (auto& t : Texts(*ds)) texts.push_back(t);
  EXPECT_EQ(texts, (std::vector<std::string>{"a-0", "a-1", "b-0", "c-0"}));
}

TEST_F(JsonLinesTest, FileLevelShardingWhenEnoughFiles) {
  for (int i = 0; i < 4; ++i) {
    WriteTagged("f" + std::to_string(i) + ".json.gz", "f" + std::to_string(i), 2);
  }
  JsonLinesDataSource src({{"train", dir_ + "/f*.json.gz"}});
  // 4 files >= 2 shards: shard 1 reads files 1 and 3 (i % 2 == 1).
  auto ds = src.GetDataset("train", false, 0, ShardInfo{1, 2});
  EXPECT_EQ(Texts(*ds),
            (std::vector<std::string>{"f1-0", "f1-1", "f3-0", "f3-1"}));
  // 4 files, 4 shards: shard 2 reads only file 2.
  auto ds2 = src.GetDataset("train", false, 0, ShardInfo{2, 4});
  EXPECT_EQ(Texts(*ds2), (std::vector<std::string>{"f2-0", "f2-1"}));
}

TEST_F(JsonLinesTest, ExampleLevelShardingWhenTooFewFiles) {
  WriteTagged("g0.json.gz", "x", 2);  // stream positions 0, 1
  WriteTagged("g1.json.gz", "y", 3);  // stream positions 2, 3, 4
  JsonLinesDataSource src({{"train", dir_ + "/g*.json.gz"}});
  // 2 files < 3 shards: every 3rd example starting at index 0: positions 0, 3.
  auto ds = src.GetDataset("train", false, 0, ShardInfo{0, 3});
  EXPECT_EQ(Texts(*ds), (std::vector<std::string>{"x-0", "y-1"}));
  // index 2: positions 2 only (5 is past the end).
  auto ds2 = src.GetDataset("train", false, 0, ShardInfo{2, 3});
  EXPECT_EQ(Texts(*ds2), (std::vector<std::string>{"y-0"}));
}

TEST_F(JsonLinesTest, ShuffleIsDeterministicPermutationOfFiles) {
  std::vector<std::string> sorted;
  for (int i = 0; i < 8; ++i) {
    WriteTagged("s" + std::to_string(i) + ".json.gz", "s" + std::to_string(i), 1);
    sorted.push_back("s" + std::to_string(i) + "-0");
  }
  JsonLinesDataSource src({{"train", dir_ + "/s*.json.gz"}});
  auto unshuffled = src.GetDataset("train", false, 123, ShardInfo{});
  EXPECT_EQ(Texts(*unshuffled), sorted);
  auto a = src.GetDataset("train", true, 7, ShardInfo{});
  auto b = src.GetDataset("train", true, 7, ShardInfo{});
  const auto ta = Texts(*a);
  EXPECT_EQ(ta, Texts(*b));
  EXPECT_EQ(std::set<std::string>(ta.begin(), ta.end()),
            std::set<std::string>(sorted.begin(), sorted.end()));
  // 8! orders: among a few seeds, the order must vary.
  std::set<std::vector<std::string>> orders;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    auto d = src.GetDataset("train", true, seed, ShardInfo{});
    orders.insert(Texts(*d));
  }
  EXPECT_GT(orders.size(), 1u);
}

TEST_F(JsonLinesTest, MalformedLineErrorNamesFileAndLine) {
  const std::string p = WritePlain(
      "bad.jsonl", "{\"text\": \"ok\"}\n{\"text\": \"unterminated\n");
  JsonLinesDataSource src({{"train", p}});
  auto ds = src.GetDataset("train", false, 0, ShardInfo{});
  ASSERT_TRUE(ds->Next());
  const std::string msg = ErrorOf([&] { ds->Next(); });
  EXPECT_NE(msg.find(p + ":2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("malformed JSON"), std::string::npos) << msg;

  const std::string q = WritePlain("arr.jsonl", "[1, 2]\n");
  JsonLinesDataSource src2({{"train", q}});
  auto ds2 = src2.GetDataset("train", false, 0, ShardInfo{});
  const std::string msg2 = ErrorOf([&] { ds2->Next(); });
  EXPECT_NE(msg2.find(q + ":1:"), std::string::npos) << msg2;
}

TEST_F(JsonLinesTest, MissingRequestedFieldNamesFileLineAndField) {
  const std::string p = WritePlain(
      "m.jsonl", "{\"text\": \"a\", \"url\": \"u\"}\n{\"text\": \"b\"}\n");
  JsonLinesDataSource src({{"validation", p}}, {"text", "url"});
  auto ds = src.GetDataset("validation", false, 0, ShardInfo{});
  ASSERT_TRUE(ds->Next());
  const std::string msg = ErrorOf([&] { ds->Next(); });
  EXPECT_NE(msg.find(p + ":2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'url'"), std::string::npos) << msg;
}

TEST_F(JsonLinesTest, PatternMatchingNothingAndUnknownSplit) {
  const std::string pattern = dir_ + "/nothing-*.json.gz";
  JsonLinesDataSource src({{"train", pattern}});
  const std::string msg =
      ErrorOf([&] { src.GetDataset("train", false, 0, ShardInfo{}); });
  EXPECT_NE(msg.find(pattern), std::string::npos) << msg;
  EXPECT_NE(msg.find("'train'"), std::string::npos) << msg;

  const std::string msg2 =
      ErrorOf([&] { src.GetDataset("test", false, 0, ShardInfo{}); });
  EXPECT_NE(msg2.find("'test'"), std::string::npos) << msg2;
  EXPECT_NE(msg2.find("known splits: 'train'"), std::string::npos) << msg2;
}

TEST_F(JsonLinesTest, InvalidShardInfoIsRejected) {
  const std::string p = WritePlain("a.jsonl", "{\"text\": \"a\"}\n");
  JsonLinesDataSource src({{"train", p}});
  EXPECT_THROW(src.GetDataset("train", false, 0, ShardInfo{2, 2}), Error);
  EXPECT_THROW(src.GetDataset("train", false, 0, ShardInfo{0, 0}), Error);
}

TEST_F(JsonLinesTest, TruncatedGzipIsAnError) {
  std::string body;
  for (int i = 0; i < 2000; ++i) body += "{\"text\": \"line " + std::to_string(i) + "\"}\n";
  const std::string p = WriteGz("t.json.gz", body);
  // Keep only the first half of the compressed bytes.
  std::ifstream in(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  in.close();
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      << bytes.substr(0, bytes.size() / 2);
  JsonLinesDataSource src({{"train", p}});
  auto ds = src.GetDataset("train", false, 0, ShardInfo{});
  EXPECT_THROW(
      {
        while (ds->Next()) {
        }
      },
      Error);
}

TEST_F(JsonLinesTest, TextLineSourceYieldsEveryLine) {
  const std::string p = WritePlain("t.txt", "header\nfirst\n\nthird\n");
  TextLineDataSource src({{"train", p}}, /*skip_header_lines=*/1);
  auto ds = src.GetDataset("train", false, 0, ShardInfo{});
  // Header skipped; the empty line is an example (seqio keeps it).
  EXPECT_EQ(Texts(*ds), (std::vector<std::string>{"first", "", "third"}));
  // Example-level sharding (1 file < 2 shards): positions 1 -> "".
  auto ds2 = src.GetDataset("train", false, 0, ShardInfo{1, 2});
  EXPECT_EQ(Texts(*ds2), (std::vector<std::string>{""}));
}

TEST_F(JsonLinesTest, SourcesPassBytesThatAreNotUtf8Through) {
  // FF and FE are not UTF-8: every source keeps them as they are (util/utf8.h).
  const std::string bad = "bad \xff\xfe byte line";
  // Text lines: also a CRLF blank line ("" once "\r\n" is cut) and a line
  // of one space, both examples.
  const std::string t = WritePlain("bytes.txt", bad + "\r\n\r\n \n");
  TextLineDataSource lines({{"train", t}});
  auto ds = lines.GetDataset("train", false, 0, ShardInfo{});
  EXPECT_EQ(Texts(*ds), (std::vector<std::string>{bad, "", " "}));
  // JSON lines: the bytes inside a JSON string, and beside an escaped é.
  const std::string j = WritePlain("bytes.jsonl", "{\"text\": \"" + bad + " \\u00e9\"}\n");
  JsonLinesDataSource json_lines({{"train", j}});
  auto ds2 = json_lines.GetDataset("train", false, 0, ShardInfo{});
  EXPECT_EQ(Texts(*ds2), (std::vector<std::string>{bad + " \xC3\xA9"}));
  // Outside a string such a byte is not JSON: the error names file:line and
  // shows the byte as \xff.
  const std::string k = WritePlain("outside.jsonl", "{\"text\": \"a\"}\n{\"text\": 1\xff}\n");
  JsonLinesDataSource json_lines2({{"train", k}});
  auto ds3 = json_lines2.GetDataset("train", false, 0, ShardInfo{});
  ASSERT_TRUE(ds3->Next());
  const std::string msg = ErrorOf([&] { ds3->Next(); });
  EXPECT_NE(msg.find(k + ":2: malformed JSON line"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\\xff"), std::string::npos) << msg;
}

TEST_F(JsonLinesTest, TextLinesKeepNulBytes) {
  // "a\0b\nc\n" is two lines, "a\0b" (3 bytes) and "c", plain or gzip. (The
  // reader once cut a line at its NUL and joined the rest to the next: "ac".)
  const std::string body("a\0b\nc\n", 6);
  for (const std::string& p : {WritePlain("nul.txt", body), WriteGz("nul.txt.gz", body)}) {
    TextLineDataSource src({{"train", p}});
    auto ds = src.GetDataset("train", false, 0, ShardInfo{});
    EXPECT_EQ(Texts(*ds), (std::vector<std::string>{std::string("a\0b", 3), "c"})) << p;
  }
}

TEST_F(JsonLinesTest, GlobSortsAndDeduplicates) {
  WritePlain("b.txt", "");
  WritePlain("a.txt", "");
  const auto files = GlobAll({dir_ + "/*.txt", dir_ + "/a.txt"});
  EXPECT_EQ(files, (std::vector<std::string>{dir_ + "/a.txt", dir_ + "/b.txt"}));
  EXPECT_TRUE(Glob(dir_ + "/zzz*").empty());
}

TEST_F(JsonLinesTest, GzipWriterRoundTripsLongLines) {
  const std::string p = dir_ + "/w.gz";
  const std::string long_line(20000, 'x');  // longer than the read buffer
  {
    GzipWriter w(p);
    w.WriteLine("one");
    w.WriteLine(long_line);
    EXPECT_FALSE(FileExists(p));  // only the temporary exists before Close
    w.Close();
  }
  LineReader r(p);
  std::string line;
  ASSERT_TRUE(r.Next(&line));
  EXPECT_EQ(line, "one");
  ASSERT_TRUE(r.Next(&line));
  EXPECT_EQ(line, long_line);
  EXPECT_EQ(r.line_number(), 2);
  EXPECT_FALSE(r.Next(&line));
}

// Issue 17: ReadFileToString holds at most `max_bytes` (counted after gzip
// decompression, each line plus its '\n'). Hand arithmetic: "ab\ncd\n" is
// 6 bytes, so a limit of 6 reads it and 5 refuses it; a gzip stream of
// 64 MiB of 'x' with no newline (about 64 KiB compressed) is refused at a
// 1 MiB limit, before the line is held whole.
TEST_F(JsonLinesTest, ReadFileToStringRefusesContentsOverTheLimit) {
  const std::string plain = WritePlain("small.txt", "ab\ncd\n");
  EXPECT_EQ(ReadFileToString(plain, 6), "ab\ncd\n");
  try {
    ReadFileToString(plain, 5);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot read '" + plain + "'"), std::string::npos) << m;
    EXPECT_NE(m.find("exceed 5 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("line 2"), std::string::npos) << m;
  }
  const std::string bomb = WriteGz("bomb.gz", std::string(size_t{64} << 20, 'x'));
  try {
    ReadFileToString(bomb, size_t{1} << 20);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(bomb + ":1: a line longer than 1048576 bytes (the limit)"), std::string::npos)
        << m;
  }
  // Many short lines are counted together, not line by line.
  std::string lines;
  for (int i = 0; i < 1000; ++i) lines += "0123456789\n";  // 11,000 bytes
  const std::string many = WriteGz("many.gz", lines);
  EXPECT_EQ(ReadFileToString(many, 11000).size(), 11000u);
  EXPECT_THROW(ReadFileToString(many, 10999), Error);
  EXPECT_EQ(kMaxWholeFileBytes, size_t{1} << 30);
}

}  // namespace
}  // namespace t5xx::seqio
