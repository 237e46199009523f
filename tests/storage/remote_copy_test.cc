// storage/remote_copy.h: where a gs:// or s3:// path's copies live, and the
// names it will not place in a local directory.
#include "t5xx/storage/remote_copy.h"

#include <gtest/gtest.h>

#include "t5xx/util/error.h"

namespace t5xx {
namespace {

TEST(RemoteCopy, CopyPathUnderTheDataDir) {
  EXPECT_EQ(RemoteCopyPath("gs://t5-data/vocabs/cc_all.32000/sentencepiece.model", "/d"),
            "/d/t5-data/vocabs/cc_all.32000/sentencepiece.model");
  EXPECT_EQ(RemoteCopyPath("/local/x", "/d"), "/local/x");
}

TEST(RemoteCopy, NamesThatWouldLeaveTheDirectoryAreRefused) {
  for (const char* bad : {"s3://b//tmp/abs", "s3://b/a/../../etc", "gs://b/./x", "s3://b", "s3://"}) {
    EXPECT_THROW(RemoteCopyPath(bad, "/d"), Error) << bad;
  }
}

TEST(RemoteCopy, FileUrlsAreLocalAndUnknownSchemesNamed) {
  EXPECT_EQ(LocalCopyIfAny("file:///ckpt/checkpoint_2"), "/ckpt/checkpoint_2");
  EXPECT_EQ(LocalCopyIfAny("/ckpt/checkpoint_2"), "/ckpt/checkpoint_2");
  try {
    LocalCopyIfAny("hdfs://nn/ckpt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not hdfs://"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace t5xx
