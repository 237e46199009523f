// storage/aws_signer.h: Signature Version 4 equal to botocore's for the
// requests of tests/testdata/storage/sigv4_goldens.json (made by
// make_sigv4_goldens.py with botocore itself), and the AWS settings read
// from the environment and the shared files as boto3 reads them.
#include "t5xx/storage/aws_signer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "scoped_env.h"
#include "t5xx/util/error.h"

namespace t5xx::storage {
namespace {

using t5xx::testing::ScopedEnv;

TEST(SignV4, EqualsBotocore) {
  std::ifstream in(std::string(T5XX_SOURCE_DIR) + "/tests/testdata/storage/sigv4_goldens.json");
  ASSERT_TRUE(in);
  const nlohmann::json g = nlohmann::json::parse(in);
  ASSERT_GE(g["cases"].size(), 6u);
  for (const auto& c : g["cases"]) {
    HttpRequest r;
    r.method = c["method"];
    r.url = c["url"];
    for (const auto& [k, v] : c["headers"].items()) r.headers.emplace_back(k, v.get<std::string>());
    AwsCredentials creds{g["access_key_id"], g["secret_access_key"], c["session_token"], "test"};
    SignV4(r, creds, c["region"], "s3", g["amz_date"], "UNSIGNED-PAYLOAD");
    std::string auth;
    for (const auto& [k, v] : r.headers) {
      if (k == "Authorization") auth = v;
    }
    EXPECT_EQ(auth, c["authorization"].get<std::string>()) << c["name"];
  }
}

TEST(SignV4, AnonymousLeavesTheRequestUnsigned) {
  HttpRequest r;
  r.url = "https://b.s3.us-east-1.amazonaws.com/x";
  SignV4(r, AwsCredentials{}, "us-east-1", "s3", "20261206T010203Z", "UNSIGNED-PAYLOAD");
  EXPECT_TRUE(r.headers.empty());
}

class AwsSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("t5xx_aws_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  std::filesystem::path dir_;
};

TEST_F(AwsSettingsTest, EnvironmentFirstThenProfileFiles) {
  const std::string creds = Write("credentials",
                                  "[default]\naws_access_key_id = AKIDDEFAULT\n"
                                  "aws_secret_access_key = s1\n\n[other]\n"
                                  "aws_access_key_id=AKIDOTHER\naws_secret_access_key=s2\n"
                                  "aws_session_token = tok\n");
  const std::string config = Write("config",
                                   "[default]\nregion = eu-central-1\n[profile other]\n"
                                   "region = ap-south-1\nendpoint_url = http://127.0.0.1:9/\n");
  ScopedEnv c("AWS_SHARED_CREDENTIALS_FILE", creds), f("AWS_CONFIG_FILE", config);
  ScopedEnv k("AWS_ACCESS_KEY_ID", std::nullopt), s("AWS_SECRET_ACCESS_KEY", std::nullopt);
  ScopedEnv r("AWS_REGION", std::nullopt), d("AWS_DEFAULT_REGION", std::nullopt);
  ScopedEnv e("AWS_ENDPOINT_URL", std::nullopt), e3("AWS_ENDPOINT_URL_S3", std::nullopt);
  {
    ScopedEnv p("AWS_PROFILE", std::nullopt);
    const AwsSettings a = ReadAwsSettings();
    EXPECT_EQ(a.credentials.access_key_id, "AKIDDEFAULT");
    EXPECT_EQ(a.region, "eu-central-1");
    EXPECT_EQ(a.endpoint, "");
  }
  {
    ScopedEnv p("AWS_PROFILE", "other");
    const AwsSettings a = ReadAwsSettings();
    EXPECT_EQ(a.credentials.access_key_id, "AKIDOTHER");
    EXPECT_EQ(a.credentials.session_token, "tok");
    EXPECT_EQ(a.region, "ap-south-1");
    EXPECT_EQ(a.endpoint, "http://127.0.0.1:9");
  }
  {
    ScopedEnv k2("AWS_ACCESS_KEY_ID", "AKIDENV"), s2("AWS_SECRET_ACCESS_KEY", "s3cr3t");
    ScopedEnv r2("AWS_REGION", "us-west-1"), e2("AWS_ENDPOINT_URL_S3", "http://localhost:5000");
    const AwsSettings a = ReadAwsSettings();
    EXPECT_EQ(a.credentials.access_key_id, "AKIDENV");
    EXPECT_EQ(a.region, "us-west-1");
    EXPECT_EQ(a.endpoint, "http://localhost:5000");
  }
  {
    ScopedEnv p("AWS_PROFILE", "missing");
    try {
      ReadAwsSettings();
      FAIL();
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find("AWS_PROFILE=missing names a profile"), std::string::npos)
          << err.what();
    }
  }
}

TEST_F(AwsSettingsTest, NoCredentialsIsAnonymousAndBadFilesAreNamed) {
  ScopedEnv c("AWS_SHARED_CREDENTIALS_FILE", (dir_ / "none").string());
  ScopedEnv f("AWS_CONFIG_FILE", (dir_ / "none2").string());
  ScopedEnv k("AWS_ACCESS_KEY_ID", std::nullopt), p("AWS_PROFILE", std::nullopt);
  EXPECT_TRUE(ReadAwsSettings().credentials.anonymous());
  const std::string bad = Write("bad", "aws_access_key_id = x\n");
  ScopedEnv c2("AWS_SHARED_CREDENTIALS_FILE", bad);
  try {
    ReadAwsSettings();
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(std::string(err.what()), bad + ":1: expected 'key = value' inside a [section]");
  }
  ScopedEnv k2("AWS_ACCESS_KEY_ID", "AKID"), s2("AWS_SECRET_ACCESS_KEY", std::nullopt);
  EXPECT_THROW(ReadAwsSettings(), Error);
}

}  // namespace
}  // namespace t5xx::storage
