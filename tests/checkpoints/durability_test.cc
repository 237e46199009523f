// Checkpoint durability: the checksums sidecar and what it detects,
// reading slices, leftover temporary directories, retention (keep,
// force_keep_period, keep_dataset_checkpoints), background saves and their
// errors, a save killed part-way (fork + SIGKILL), and readers that run
// while newer checkpoints are written. Expected values are worked out by
// hand from the inputs written here.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <nlohmann/json.hpp>

#include "t5xx/checkpoints/async_checkpointer.h"
#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/util/crc32c.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::checkpoints {
namespace {

namespace fs = std::filesystem;
using t5xx::testing::ErrorOf;
using nlohmann::json;

class DurabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("t5xx_durability_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string md() const { return dir_.string(); }
  fs::path dir_;
};

std::vector<uint8_t> ReadAll(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void WriteAll(const fs::path& p, const std::vector<uint8_t>& b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// 0, 1, 2, ... as float32, plus `base`.
std::vector<float> Iota(size_t n, float base = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + static_cast<float>(i);
  return v;
}

OwnedArray Owned(const std::string& path, const std::vector<float>& v,
                 std::vector<int64_t> shape) {
  OwnedArray a;
  a.path = path;
  a.shape = std::move(shape);
  a.bytes.resize(v.size() * 4);
  std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
  return a;
}

std::vector<float> AsFloats(const LoadedArray& a) {
  std::vector<float> v(a.bytes.size() / 4);
  std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
  return v;
}

// A 6x10 float32 array 0..59 in chunks of 3x5 (max_chunk_bytes 60 allows 15
// elements: t5x's rule halves 6 -> 3 and 10 -> 5), plus an inline one.
std::string SaveGrid(const std::string& model_dir, int64_t step,
                     std::vector<ExtraFile> extra = {}) {
  static const std::vector<float> grid = Iota(60);
  static const std::vector<float> small = Iota(4, 100);
  SaveOptions o;
  o.max_chunk_bytes = 60;
  return SaveCheckpoint(model_dir, step,
                        {{"target.grid", DType::kFloat32, {6, 10}, grid.data()},
                         {"state.small", DType::kFloat32, {4}, small.data(), true}},
                        o, extra);
}

TEST_F(DurabilityTest, SidecarListsTheCrcOfEveryFileWritten) {
  const std::string ck = SaveGrid(md(), 7, {{"t5xx_train_ds-000-of-001.json", "{\"a\": 1}"}});
  const json j = json::parse(ReadAll(fs::path(ck) / kChecksumsFile));
  EXPECT_EQ(j["format"], "t5xx.checksums");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["algorithm"], "crc32c");
  // 4 chunks of the grid (2x2 grid of 3x5 chunks), the dataset file and the
  // index; the inline array has no file.
  std::vector<std::string> names;
  for (const auto& [name, crc] : j["files"].items()) {
    names.push_back(name);
    const std::vector<uint8_t> bytes = ReadAll(fs::path(ck) / name);
    char hex[16];
    std::snprintf(hex, sizeof(hex), "%08x", Crc32c(bytes.data(), bytes.size()));
    EXPECT_EQ(crc.get<std::string>(), hex) << name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"checkpoint", "t5xx_train_ds-000-of-001.json",
                                             "target.grid/0.0", "target.grid/0.1",
                                             "target.grid/1.0", "target.grid/1.1"}));
}

TEST_F(DurabilityTest, CorruptedTruncatedOrMissingChunksAreNamed) {
  const fs::path ck = SaveGrid(md(), 1);
  const fs::path chunk = ck / "target.grid" / "1.0";
  const std::vector<uint8_t> good = ReadAll(chunk);
  std::vector<uint8_t> bad = good;
  bad[bad.size() / 2] ^= 0x40;
  WriteAll(chunk, bad);
  std::string e = ErrorOf([&] { LoadCheckpoint(ck.string()); });
  EXPECT_NE(e.find("checkpoint array 'target.grid': chunk file " + chunk.string() +
                   " is corrupted (crc32c "),
            std::string::npos)
      << e;
  // The other chunks are fine: a slice that avoids chunk 1.0 reads.
  CheckpointReader reader(ck.string());
  EXPECT_EQ(AsFloats(reader.Read("target.grid", Box{{0, 0}, {3, 10}})), Iota(30));

  bad.assign(good.begin(), good.begin() + static_cast<long>(good.size() / 2));  // truncated
  WriteAll(chunk, bad);
  e = ErrorOf([&] { LoadCheckpoint(ck.string()); });
  EXPECT_NE(e.find(chunk.string() + " is corrupted"), std::string::npos) << e;

  fs::remove(chunk);
  e = ErrorOf([&] { LoadCheckpoint(ck.string()); });
  EXPECT_NE(e.find("chunk file " + chunk.string() + " is missing"), std::string::npos) << e;

  // Without the sidecar (as t5x writes them) a truncated gzip chunk still
  // fails, naming the array.
  WriteAll(chunk, bad);
  fs::remove(ck / kChecksumsFile);
  e = ErrorOf([&] { LoadCheckpoint(ck.string()); });
  EXPECT_NE(e.find("checkpoint array 'target.grid'"), std::string::npos) << e;
  EXPECT_NE(e.find(chunk.string()), std::string::npos) << e;
}

TEST_F(DurabilityTest, ACorruptedIndexOrDatasetFileIsNamed) {
  const fs::path ck = SaveGrid(md(), 1, {{"t5xx_train_ds-000-of-001.json", "{\"pos\": 12}"}});
  std::vector<uint8_t> ds = ReadAll(ck / "t5xx_train_ds-000-of-001.json");
  ds[3] = '9';
  WriteAll(ck / "t5xx_train_ds-000-of-001.json", ds);
  CheckpointReader reader(ck.string());
  EXPECT_NE(ErrorOf([&] { reader.ReadExtraFile("t5xx_train_ds-000-of-001.json"); })
                .find("t5xx_train_ds-000-of-001.json is corrupted"),
            std::string::npos);
  EXPECT_EQ(reader.ReadExtraFile("t5xx_train_ds-001-of-002.json"), std::nullopt);

  std::vector<uint8_t> index = ReadAll(ck / "checkpoint");
  index.back() ^= 1;
  WriteAll(ck / "checkpoint", index);
  EXPECT_NE(ErrorOf([&] { CheckpointReader r(ck.string()); })
                .find("checkpoint index " + (ck / "checkpoint").string() + " is corrupted"),
            std::string::npos);
}

TEST_F(DurabilityTest, ANewerSidecarIsRefused) {
  const fs::path ck = SaveGrid(md(), 1);
  json j = json::parse(ReadAll(ck / kChecksumsFile));
  j["version"] = 2;
  const std::string s = j.dump();
  WriteAll(ck / kChecksumsFile, std::vector<uint8_t>(s.begin(), s.end()));
  EXPECT_NE(ErrorOf([&] { CheckpointReader r(ck.string()); })
                .find("was written by a newer t5xx (version 2 > 1)"),
            std::string::npos);
}

TEST_F(DurabilityTest, ReadsOnlyTheChunksASliceNeeds) {
  const std::string ck = SaveGrid(md(), 3);
  const uint64_t chunk_bytes = ReadAll(fs::path(ck) / "target.grid" / "0.1").size();
  CheckpointReader reader(ck);
  EXPECT_EQ(reader.step(), 3);
  ASSERT_EQ(reader.arrays().count("target.grid"), 1u);
  EXPECT_EQ(reader.arrays().at("target.grid").shape, (std::vector<int64_t>{6, 10}));
  // Rows 1..2, columns 6..8: inside chunk (0, 1) alone.
  LoadedArray a = reader.Read("target.grid", Box{{1, 6}, {2, 3}});
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(AsFloats(a), (std::vector<float>{16, 17, 18, 26, 27, 28}));
  EXPECT_EQ(reader.bytes_read(), chunk_bytes);
  // Rows 2..4, columns 4..5: across all four chunks.
  a = reader.Read("target.grid", Box{{2, 4}, {3, 2}});
  EXPECT_EQ(AsFloats(a), (std::vector<float>{24, 25, 34, 35, 44, 45}));
  // Inline arrays slice too.
  EXPECT_EQ(AsFloats(reader.Read("state.small", Box{{1}, {2}})), (std::vector<float>{101, 102}));
  EXPECT_NE(ErrorOf([&] { reader.Read("target.grid", Box{{4, 0}, {3, 10}}); })
                .find("lies outside the array"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { reader.Read("target.nosuch"); }).find("has no array 'target.nosuch'"),
            std::string::npos);
}

TEST_F(DurabilityTest, LeftoverTemporaryDirectoriesAreIgnoredThenRemoved) {
  SaveGrid(md(), 4);
  fs::create_directories(dir_ / "checkpoint_8.tmp-1700000000" / "target.grid");
  fs::create_directories(dir_ / "checkpoint_2.tmp-delete");
  fs::create_directories(dir_ / "checkpoints_backup.tmp-1");  // not ours
  EXPECT_EQ(ListCheckpointSteps(md()), (std::vector<int64_t>{4}));
  const std::vector<std::string> removed = RemoveTemporaryCheckpoints(md());
  EXPECT_EQ(removed, (std::vector<std::string>{(dir_ / "checkpoint_2.tmp-delete").string(),
                                               (dir_ / "checkpoint_8.tmp-1700000000").string()}));
  EXPECT_FALSE(fs::exists(dir_ / "checkpoint_8.tmp-1700000000"));
  EXPECT_TRUE(fs::exists(dir_ / "checkpoints_backup.tmp-1"));
  EXPECT_TRUE(fs::exists(dir_ / "checkpoint_4" / "checkpoint"));
}

TEST_F(DurabilityTest, RetentionKeepsTheNewestAndEveryForcedStep) {
  for (int64_t s = 0; s <= 10; ++s) SaveGrid(md(), s, {{DatasetStateFileName(0, 1), "{}"}});
  RetentionPolicy p;
  p.keep = 2;
  p.force_keep_period = 4;
  p.keep_dataset_checkpoints = 1;
  const std::vector<std::string> deleted = ApplyRetention(md(), p);
  // Candidates are steps 0..8 (all but the newest two); 0, 4 and 8 are
  // multiples of 4 and stay.
  EXPECT_EQ(ListCheckpointSteps(md()), (std::vector<int64_t>{0, 4, 8, 9, 10}));
  // Dataset states: only the newest checkpoint keeps one.
  for (int64_t s : {0, 4, 8, 9}) {
    EXPECT_FALSE(fs::exists(fs::path(CheckpointDir(md(), s)) / DatasetStateFileName(0, 1))) << s;
  }
  EXPECT_TRUE(fs::exists(fs::path(CheckpointDir(md(), 10)) / DatasetStateFileName(0, 1)));
  EXPECT_EQ(deleted.size(), 6u + 4u);
  // A checkpoint whose dataset state was dropped still loads.
  EXPECT_EQ(LoadCheckpoint(CheckpointDir(md(), 9)).step, 9);
}

TEST_F(DurabilityTest, BackgroundSavesCommitInOrderAndReportEachOnce) {
  AsyncCheckpointer c(md(), SaveOptions{}, RetentionPolicy{});
  for (int64_t s = 1; s <= 3; ++s) {
    PendingCheckpoint p;
    p.step = s;
    p.arrays.push_back(Owned("target.w", Iota(1000, static_cast<float>(s)), {10, 100}));
    c.Save(std::move(p));
    EXPECT_EQ(c.pending_step(), s);
  }
  std::vector<WriteResult> done = c.Wait();
  std::vector<int64_t> steps;
  for (const WriteResult& r : done) {
    steps.push_back(r.step);
    EXPECT_EQ(r.bytes, 4000u);
    EXPECT_EQ(r.dir, CheckpointDir(md(), r.step));
  }
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_TRUE(c.Wait().empty());
  EXPECT_TRUE(c.Poll().empty());
  EXPECT_EQ(AsFloats(LoadCheckpoint(CheckpointDir(md(), 2)).arrays.at("target.w")), Iota(1000, 2));
}

TEST_F(DurabilityTest, AFailedBackgroundSaveIsRethrown) {
  WriteAll(dir_ / "afile", {1});
  AsyncCheckpointer c((dir_ / "afile").string(), SaveOptions{}, RetentionPolicy{});
  PendingCheckpoint p;
  p.step = 5;
  p.arrays.push_back(Owned("target.w", Iota(4), {4}));
  c.Save(std::move(p));  // starts; the failure comes back later
  const std::string e = ErrorOf([&] { c.Wait(); });
  EXPECT_NE(e.find((dir_ / "afile").string()), std::string::npos) << e;
  EXPECT_NE(e.find("the checkpoint of step 5 was not saved"), std::string::npos) << e;
}

// A save killed with SIGKILL part-way leaves only a .tmp- directory: the
// previous checkpoint is still the latest and restorable.
TEST_F(DurabilityTest, ASaveKilledPartWayLeavesThePreviousCheckpoint) {
  SaveGrid(md(), 1);
  // ~48 MiB of float32 that gzip cannot shrink much: seconds to write.
  std::vector<float> big(12 << 20);
  uint32_t x = 12345;
  for (float& f : big) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x) / 4294967296.0f;
  }
  bool caught = false;
  for (int attempt = 0; attempt < 3 && !caught; ++attempt) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        SaveCheckpoint(md(), 2, {{"target.big", DType::kFloat32, {12, 1 << 20}, big.data()}});
      } catch (...) {
      }
      ::_exit(0);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      bool tmp = false;
      for (const auto& e : fs::directory_iterator(dir_)) {
        tmp |= e.path().filename().string().rfind("checkpoint_2.tmp-", 0) == 0 &&
               fs::exists(e.path() / "target.big");
      }
      if (tmp) {
        caught = ::kill(child, SIGKILL) == 0;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    caught = caught && WIFSIGNALED(status);
    if (!caught) fs::remove_all(CheckpointDir(md(), 2));
  }
  ASSERT_TRUE(caught) << "the save finished before it could be killed";
  EXPECT_EQ(ListCheckpointSteps(md()), (std::vector<int64_t>{1}));
  EXPECT_EQ(AsFloats(LoadCheckpoint(CheckpointDir(md(), 1)).arrays.at("target.grid")), Iota(60));
  EXPECT_EQ(RemoveTemporaryCheckpoints(md()).size(), 1u);
  // The step can be saved again afterwards.
  SaveGrid(md(), 2);
  EXPECT_EQ(ListCheckpointSteps(md()), (std::vector<int64_t>{1, 2}));
}

// Readers that list and load the latest checkpoint while a writer commits
// newer ones never see a partial checkpoint.
TEST_F(DurabilityTest, AReaderNeverSeesATornCheckpoint) {
  std::atomic<bool> done{false};
  std::thread writer([&] {
    AsyncCheckpointer c(md(), SaveOptions{}, RetentionPolicy{});
    for (int64_t s = 1; s <= 25; ++s) {
      PendingCheckpoint p;
      p.step = s;
      p.arrays.push_back(Owned("target.a", Iota(1 << 16, static_cast<float>(s)), {256, 256}));
      p.arrays.push_back(Owned("target.b", Iota(1 << 14, static_cast<float>(-s)), {1 << 14}));
      c.Save(std::move(p));
    }
    c.Wait();
    done = true;
  });
  int loads = 0;
  std::string failure;
  while (!done || loads == 0) {
    const std::vector<int64_t> steps = ListCheckpointSteps(md());
    if (steps.empty()) continue;
    try {
      const LoadedCheckpoint ck = LoadCheckpoint(CheckpointDir(md(), steps.back()));
      const float s = static_cast<float>(ck.step);
      if (ck.step != steps.back() || AsFloats(ck.arrays.at("target.a")) != Iota(1 << 16, s) ||
          AsFloats(ck.arrays.at("target.b")) != Iota(1 << 14, -s)) {
        failure = "checkpoint " + std::to_string(steps.back()) + " read wrong values";
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (!failure.empty()) break;
    ++loads;
  }
  writer.join();
  EXPECT_EQ(failure, "");
  EXPECT_GT(loads, 0);
  EXPECT_EQ(ListCheckpointSteps(md()).size(), 25u);
}

}  // namespace
}  // namespace t5xx::checkpoints
