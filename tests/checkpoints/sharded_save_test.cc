// Sharded saves at the checkpoints layer (no collectives, so the
// "processes" here are threads of one test): each writes the chunks of its
// boxes into process 0's temporary directory, process 0 waits for the
// done-markers, merges the checksums and commits; a one-process save with a
// whole box is byte-identical to an ordinary one; a process that fails or
// never finishes is named and nothing is committed.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <thread>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/checkpoints/sharded_commit.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::checkpoints {
namespace {

namespace fs = std::filesystem;

std::map<std::string, std::string> Files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream f(e.path(), std::ios::binary);
    out[fs::relative(e.path(), dir).string()] =
        std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  return out;
}

// The [4, 6] array of values 0..23, its box at (r, c) of a 2x2 grid.
std::vector<float> Global() {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(i) * 1.5f;
  return v;
}
std::vector<float> BoxOf(int r, int c) {
  const std::vector<float> g = Global();
  std::vector<float> out;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) out.push_back(g[(2 * r + i) * 6 + 3 * c + j]);
  }
  return out;
}

TEST(ShardedSave, AOneProcessSaveWithAWholeBoxIsByteIdenticalToAnOrdinarySave) {
  const testing::TempDir a, b;
  const std::vector<float> g = Global();
  const int32_t inl[2] = {3, 4};
  std::vector<ArrayRef> plain = {{"target.w", DType::kFloat32, {4, 6}, g.data()},
                                 {"state.c", DType::kInt32, {2}, inl, true}};
  std::vector<ArrayRef> boxed = plain;
  boxed[0].box = Box{{0, 0}, {4, 6}};
  SaveOptions o;
  o.max_chunk_bytes = 32;
  SaveCheckpoint(a.path, 5, plain, o, {{DatasetStateFileName(0, 1), "x"}});
  SaveCheckpoint(b.path, 5, boxed, o, {{DatasetStateFileName(0, 1), "x"}});
  EXPECT_EQ(Files(a.path), Files(b.path));
}

TEST(ShardedSave, FourWritersOfTheBoxesOfA2x2GridMakeOneCheckpoint) {
  const testing::TempDir model_dir;
  const std::string tmp = BeginShardedSave(model_dir.path, 3, 1234);
  const std::vector<float> g = Global();
  const float rep[3] = {7, 8, 9};
  const int32_t inl[2] = {3, 4};
  std::vector<std::vector<float>> boxes;
  for (int p = 0; p < 4; ++p) boxes.push_back(BoxOf(p / 2, p % 2));
  std::vector<std::string> errors(4);
  std::vector<std::thread> writers;
  for (int p = 0; p < 4; ++p) {
    writers.emplace_back([&, p] {
      ArrayRef w{"target.w", DType::kFloat32, {4, 6}, boxes[p].data()};
      w.box = Box{{2 * (p / 2), 3 * (p % 2)}, {2, 3}};
      ArrayRef r{"target.r", DType::kFloat32, {3}, rep};
      r.write = p == 0;  // replicated: the primary writes it
      SaveOptions o;
      o.max_chunk_bytes = 8;  // chunks [2, 1]: they divide the box
      try {
        SaveCheckpoint(model_dir.path, 3, {w, r, {"state.c", DType::kInt32, {2}, inl, true}}, o,
                       {{DatasetStateFileName(p, 4), "ds" + std::to_string(p)}},
                       ShardedSave{p, 4, tmp, 60});
      } catch (const Error& e) {
        errors[p] = e.what();
      }
    });
  }
  for (auto& t : writers) t.join();
  for (int p = 0; p < 4; ++p) EXPECT_EQ(errors[p], "") << p;
  ASSERT_EQ(ListCheckpointSteps(model_dir.path), std::vector<int64_t>{3});
  EXPECT_FALSE(fs::exists(tmp));
  const std::map<std::string, std::string> files = Files(CheckpointDir(model_dir.path, 3));
  int w_chunks = 0;
  for (const auto& [name, content] : files) {
    EXPECT_TRUE(name.find("t5xx_done") == std::string::npos &&
                name.find("t5xx_checksums-") == std::string::npos) << name;
    if (name.rfind("target.w/", 0) == 0 && name != "target.w/.zarray") ++w_chunks;
  }
  EXPECT_EQ(w_chunks, 12);
  CheckpointReader reader(CheckpointDir(model_dir.path, 3));
  ASSERT_TRUE(reader.has_checksums());
  const LoadedArray w = reader.Read("target.w");
  EXPECT_EQ(w.shape, (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(reader.arrays().at("target.w").zarr->chunks, (std::vector<int64_t>{2, 1}));
  ASSERT_EQ(w.bytes.size(), g.size() * 4);
  EXPECT_EQ(std::memcmp(w.bytes.data(), g.data(), w.bytes.size()), 0);
  const LoadedArray r = reader.Read("target.r");
  EXPECT_EQ(std::memcmp(r.bytes.data(), rep, 12), 0);
  // A box read back from the chunks two writers wrote.
  const LoadedArray mid = reader.Read("target.w", Box{{1, 2}, {2, 2}});
  const float want[4] = {g[8], g[9], g[14], g[15]};
  EXPECT_EQ(std::memcmp(mid.bytes.data(), want, 16), 0);
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(reader.ReadExtraFile(DatasetStateFileName(p, 4)).value_or(""),
              "ds" + std::to_string(p));
  }
}

TEST(ShardedSave, AProcessThatNeverFinishesOrFailsIsNamedAndNothingIsCommitted) {
  const testing::TempDir model_dir;
  const float v[2] = {1, 2};
  const std::vector<ArrayRef> arrays = {{"target.v", DType::kFloat32, {2}, v}};
  {
    const std::string tmp = BeginShardedSave(model_dir.path, 1, 1);
    const std::string error = testing::ErrorOf(
        [&] { SaveCheckpoint(model_dir.path, 1, arrays, {}, {}, ShardedSave{0, 3, tmp, 0.2}); });
    EXPECT_NE(error.find("processes 1 and 2 of 3 did not finish writing their parts"),
              std::string::npos) << error;
    EXPECT_NE(error.find("was not saved"), std::string::npos) << error;
    EXPECT_FALSE(fs::exists(tmp));
  }
  {
    const std::string tmp = BeginShardedSave(model_dir.path, 2, 1);
    SaveCheckpoint(model_dir.path, 2, arrays, {}, {}, ShardedSave{1, 3, tmp, 1});
    ReportFailedPart(tmp, 2, 3, "No space left on device");
    const std::string error = testing::ErrorOf(
        [&] { SaveCheckpoint(model_dir.path, 2, arrays, {}, {}, ShardedSave{0, 3, tmp, 30}); });
    EXPECT_NE(error.find("process 2 of 3 failed to write its part: No space left on device"),
              std::string::npos) << error;
    EXPECT_FALSE(fs::exists(tmp));
  }
  EXPECT_TRUE(ListCheckpointSteps(model_dir.path).empty());
  // A process other than 0 cannot write without process 0's directory.
  const std::string error = testing::ErrorOf([&] {
    SaveCheckpoint(model_dir.path, 4, arrays, {}, {},
                   ShardedSave{1, 2, ShardedTemporaryDir(model_dir.path, 4, 9), 1});
  });
  EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
  // An inline array must be whole.
  ArrayRef part{"state.c", DType::kFloat32, {4}, v, true};
  part.box = Box{{2}, {2}};
  EXPECT_NE(testing::ErrorOf([&] { SaveCheckpoint(model_dir.path, 5, {part}); })
                .find("must be whole"),
            std::string::npos);
}

}  // namespace
}  // namespace t5xx::checkpoints
