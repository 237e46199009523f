// storage/url.h: which paths are local, gs:// or s3://, and the errors.
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

TEST(Url, OutputsNotYetWrittenToBucketsAreRefusedByName) {
  EXPECT_EQ(LocalOutputPath("/tmp/out", "INFER_OUTPUT_DIR"), "/tmp/out");
  EXPECT_EQ(LocalOutputPath("file:///tmp/out", "INFER_OUTPUT_DIR"), "/tmp/out");
  try {
    LocalOutputPath("s3://b/out", "infer.output_dir (INFER_OUTPUT_DIR)");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "infer.output_dir (INFER_OUTPUT_DIR) 's3://b/out': t5xx does not write s3:// yet (it "
                 "reads gs:// and s3:// inputs and checkpoints); write to a local directory and copy "
                 "it there (aws s3 cp --recursive DIR s3://b/out)");
  }
  EXPECT_THROW(LocalOutputPath("gs://b/out", "--output_cache_dir"), Error);
  EXPECT_THROW(LocalOutputPath("hdfs://nn/out", "--output_cache_dir"), Error);
}

TEST(Url, IsObjectStoreUrl) {
  EXPECT_TRUE(IsObjectStoreUrl("gs://b/x"));
  EXPECT_TRUE(IsObjectStoreUrl("s3://b"));
  EXPECT_FALSE(IsObjectStoreUrl("/gs://"));
  EXPECT_FALSE(IsObjectStoreUrl("file:///x"));
}

}  // namespace
}  // namespace t5xx::storage
