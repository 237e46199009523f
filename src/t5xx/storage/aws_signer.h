// AWS credentials, region and endpoint as the AWS CLI and boto3 find them,
// and AWS Signature Version 4 for S3 requests
// (docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html).
// Framework-free.
#pragma once

#include <string>

#include "t5xx/storage/http_client.h"

namespace t5xx::storage {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // temporary credentials only
  std::string source;         // "environment", "~/.aws/credentials [profile]"; "" anonymous
  bool anonymous() const { return access_key_id.empty(); }
};

struct AwsSettings {
  AwsCredentials credentials;
  std::string region = "us-east-1";
  // "" for AWS itself (https://BUCKET.s3.REGION.amazonaws.com); else the
  // endpoint of an S3-compatible store, addressed path-style
  // (ENDPOINT/BUCKET/KEY) as boto3 does for a custom endpoint_url.
  std::string endpoint;
};

// From the environment, then the shared files, as boto3: AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; else profile AWS_PROFILE
// (default "default") of AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials);
// none: anonymous requests (public buckets). Region: AWS_REGION,
// AWS_DEFAULT_REGION, the profile's `region` in AWS_CONFIG_FILE
// (~/.aws/config), else us-east-1. Endpoint: AWS_ENDPOINT_URL_S3,
// AWS_ENDPOINT_URL, the profile's endpoint_url. Throws t5xx::Error naming
// the file and line for a credentials file it cannot parse, or a profile
// that AWS_PROFILE names but no file has.
AwsSettings ReadAwsSettings();

// Signs `r` for `service` ("s3") in `region` at `amz_date`
// ("20150830T123600Z"): adds host, x-amz-date, x-amz-content-sha256 (the
// given payload hash: hex SHA-256 of the body, or "UNSIGNED-PAYLOAD"),
// x-amz-security-token with temporary credentials, and Authorization.
// Anonymous credentials leave `r` unsigned. `r.url` must be encoded already
// (its path and query are signed as they are).
void SignV4(HttpRequest& r, const AwsCredentials& credentials, const std::string& region,
            const std::string& service, const std::string& amz_date,
            const std::string& payload_hash);

// The current UTC time as SigV4 writes it ("20150830T123600Z").
std::string AmzDateNow();

}  // namespace t5xx::storage
