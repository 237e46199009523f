// Sharded checkpoints across real processes (Gloo): 4 processes on a 2x2
// mesh each write the boxes they are the primary replica of, rank 0
// commits; the checkpoint is read whole by t5xx's reader and by zarr-python
// / TensorStore and equals the global arrays; it restores onto 1 process,
// 4x1 and 1x2, each process reading its boxes; a one-process checkpoint
// restores under 2x2; a process that dies before its done-marker leaves no
// committed checkpoint and rank 0 names it.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "partitioning/multiprocess.h"
#include "sharded_checkpoint_fixture.h"
#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/trainer/checkpoint_io.h"
#include "test_util.h"

namespace t5xx {
namespace {

namespace fs = std::filesystem;
using testing::Launch;

std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += x + "\n";
  return s;
}

// Launches `n` restore workers on (data, model) against `dir`.
void ExpectRestores(const std::string& dir, int64_t data, int64_t model) {
  const int n = static_cast<int>(data * model);
  std::vector<int> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(r);
  const testing::Outcome o = Launch(T5XX_SHARDED_WORKER, n, ranks,
                                    {"restore", dir, std::to_string(data), std::to_string(model)});
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(o.exit_codes[r], 0) << data << "x" << model << " rank " << r << ": "
                                  << o.errors[r];
  }
}

// Restores `dir` in this process (1x1) and checks every value.
void ExpectRestoresOnOneProcess(const std::string& dir) {
  testing::ShardedState s = testing::BuildShardedState({1, 1}, {0, 0}, /*fill=*/false);
  trainer::RestoreOptions options;
  options.owned_slice = trainer::OwnedSlices(s.layout);
  trainer::RestoreTrainState(dir, s.params, s.optimizer.get(), options);
  EXPECT_EQ(testing::CheckShardedState(s), "");
}

// 4 processes on 2x2 save checkpoint_7 into `model_dir` (in Orbax's layout
// when `orbax`).
void SaveOn2x2(const std::string& model_dir, bool orbax = false) {
  const testing::Outcome o = Launch(T5XX_SHARDED_WORKER, 4, {0, 1, 2, 3},
                                    {orbax ? "save_orbax" : "save", model_dir, "2", "2"});
  for (int r = 0; r < 4; ++r) ASSERT_EQ(o.exit_codes[r], 0) << "rank " << r << ": " << o.errors[r];
}

TEST(ShardedCheckpoint, FourProcessesOn2x2WriteOneCheckpointOfTheGlobalArrays) {
  const testing::TempDir model_dir;
  SaveOn2x2(model_dir.path);
  ASSERT_EQ(checkpoints::ListCheckpointSteps(model_dir.path),
            std::vector<int64_t>{testing::kShardedStep});
  const std::string dir = checkpoints::CheckpointDir(model_dir.path, testing::kShardedStep);
  // Only t5x's files, the checksums and the dataset states remain.
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name.rfind("t5xx_done", 0) != 0 && name.rfind("t5xx_checksums-", 0) != 0) << name;
  }
  // t5xx's reader, whole arrays: every one equals the global value.
  const testing::ShardedState whole = testing::BuildShardedState({1, 1}, {0, 0}, true);
  checkpoints::CheckpointReader reader(dir);
  ASSERT_TRUE(reader.has_checksums());
  EXPECT_EQ(reader.step(), testing::kShardedStep);
  EXPECT_EQ(reader.arrays().size(), whole.layout.size());
  for (const partitioning::VariableInfo& v : whole.layout) {
    std::string path = v.name;
    path[path.find('/')] = '.';
    const checkpoints::LoadedArray a = reader.Read(path);
    ASSERT_EQ(a.shape, v.shape) << path;
    const at::Tensor got = at::from_blob(const_cast<uint8_t*>(a.bytes.data()), a.shape, at::kFloat);
    EXPECT_TRUE(at::equal(got, testing::GlobalValue(v.name, v.shape))) << path;
    const checkpoints::IndexEntry& e = reader.arrays().at(path);
    if (e.zarr) {
      // Chunks divide the 2x2 box of the array (and hold <= 64 bytes).
      const testing::ShardedState part = testing::BuildShardedState({2, 2}, {1, 1}, false);
      for (const partitioning::VariableInfo& p : part.layout) {
        if (p.name != v.name) continue;
        for (size_t d = 0; d < e.zarr->chunks.size(); ++d) {
          EXPECT_EQ(p.box.shape[d] % e.zarr->chunks[d], 0) << path;
        }
      }
      EXPECT_LE(checkpoints::NumElements(e.zarr->chunks) * 4, 64) << path;
    }
  }
  // Each process's dataset state, verified against the merged checksums.
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(reader.ReadExtraFile(checkpoints::DatasetStateFileName(r, 4)).value_or(""),
              "{\"rank\": " + std::to_string(r) + "}");
  }
  // zarr-python and TensorStore read the same global arrays.
  const std::string cmd = std::string(T5XX_PYTHON3) + " " + T5XX_SOURCE_DIR +
                          "/tests/trainer/read_sharded_checkpoint.py " + dir;
  std::FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string text;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), pipe)) text.append(buf, n);
  const int status = pclose(pipe);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
    GTEST_SKIP() << "zarr-python is not installed in " << T5XX_PYTHON3;
  }
  ASSERT_EQ(status, 0) << text;
  const nlohmann::json j = nlohmann::json::parse(text);
  int zarr_arrays = 0;
  for (const partitioning::VariableInfo& v : whole.layout) {
    std::string path = v.name;
    path[path.find('/')] = '.';
    if (!reader.arrays().at(path).zarr) continue;
    ++zarr_arrays;
    ASSERT_TRUE(j.contains(path)) << path;
    EXPECT_EQ(j[path]["shape"].get<std::vector<int64_t>>(), v.shape);
    const at::Tensor want = testing::GlobalValue(v.name, v.shape).to(at::kDouble).flatten();
    EXPECT_TRUE(at::equal(at::tensor(j[path]["values"].get<std::vector<double>>(), at::kDouble),
                          want))
        << path;
  }
  EXPECT_EQ(static_cast<int>(j.size()), zarr_arrays);
  EXPECT_EQ(zarr_arrays, 5);  // 4 parameters and the scale's v
}

TEST(ShardedCheckpoint, A2x2CheckpointRestoresOnOneProcess4x1And1x2) {
  const testing::TempDir model_dir;
  SaveOn2x2(model_dir.path);
  const std::string dir = checkpoints::CheckpointDir(model_dir.path, testing::kShardedStep);
  ExpectRestoresOnOneProcess(dir);
  ExpectRestores(dir, 4, 1);
  ExpectRestores(dir, 1, 2);
  ExpectRestores(dir, 2, 2);
}

// Orbax's layout (train.use_orbax = True): each process writes its boxes
// into its own OCDBT database, rank 0 merges them; the checkpoint restores
// on other meshes, each process reading its boxes.
TEST(ShardedCheckpoint, A2x2OrbaxCheckpointRestoresOnOneProcessAnd1x2) {
  const testing::TempDir model_dir;
  SaveOn2x2(model_dir.path, /*orbax=*/true);
  const std::string dir = checkpoints::CheckpointDir(model_dir.path, testing::kShardedStep);
  ASSERT_TRUE(fs::exists(fs::path(dir) / "state/manifest.ocdbt"));
  for (int r = 0; r < 4; ++r) {
    EXPECT_TRUE(fs::exists(fs::path(dir) / ("state/ocdbt.process_" + std::to_string(r)))) << r;
  }
  ExpectRestoresOnOneProcess(dir);
  ExpectRestores(dir, 1, 2);
}

TEST(ShardedCheckpoint, AOneProcessCheckpointRestoresUnder2x2) {
  const testing::TempDir model_dir;
  const testing::ShardedState s = testing::BuildShardedState({1, 1}, {0, 0}, true);
  const partitioning::LocalCommunicator one;
  const checkpoints::PendingCheckpoint c = trainer::SnapshotShardedTrainState(
      model_dir.path, s.params, *s.optimizer, s.layout, one);
  EXPECT_EQ(c.sharded.process_count, 1);
  const std::string dir = checkpoints::SaveCheckpoint(model_dir.path, c.step,
                                                      checkpoints::ArrayRefs(c.arrays));
  ExpectRestores(dir, 2, 2);
  ExpectRestoresOnOneProcess(dir);
}

TEST(ShardedCheckpoint, AProcessThatDiesBeforeItsMarkerLeavesNoCheckpointAndIsNamed) {
  const testing::TempDir model_dir;
  const testing::Outcome o = Launch(T5XX_SHARDED_WORKER, 4, {0, 1, 2, 3},
                                    {"save", model_dir.path, "2", "2", "3", "3"});
  EXPECT_EQ(o.exit_codes[3], 9);
  EXPECT_EQ(o.exit_codes[1], 0) << o.errors[1];
  EXPECT_EQ(o.exit_codes[2], 0) << o.errors[2];
  ASSERT_EQ(o.exit_codes[0], 4) << Joined(o.outputs);
  EXPECT_NE(o.errors[0].find("process 3 of 4 did not finish writing its part"), std::string::npos)
      << o.errors[0];
  EXPECT_NE(o.errors[0].find("t5xx_done-003-of-004"), std::string::npos) << o.errors[0];
  EXPECT_NE(o.errors[0].find("was not saved"), std::string::npos) << o.errors[0];
  EXPECT_TRUE(checkpoints::ListCheckpointSteps(model_dir.path).empty());
  for (const auto& e : fs::directory_iterator(model_dir.path)) {
    ADD_FAILURE() << "left behind: " << e.path();
  }
}

}  // namespace
}  // namespace t5xx
