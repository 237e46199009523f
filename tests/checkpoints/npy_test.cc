// Tests for t5xx/checkpoints/npy.h against files numpy.save wrote
// (tests/testdata/npy, made as its README says): t5xx reads them, and
// writes the float32 one byte for byte as numpy does.
#include "t5xx/checkpoints/npy.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <gtest/gtest.h>

#include "t5xx/util/error.h"

namespace t5xx::checkpoints {
namespace {

std::string Data(const std::string& name) {
  return std::string(T5XX_SOURCE_DIR) + "/tests/testdata/npy/" + name;
}

std::string Bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string TempDir() {
  const std::string d = std::filesystem::temp_directory_path().string() + "/t5xx_npy_test_" +
                        std::to_string(::getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

TEST(Npy, ReadsWhatNumpyWrote) {
  const NpyArray a = ReadNpy(Data("float32_2x3.npy"));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.values, (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1, 1.25f}));
  const NpyArray d = ReadNpy(Data("float64_4.npy"));
  EXPECT_EQ(d.shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(d.values, (std::vector<float>{1.5f, -2.f, 3e-3f, 7.f}));
  const NpyArray h = ReadNpy(Data("float16_3.npy"));
  EXPECT_EQ(h.values, (std::vector<float>{0.5f, -1.f, 65504.f}));
}

TEST(Npy, WritesAsNumpyDoes) {
  const std::string dir = TempDir();
  WriteNpy(dir + "/a.npy", {2, 3}, {0, 0.25f, 0.5f, 0.75f, 1, 1.25f});
  EXPECT_EQ(Bytes(dir + "/a.npy"), Bytes(Data("float32_2x3.npy")));
  WriteNpy(dir + "/r1", {3}, {1, 2, 3});
  const NpyArray r = ReadNpy(dir + "/r1");
  EXPECT_EQ(r.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(r.values, (std::vector<float>{1, 2, 3}));
  const std::string saved = SaveNumpyCheckpoint(dir, 7, {{"encoder.prompt.prompt.prompt", {1, 2}, {4, 5}}});
  EXPECT_EQ(saved, dir + "/numpy_checkpoints/checkpoint_7");
  EXPECT_EQ(ReadNpy(saved + "/encoder.prompt.prompt.prompt").values, (std::vector<float>{4, 5}));
  // A second save of the step moves the first aside.
  SaveNumpyCheckpoint(dir, 7, {{"encoder.prompt.prompt.prompt", {1, 2}, {6, 7}}});
  EXPECT_EQ(ReadNpy(saved + "/encoder.prompt.prompt.prompt").values, (std::vector<float>{6, 7}));
  int backups = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/numpy_checkpoints")) {
    backups += e.path().filename().string().rfind("checkpoint_7.backup-", 0) == 0;
  }
  EXPECT_EQ(backups, 1);
  std::filesystem::remove_all(dir);
}

TEST(Npy, NamesWhatIsWrong) {
  const std::string dir = TempDir();
  auto expect = [](const std::string& path, const std::string& what) {
    try {
      ReadNpy(path);
      ADD_FAILURE() << "expected an error for " << path;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  };
  expect(dir + "/missing.npy", "no such file");
  std::ofstream(dir + "/text.npy") << "not numpy";
  expect(dir + "/text.npy", "magic");
  std::string bytes = Bytes(Data("float32_2x3.npy"));
  std::ofstream(dir + "/short.npy", std::ios::binary) << bytes.substr(0, bytes.size() - 4);
  expect(dir + "/short.npy", "its shape needs 24");
  std::string ints = bytes;
  ints.replace(ints.find("<f4"), 3, "<i4");
  std::ofstream(dir + "/ints.npy", std::ios::binary) << ints;
  expect(dir + "/ints.npy", "'<i4' is not a little-endian float16, float32 or float64");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace t5xx::checkpoints
