// storage/url.h: which paths are local, gs:// or s3://, and the errors.
#include "t5xx/storage/staged_output.h"
#include "t5xx/storage/url.h"

#include <gtest/gtest.h>

#include "t5xx/util/error.h"

namespace t5xx::storage {
namespace {

TEST(Url, LocalPathsAndFileUrls) {
  EXPECT_EQ(ParseUrl("/tmp/run").scheme, Url::Scheme::kLocal);
  EXPECT_EQ(ParseUrl("/tmp/run").path, "/tmp/run");
  EXPECT_EQ(ParseUrl("relative/dir").path, "relative/dir");
  EXPECT_EQ(ParseUrl("file:///abs/x").path, "/abs/x");
  EXPECT_FALSE(ParseUrl("file:///abs/x").remote());
}

TEST(Url, BucketsAndObjects) {
  const Url g = ParseUrl("gs://t5-data/vocabs/cc_all.32000/sentencepiece.model");
  EXPECT_EQ(g.scheme, Url::Scheme::kGcs);
  EXPECT_EQ(g.bucket, "t5-data");
  EXPECT_EQ(g.object, "vocabs/cc_all.32000/sentencepiece.model");
  const Url s = ParseUrl("s3://bucket/run/");
  EXPECT_EQ(s.scheme, Url::Scheme::kS3);
  EXPECT_EQ(s.object, "run");  // a trailing '/' names the same prefix
  EXPECT_EQ(ParseUrl("s3://bucket").object, "");
  EXPECT_EQ(s.ToString(), "s3://bucket/run");
}

TEST(Url, UnknownSchemesAndMissingBucketsAreNamed) {
  try {
    ParseUrl("hdfs://namenode/data");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "'hdfs://namenode/data': t5xx reads and writes local paths, file://, gs:// and "
                 "s3:// URLs, not hdfs://; copy the data to one of those");
  }
  EXPECT_THROW(ParseUrl("gs://"), Error);
  EXPECT_THROW(ParseUrl("s3:///key"), Error);
  EXPECT_THROW(ParseUrl("s3://b/a//c"), Error);
}

TEST(Url, JoinAndParent) {
  EXPECT_EQ(JoinPath("s3://b/run", "checkpoint_4"), "s3://b/run/checkpoint_4");
  EXPECT_EQ(JoinPath("s3://b/run/", "/x"), "s3://b/run/x");
  EXPECT_EQ(JoinPath("/tmp", "x"), "/tmp/x");
  EXPECT_EQ(ParentPath("gs://b/a/c"), "gs://b/a");
  EXPECT_EQ(ParentPath("gs://b/a"), "gs://b");
  EXPECT_EQ(ParentPath("gs://b"), "gs://b");
  EXPECT_EQ(ParentPath("/tmp/x/"), "/tmp");
  EXPECT_EQ(ParentPath("x"), ".");
}

TEST(Url, StagedOutputPaths) {
  // Local outputs are written where they are; a bucket's root and unknown
  // schemes are refused by name (never a local folder named "s3:").
  EXPECT_EQ(StagedOutputPath("/tmp/out", "INFER_OUTPUT_DIR"), "/tmp/out");
  EXPECT_EQ(StagedOutputPath("file:///tmp/out", "INFER_OUTPUT_DIR"), "/tmp/out");
  try {
    StagedOutputPath("s3://b", "infer.output_dir (INFER_OUTPUT_DIR)");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "infer.output_dir (INFER_OUTPUT_DIR) 's3://b' names a bucket, not a "
                           "directory in it; give s3://BUCKET/DIR");
  }
  EXPECT_THROW(StagedOutputPath("hdfs://nn/out", "--output_cache_dir"), Error);
}

TEST(Url, IsObjectStoreUrl) {
  EXPECT_TRUE(IsObjectStoreUrl("gs://b/x"));
  EXPECT_TRUE(IsObjectStoreUrl("s3://b"));
  EXPECT_FALSE(IsObjectStoreUrl("/gs://"));
  EXPECT_FALSE(IsObjectStoreUrl("file:///x"));
}

}  // namespace
}  // namespace t5xx::storage
