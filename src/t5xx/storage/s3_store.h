// The s3:// driver: S3's REST API (GetObject with Range, PutObject,
// multipart uploads for large objects, HeadObject, ListObjectsV2,
// DeleteObject) signed with Signature Version 4, over http_client.h. Works
// with AWS and S3-compatible stores (MinIO, moto, Ceph) through
// AWS_ENDPOINT_URL(_S3). Framework-free.
//
// Large objects move in parallel parts: a Put of more than kPartBytes is a
// multipart upload of kPartBytes parts, a Get of an object larger than that
// fetches its ranges in parallel (what boto3's transfer manager does).
#pragma once

#include <string>

#include "t5xx/storage/aws_signer.h"
#include "t5xx/storage/object_store.h"

namespace t5xx::storage {

class S3Store : public ObjectStore {
 public:
  S3Store(std::string bucket, AwsSettings settings);
  void Put(const std::string& object, std::string_view data) override;
  std::optional<uint64_t> Size(const std::string& object) override;
  Listing List(const std::string& prefix, bool one_level) override;
  void Delete(const std::string& object) override;
  std::string UrlFor(const std::string& object) const override;

 private:
  std::optional<HttpResponse> GetBytes(const std::string& object, uint64_t first, uint64_t last) override;
  // The request URL for `object` ("" for the bucket) with `query` (encoded).
  std::string UrlOf(const std::string& object, const std::string& query) const;
  HttpResponse Send(const std::string& method, const std::string& object, const std::string& query,
                    std::string_view body, std::vector<std::pair<std::string, std::string>> headers,
                    const std::string& what);
  // Throws the error of a failed response (status and S3's <Code>, named
  // for `what` and the URL, with the fix for the usual causes).
  [[noreturn]] void Fail(const HttpResponse& r, const std::string& what,
                         const std::string& object) const override;
  void PutMultipart(const std::string& object, std::string_view data);

  std::string bucket_;
  AwsSettings settings_;
};

// The values of every <tag>...</tag> in `xml` (entities decoded), in order
// -- the few fields S3's XML answers carry.
std::vector<std::string> XmlValues(const std::string& xml, const std::string& tag);

}  // namespace t5xx::storage
