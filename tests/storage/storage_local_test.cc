// storage/storage.h on local paths and file:// URLs: whole and ranged
// reads, atomic writes that create their parents, listing, glob, delete.
#include "t5xx/storage/storage.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "t5xx/util/error.h"

namespace t5xx::storage {
namespace {

class StorageLocalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() / ("t5xx_storage_" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(StorageLocalTest, WriteReadListGlobDelete) {
  WriteFile(dir_ + "/run/checkpoint_4/checkpoint", "abc");
  WriteFile("file://" + dir_ + "/run/checkpoint_8/checkpoint", std::string(1000, 'x'));
  WriteFile(dir_ + "/run/config.gin", "x = 1\n");
  EXPECT_EQ(ReadFile(dir_ + "/run/checkpoint_4/checkpoint", "the index"), "abc");
  EXPECT_EQ(ReadRange(dir_ + "/run/checkpoint_8/checkpoint", 10, 5, "a chunk"), "xxxxx");
  EXPECT_EQ(FileSize(dir_ + "/run/checkpoint_8/checkpoint"), 1000u);
  EXPECT_FALSE(FileSize(dir_ + "/run/nothing").has_value());
  EXPECT_FALSE(ReadIfExists(dir_ + "/run/nothing").has_value());
  EXPECT_TRUE(IsDirectory(dir_ + "/run"));
  EXPECT_TRUE(Exists(dir_ + "/run/config.gin"));
  EXPECT_EQ(ListDirectory(dir_ + "/run"),
            (std::vector<std::string>{"checkpoint_4", "checkpoint_8", "config.gin"}));
  EXPECT_EQ(Glob(dir_ + "/run/checkpoint_*/checkpoint"),
            (std::vector<std::string>{dir_ + "/run/checkpoint_4/checkpoint",
                                      dir_ + "/run/checkpoint_8/checkpoint"}));
  EXPECT_EQ(Glob(dir_ + "/run/config.gin"), (std::vector<std::string>{dir_ + "/run/config.gin"}));
  EXPECT_TRUE(Glob(dir_ + "/run/missing").empty());
  // No temporary is left beside a written file.
  EXPECT_EQ(ListDirectory(dir_ + "/run/checkpoint_4"), (std::vector<std::string>{"checkpoint"}));
  DeleteFile(dir_ + "/run/config.gin");
  EXPECT_FALSE(Exists(dir_ + "/run/config.gin"));
  DeleteRecursively(dir_ + "/run/checkpoint_4");
  EXPECT_EQ(ListDirectory(dir_ + "/run"), (std::vector<std::string>{"checkpoint_8"}));
}

TEST_F(StorageLocalTest, ErrorsNameThePath) {
  try {
    ReadFile(dir_ + "/missing.model", "the vocabulary");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read the vocabulary " + dir_ + "/missing.model: it does not exist");
  }
  WriteFile(dir_ + "/short", "12345");
  try {
    ReadRange(dir_ + "/short", 3, 10, "a chunk");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bytes 3+10 were asked for, but it ends 2 bytes into"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ReadFile(dir_, "a file"), Error);  // a directory
  EXPECT_THROW(ReadFile("ftp://host/x", "a file"), Error);
}

}  // namespace
}  // namespace t5xx::storage
