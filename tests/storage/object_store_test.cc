// storage/storage.h against a real store: T5XX_TEST_STORE_ROOT names a
// prefix in a bucket ("s3://bucket/run" on moto's S3 server,
// "gs://bucket/run" on gcp-storage-emulator), which object_store_test.sh
// starts on 127.0.0.1 (directly, or behind the fault proxy). Without the
// variable the tests are skipped (ctest runs them through the script).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

#include "t5xx/storage/storage.h"
#include "t5xx/util/error.h"

namespace t5xx::storage {
namespace {

std::string Root() {
  const char* r = std::getenv("T5XX_TEST_STORE_ROOT");
  return r == nullptr ? "" : r;
}

std::string Bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

class ObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = Root();
    if (root_.empty()) GTEST_SKIP() << "T5XX_TEST_STORE_ROOT is not set (object_store_test.sh sets it)";
    root_ += "/" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  std::string root_;
};

TEST_F(ObjectStoreTest, WriteReadStatListGlobDelete) {
  WriteFile(root_ + "/checkpoint_4/checkpoint", "index");
  WriteFile(root_ + "/checkpoint_8/checkpoint", "index8");
  WriteFile(root_ + "/checkpoint_8/target.x/0.0", Bytes(1000, 1));
  WriteFile(root_ + "/config.gin", "");
  WriteFile(root_ + "/odd name+plus&amp.txt", "odd");
  EXPECT_EQ(ReadFile(root_ + "/checkpoint_4/checkpoint", "the index"), "index");
  EXPECT_EQ(ReadFile(root_ + "/config.gin", "the config"), "");
  EXPECT_EQ(ReadFile(root_ + "/odd name+plus&amp.txt", "odd"), "odd");
  EXPECT_EQ(ReadRange(root_ + "/checkpoint_8/target.x/0.0", 100, 50, "a chunk"), Bytes(1000, 1).substr(100, 50));
  EXPECT_EQ(FileSize(root_ + "/checkpoint_8/target.x/0.0"), 1000u);
  EXPECT_EQ(FileSize(root_ + "/config.gin"), 0u);
  EXPECT_FALSE(FileSize(root_ + "/checkpoint_8").has_value());  // a prefix is no file
  EXPECT_FALSE(ReadIfExists(root_ + "/missing").has_value());
  EXPECT_TRUE(IsDirectory(root_ + "/checkpoint_8"));
  EXPECT_FALSE(IsDirectory(root_ + "/checkpoint_9"));
  EXPECT_TRUE(Exists(root_ + "/config.gin"));
  EXPECT_EQ(ListDirectory(root_), (std::vector<std::string>{"checkpoint_4", "checkpoint_8", "config.gin",
                                                            "odd name+plus&amp.txt"}));
  EXPECT_EQ(Glob(root_ + "/checkpoint_*/checkpoint"),
            (std::vector<std::string>{root_ + "/checkpoint_4/checkpoint", root_ + "/checkpoint_8/checkpoint"}));
  EXPECT_EQ(Glob(root_ + "/checkpoint_?"),
            (std::vector<std::string>{root_ + "/checkpoint_4", root_ + "/checkpoint_8"}));
  EXPECT_EQ(Glob(root_ + "/*.gin"), (std::vector<std::string>{root_ + "/config.gin"}));
  DeleteFile(root_ + "/config.gin");
  DeleteFile(root_ + "/config.gin");  // again: no error
  EXPECT_FALSE(Exists(root_ + "/config.gin"));
  DeleteRecursively(root_ + "/checkpoint_8");
  EXPECT_EQ(ListDirectory(root_), (std::vector<std::string>{"checkpoint_4", "odd name+plus&amp.txt"}));
}

TEST_F(ObjectStoreTest, LargeObjectsMoveInParallelParts) {
  // 40 MiB + 3: a multipart upload (S3) / one upload (GCS), read back in
  // three parallel ranges.
  const std::string big = Bytes((size_t{40} << 20) + 3, 7);
  WriteFile(root_ + "/big.bin", big);
  EXPECT_EQ(FileSize(root_ + "/big.bin"), big.size());
  const std::string back = ReadFile(root_ + "/big.bin", "a large file");
  ASSERT_EQ(back.size(), big.size());
  EXPECT_TRUE(back == big);
  EXPECT_EQ(ReadRange(root_ + "/big.bin", (size_t{16} << 20) - 2, 5, "a range"),
            big.substr((size_t{16} << 20) - 2, 5));
}

TEST_F(ObjectStoreTest, ManyObjectsListAcrossPages) {
  // More than one page of a listing (S3 and GCS answer 1000 per page).
  for (int i = 0; i < 1005; ++i) WriteFile(root_ + "/d/" + std::to_string(i), "");
  EXPECT_EQ(ListDirectory(root_ + "/d").size(), 1005u);
  EXPECT_EQ(Glob(root_ + "/d/100?").size(), 5u);  // 1000-1004
}

TEST_F(ObjectStoreTest, AMissingBucketIsNamed) {
  const std::string scheme = root_.substr(0, 5);
  try {
    ReadIfExists(scheme + "no-such-bucket-t5xx/x");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(scheme + "no-such-bucket-t5xx/x: bucket 'no-such-bucket-t5xx' does not exist"),
              std::string::npos)
        << e.what();
  }
}

// (object_store_test.sh runs these two alone, after boto3 wrote the object
// / with the store down; in the other runs they pass trivially.)
TEST(ObjectStoreForeign, ReadsForeignObject) {
  if (Root().find("from_boto3") == std::string::npos) GTEST_SKIP() << "run by object_store_test.sh";
  EXPECT_EQ(ReadFile(Root() + "/a b.txt", "boto3's object"), "written by boto3");
}

TEST(ObjectStoreForeign, StoreDown) {
  if (Root().find("/down") == std::string::npos) GTEST_SKIP() << "run by object_store_test.sh";
  try {
    ReadIfExists(Root() + "/x");
    FAIL() << "no error";
  } catch (const Error& e) {
    std::cout << e.what() << std::endl;
  }
}

}  // namespace
}  // namespace t5xx::storage
