// The record-file dataset's saved position seeks (issue 35): the state
// holds the byte where the next record starts, a restore seeks there (plain
// files; gzip decompresses up to it) instead of reading the file again, and
// a file that changed under a saved position is named.
#include "t5xx/data/sources/record_file_dataset.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/sources/tfrecord_file.h"
#include "t5xx/data/sources/tfrecord_source.h"
#include "t5xx/util/files/file_utils.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class RecordFileDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("t5xx_rfd_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// Every line is an example holding its text.
DatasetPtr Lines(const std::string& path) {
  FileReadPlan plan;
  plan.files = {path};
  return ReadLinesDataset(plan, [](const std::string&, int64_t, const std::string& line) {
    return std::optional<Example>(Example{{"t", line}});
  });
}

std::vector<std::string> Texts(Dataset& ds) {
  std::vector<std::string> out;
  for (const Example& ex : Collect(ds)) out.push_back(std::get<std::string>(ex.at("t")));
  return out;
}

TEST_F(RecordFileDatasetTest, LinePositionsSeekToTheirByte) {
  const std::string p = Path("a.txt");
  std::ofstream(p) << "one\ntwo\r\nthree\nfour";
  DatasetPtr a = Lines(p);
  Collect(*a, 2);
  const json saved = a->SaveState();
  // "one\n" (4 bytes) + "two\r\n" (5): the next line starts at byte 9.
  EXPECT_EQ(saved, json::parse(R"({"file_index": 0, "line": 2, "offset": 9, "position": 2})"));
  DatasetPtr b = Lines(p);
  b->RestoreState(saved);
  EXPECT_EQ(Texts(*b), (std::vector<std::string>{"three", "four"}));
  // The same bytes gzip-compressed: the offset counts decompressed bytes.
  const std::string gz = Path("a.txt.gz");
  {
    GzipWriter w(gz);
    w.Write("one\ntwo\r\nthree\nfour");
    w.Close();
  }
  DatasetPtr c = Lines(gz);
  c->RestoreState(saved);
  EXPECT_EQ(Texts(*c), (std::vector<std::string>{"three", "four"}));
  // A file that changed under the position is named, not read from a
  // wrong place.
  std::ofstream(p) << "one\ntwo!!\nthree\n";
  EXPECT_ERROR_CONTAINS(Lines(p)->RestoreState(saved),
                        "a.txt: saved position is line 2, ending at byte 9, but no line ends "
                        "there (did the file change?)");
  std::ofstream(p) << "one\n";
  EXPECT_ERROR_CONTAINS(Lines(p)->RestoreState(saved),
                        "a.txt: saved position is line 2, ending at byte 9, but the file is "
                        "shorter (did the file change?)");
  // Fewer bytes than lines (each takes at least its newline): damaged.
  EXPECT_ERROR_CONTAINS(
      Lines(p)->RestoreState(
          json::parse(R"({"file_index": 0, "line": 128, "offset": 9, "position": 128})")),
      "a.txt: saved position is line 128 at byte 9, fewer bytes than records; the state is "
      "damaged");
  // A position without "offset" (saved by an older build) reads the lines
  // again.
  std::ofstream(p) << "one\ntwo\r\nthree\nfour";
  json old = saved;
  old.erase("offset");
  DatasetPtr d = Lines(p);
  d->RestoreState(old);
  EXPECT_EQ(Texts(*d), (std::vector<std::string>{"three", "four"}));
}

DatasetPtr Records(const std::string& path) {
  FileReadPlan plan;
  plan.files = {path};
  RecordFileFormat format;
  format.reader_name = "TFRecord reader";
  format.unit = "record";
  format.open = OpenTFRecordRecordReader;
  format.parse = [](const std::string&, int64_t, const std::string& record) {
    return std::optional<Example>(Example{{"t", record}});
  };
  return ReadRecordFiles(plan, format);
}

TEST_F(RecordFileDatasetTest, TFRecordPositionsSeekToTheirFrame) {
  for (bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "gzip" : "plain");
    const std::string p = Path(gzip ? "r.tfrecord.gz" : "r.tfrecord");
    WriteTFRecordFile(p, {"ab", "cde", "f", "ghij"}, gzip);
    DatasetPtr a = Records(p);
    Collect(*a, 2);
    const json saved = a->SaveState();
    // A frame is 8 (length) + 4 (its CRC) + data + 4 (data CRC) bytes:
    // 18 + 19 = 37 before the third record.
    EXPECT_EQ(saved,
              json::parse(R"({"file_index": 0, "record": 2, "offset": 37, "position": 2})"));
    DatasetPtr b = Records(p);
    b->RestoreState(saved);
    EXPECT_EQ(Texts(*b), (std::vector<std::string>{"f", "ghij"}));
  }
  const std::string p = Path("r.tfrecord");
  WriteTFRecordFile(p, {"ab"});
  EXPECT_ERROR_CONTAINS(Records(p)->RestoreState(json::parse(
                            R"({"file_index": 0, "record": 2, "offset": 37, "position": 2})")),
                        "r.tfrecord: saved position is record 2 at byte offset 37, but the file "
                        "is shorter (did the file change?)");
}

}  // namespace
}  // namespace t5xx::seqio
