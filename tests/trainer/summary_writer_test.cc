// t5xx::trainer::SummaryWriter: byte-exact Event encodings and TFRecord
// frames against vectors made with tensorboard's own protos and CRC, and a
// round trip through tensorboard's EventAccumulator (read_events.py).
#include "t5xx/trainer/summary_writer.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "t5xx/util/crc32c.h"
#include "test_util.h"

namespace t5xx::trainer {
namespace {

namespace fs = std::filesystem;

std::string Hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

double Now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A fresh, empty directory for one test, removed afterwards.
class SummaryWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("t5xx_summary_writer_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The records of a TFRecord file, each frame's two CRCs checked.
std::vector<std::string> ReadRecords(const std::string& path) {
  const std::string blob = ReadFile(path);
  std::vector<std::string> records;
  size_t pos = 0;
  while (pos < blob.size()) {
    EXPECT_LE(pos + 12, blob.size());
    uint64_t length = 0;
    for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(blob[pos + i]);
    auto u32 = [&](size_t at) {
      uint32_t v = 0;
      for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(blob[at + i]);
      return v;
    };
    EXPECT_EQ(u32(pos + 8), MaskedCrc32c(blob.data() + pos, 8));
    EXPECT_LE(pos + 16 + length, blob.size());
    records.push_back(blob.substr(pos + 12, length));
    EXPECT_EQ(u32(pos + 12 + length), MaskedCrc32c(records.back().data(), length));
    pos += 16 + length;
  }
  return records;
}

// Runs read_events.py on dir with the test venv's python. Returns its JSON,
// or null after GTEST_SKIP when tensorboard is not installed (exit 77).
nlohmann::json ReadWithTensorBoard(const fs::path& dir) {
  const std::string err = dir.string() + ".stderr";
  const std::string cmd = std::string("'") + T5XX_PYTHON3 + "' '" + T5XX_READ_EVENTS_PY +
                          "' '" + dir.string() + "' 2>'" + err + "'";
  std::FILE* pipe = popen(cmd.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << cmd;
  if (pipe == nullptr) return nullptr;
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  const std::string stderr_text = ReadFile(err);
  fs::remove(err);
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (rc == 77) {
    return nullptr;
  }
  EXPECT_EQ(rc, 0) << cmd << "\nstdout: " << out << "\nstderr: " << stderr_text;
  if (rc != 0) return nullptr;
  return nlohmann::json::parse(out);
}

// ---- encodings: vectors from tensorboard 2.21's protos (pip install
// tensorboard; Python 3.11), e.g. for the scalar record:
//   from tensorboard.compat.proto import event_pb2, summary_pb2
//   from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c
//   d = event_pb2.Event(wall_time=1.5, step=7, summary=summary_pb2.Summary(
//         value=[summary_pb2.Summary.Value(tag="loss", simple_value=2.5)])
//       ).SerializeToString()
//   h = struct.pack("<Q", len(d))
//   rec = h + struct.pack("<I", masked_crc32c(h)) + d + struct.pack("<I", masked_crc32c(d))
// and text events from tensorboard.plugins.text.summary_v2.text_pb(tag, text).

TEST(SummaryEncodingTest, ScalarRecordMatchesTensorBoard) {
  const std::string event = ScalarEvent(1.5, 7, "loss", 2.5f);
  EXPECT_EQ(Hex(event), "09000000000000f83f10072a0d0a0b0a046c6f73731500002040");
  // Frame: length 26 | masked CRC 0x2dd89b12 | data | masked CRC 0xb1dd4178.
  EXPECT_EQ(Hex(TFRecordFrame(event)),
            "1a00000000000000"
            "129bd82d"
            "09000000000000f83f10072a0d0a0b0a046c6f73731500002040"
            "7841ddb1");
}

TEST(SummaryEncodingTest, CrcOfKnownStrings) {
  // CRC-32C check value (RFC 3720 B.4 / the Castagnoli catalogue).
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  // masked_crc32c(b"123456789") with tensorboard's implementation (above).
  EXPECT_EQ(MaskedCrc32c("123456789", 9),
            ((0xE3069283u >> 15) | (0xE3069283u << 17)) + 0xa282ead8u);
}

TEST(SummaryEncodingTest, FileVersionEventMatchesTensorBoard) {
  // event_pb2.Event(wall_time=1700000000.0, file_version="brain.Event:2")
  EXPECT_EQ(Hex(FileVersionEvent(1700000000.0)),
            "0900000040fc54d9411a0d627261696e2e4576656e743a32");
}

TEST(SummaryEncodingTest, NegativeStepAndZeroValue) {
  // A zero simple_value is still written (it is a oneof member); a negative
  // int64 step takes 10 varint bytes.
  EXPECT_EQ(Hex(ScalarEvent(1.5, -1, "timing/steps_per_second", 0.0f)),
            "09000000000000f83f10ffffffffffffffffff012a200a1e0a1774696d696e672f"
            "73746570735f7065725f7365636f6e641500000000");
}

TEST(SummaryEncodingTest, TextEventMatchesTextPb) {
  // Event(wall_time=2.0, step=3, summary=text_pb("config", "a = 1"))
  EXPECT_EQ(Hex(TextEvent(2.0, 3, "config", "a = 1")),
            "09000000000000004010032a210a1f0a06636f6e666967420b08071200420561203d20314a08"
            "0a060a0474657874");
  // Event(wall_time=1.5, step=3, summary=text_pb("config", ""))
  EXPECT_EQ(Hex(TextEvent(1.5, 3, "config", "")),
            "09000000000000f83f10032a1c0a1a0a06636f6e66696742060807120042004a080a060a04"
            "74657874");
}

TEST(SummaryEncodingTest, InvalidUtf8IsWrittenAsReplacementCharacters) {
  // Tags and texts are UTF-8 in TensorBoard's protos: "bad \xff\xfe" is
  // written as "bad " + two U+FFFD (EF BF BD; FF and FE each start nothing),
  // so the event equals the one for the replaced text, byte for byte.
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(TextEvent(2.0, 3, "config", "bad \xff\xfe"),
            TextEvent(2.0, 3, "config", "bad " + fffd + fffd));
  EXPECT_EQ(TextEvent(2.0, 3, "conf\xe4\xbd", "a"), TextEvent(2.0, 3, "conf" + fffd, "a"));
  EXPECT_EQ(ScalarEvent(1.5, 7, "lo\xc0ss", 2.5f), ScalarEvent(1.5, 7, "lo" + fffd + "ss", 2.5f));
}

// ---- the writer --------------------------------------------------------------

TEST_F(SummaryWriterTest, TensorBoardReadsTagsAndTextsThatWereNotUtf8) {
  // A task name or gin string with bytes that are not UTF-8 must still give
  // a file tensorboard parses (its protos reject such strings); it reads
  // U+FFFD in their place.
  {
    SummaryWriter writer((dir_ / "train").string());
    writer.Text("config", "name = 'bad \xff\xfe byte line'", 0);
    writer.Scalar("loss/\xff", 1.5f, 0);
  }
  const nlohmann::json train = ReadWithTensorBoard(dir_ / "train");
  if (train.is_null()) GTEST_SKIP() << "tensorboard is not installed for " << T5XX_PYTHON3;
  EXPECT_EQ(train["canonical"], true);
  EXPECT_EQ(train["text_pb_equal"], true);
  EXPECT_EQ(train["texts"]["config"][0][1].get<std::string>(),
            "name = 'bad \xEF\xBF\xBD\xEF\xBF\xBD byte line'");
  ASSERT_TRUE(train["scalars"].contains("loss/\xEF\xBF\xBD")) << train["scalars"].dump();
  EXPECT_EQ(train["scalars"]["loss/\xEF\xBF\xBD"][0][1].get<double>(), 1.5);
}

TEST_F(SummaryWriterTest, TensorBoardReadsScalarsAndText) {
  const std::string config =
      "# Parameters for train:\n"
      "# ==============================\n"
      "train.eval_period = 1000\n"
      "MODEL_DIR = '/tmp/run'  # \xc2\xab caf\xc3\xa9 \xc2\xbb\n";
  const std::vector<int64_t> steps = {0, 100, 200};
  const std::vector<std::pair<std::string, std::vector<float>>> scalars = {
      {"loss", {9.5f, 7.25f, 4.6875f}},
      {"accuracy", {1.0f / 3.0f, 0.5f, 0.0f}},
      {"timing/steps_per_second", {12.345678f, 1e-30f, 3.4028235e38f}},
      {"learning_rate", {0.01f, 0.01f, 0.0070710676f}},
  };
  const double t0 = Now();
  std::string path;
  {
    SummaryWriter writer((dir_ / "train").string());
    path = writer.path();
    // t5x: the config text and the init time at the start step, then metrics.
    writer.Text("config", config, 0);
    writer.Scalar("timing/init_or_restore_seconds", -2.5f, 0);
    for (size_t i = 0; i < steps.size(); ++i) {
      for (const auto& [tag, values] : scalars) writer.Scalar(tag, values[i], steps[i]);
    }
    SummaryWriter eval((dir_ / "training_eval" / "c4_demo").string());
    eval.Scalar("loss", 4.75f, 200);
  }  // flushed by the destructors
  const double t1 = Now();

  const std::string name = fs::path(path).filename().string();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_EQ(name.rfind("events.out.tfevents.", 0), 0u) << name;
  EXPECT_NE(name.find("." + std::string(host) + "." + std::to_string(getpid()) + "."),
            std::string::npos)
      << name;
  EXPECT_EQ(name.substr(name.size() - 3), ".v2") << name;
  EXPECT_EQ(fs::path(path).parent_path(), dir_ / "train");
  EXPECT_EQ(ReadRecords(path).size(), 1u + 1 + 1 + 3 * 4);

  const nlohmann::json train = ReadWithTensorBoard(dir_ / "train");
  if (train.is_null()) GTEST_SKIP() << "tensorboard is not installed for " << T5XX_PYTHON3;
  EXPECT_EQ(train["files"], nlohmann::json::array({name}));
  EXPECT_EQ(train["records"], 15);
  EXPECT_EQ(train["crc_ok"], true);
  EXPECT_EQ(train["canonical"], true);
  EXPECT_EQ(train["text_pb_equal"], true);
  EXPECT_EQ(train["file_version"], nlohmann::json::array({"brain.Event:2"}));

  ASSERT_EQ(train["scalars"].size(), 5u) << train["scalars"].dump();
  double last_wall_time = t0 - 1;
  for (const auto& [tag, values] : scalars) {
    const auto& events = train["scalars"][tag];
    ASSERT_EQ(events.size(), steps.size()) << tag;
    for (size_t i = 0; i < steps.size(); ++i) {
      EXPECT_EQ(events[i][0].get<int64_t>(), steps[i]) << tag;
      // Stored as float32 and widened: equal to the float written.
      EXPECT_EQ(static_cast<float>(events[i][1].get<double>()), values[i]) << tag << " " << i;
      const double wall_time = events[i][2].get<double>();
      EXPECT_GE(wall_time, t0 - 1e-3) << tag;
      EXPECT_LE(wall_time, t1 + 1e-3) << tag;
      if (tag == "loss") {
        EXPECT_GE(wall_time, last_wall_time);
        last_wall_time = wall_time;
      }
    }
  }
  const auto& init = train["scalars"]["timing/init_or_restore_seconds"];
  ASSERT_EQ(init.size(), 1u);
  EXPECT_EQ(init[0][0], 0);
  EXPECT_EQ(init[0][1].get<double>(), -2.5);

  ASSERT_EQ(train["texts"].size(), 1u) << train["texts"].dump();
  const auto& text = train["texts"]["config"];
  ASSERT_EQ(text.size(), 1u);
  EXPECT_EQ(text[0][0], 0);
  EXPECT_EQ(text[0][1].get<std::string>(), config);
  EXPECT_EQ(text[0][2], "text");

  const nlohmann::json eval = ReadWithTensorBoard(dir_ / "training_eval" / "c4_demo");
  ASSERT_FALSE(eval.is_null());
  EXPECT_EQ(eval["records"], 2);
  EXPECT_EQ(eval["crc_ok"], true);
  EXPECT_EQ(eval["scalars"]["loss"], nlohmann::json::parse("[[200, 4.75, " +
                                                           eval["scalars"]["loss"][0][2].dump() +
                                                           "]]"));
  EXPECT_TRUE(eval["texts"].empty());
}

TEST_F(SummaryWriterTest, FileVersionFirstAndFlushedAtOnce) {
  const double t0 = Now();
  SummaryWriter writer(dir_.string());
  const std::vector<std::string> records = ReadRecords(writer.path());
  ASSERT_EQ(records.size(), 1u);
  // {wall_time = 1 (fixed64 double), file_version = 3}
  ASSERT_EQ(records[0].size(), 9u + 15u);
  EXPECT_EQ(records[0][0], '\x09');
  double wall_time;
  std::memcpy(&wall_time, records[0].data() + 1, 8);
  EXPECT_GE(wall_time, t0 - 1e-3);
  EXPECT_LE(wall_time, Now() + 1e-3);
  EXPECT_EQ(records[0].substr(9), std::string("\x1a\x0d") + "brain.Event:2");
}

TEST_F(SummaryWriterTest, BuffersUpToTenEventsThenFlushes) {
  SummaryWriter writer(dir_.string());
  const auto size0 = fs::file_size(writer.path());
  for (int i = 0; i < 9; ++i) writer.Scalar("loss", 1.0f, i);
  EXPECT_EQ(fs::file_size(writer.path()), size0);  // still in the buffer
  writer.Scalar("loss", 1.0f, 9);                   // the 10th: written out
  EXPECT_EQ(ReadRecords(writer.path()).size(), 11u);
  writer.Text("config", "x", 10);
  EXPECT_EQ(ReadRecords(writer.path()).size(), 11u);
  writer.Flush();
  EXPECT_EQ(ReadRecords(writer.path()).size(), 12u);
}

TEST_F(SummaryWriterTest, TwoWritersSameDirectoryGetTwoFiles) {
  SummaryWriter a(dir_.string());
  SummaryWriter b(dir_.string());
  EXPECT_NE(a.path(), b.path());
  EXPECT_EQ(a.log_dir(), dir_.string());
  a.Scalar("loss", 1.0f, 1);
  b.Scalar("loss", 2.0f, 1);
  a.Flush();
  b.Flush();
  EXPECT_EQ(ReadRecords(a.path()).size(), 2u);
  EXPECT_EQ(ReadRecords(b.path()).size(), 2u);
}

TEST_F(SummaryWriterTest, ErrorsNameThePath) {
  const fs::path plain = dir_ / "plain_file";
  std::ofstream(plain) << "x";
  const std::string bad_dir = (plain / "train").string();
  EXPECT_ERROR_CONTAINS(SummaryWriter{bad_dir},
                        "cannot create the summary directory " + bad_dir);
  if (fs::is_directory("/proc/self")) {
    // procfs exists but accepts no new files, even for root.
    EXPECT_ERROR_CONTAINS(SummaryWriter{"/proc"},
                          "cannot create the TensorBoard event file /proc/events.out.tfevents.");
  }
}

}  // namespace
}  // namespace t5xx::trainer
