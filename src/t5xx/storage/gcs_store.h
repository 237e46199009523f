// The gs:// driver: Cloud Storage's JSON API (objects get with Range and
// alt=media, media uploads, metadata for sizes, list with prefix/delimiter
// and page tokens, delete) over http_client.h, authorised by gcs_auth.h.
// STORAGE_EMULATOR_HOST points it at an emulator (http://host:port or
// host:port), as Google's client libraries do. Framework-free.
#pragma once

#include <memory>
#include <string>

#include "t5xx/storage/gcs_auth.h"
#include "t5xx/storage/http_client.h"
#include "t5xx/storage/object_store.h"

namespace t5xx::storage {

class GcsStore : public ObjectStore {
 public:
  // `endpoint`: "https://storage.googleapis.com" or the emulator's.
  GcsStore(std::string bucket, std::string endpoint, std::shared_ptr<GcsAuth> auth);
  void Put(const std::string& object, std::string_view data) override;
  std::optional<uint64_t> Size(const std::string& object) override;
  Listing List(const std::string& prefix, bool one_level) override;
  void Delete(const std::string& object) override;
  std::string UrlFor(const std::string& object) const override;

  // The endpoint of the environment: STORAGE_EMULATOR_HOST or Google's.
  static std::string EndpointFromEnvironment();

 private:
  std::optional<HttpResponse> GetBytes(const std::string& object, uint64_t first, uint64_t last) override;
  HttpResponse Send(const std::string& method, const std::string& url, std::string_view body,
                    std::vector<std::pair<std::string, std::string>> headers, const std::string& what);
  [[noreturn]] void Fail(const HttpResponse& r, const std::string& what,
                         const std::string& object) const override;
  // 404 for an object: nullopt when the bucket exists, else the error.
  void CheckBucket(const std::string& what, const std::string& object);
  std::string ObjectUrl(const std::string& object) const;

  std::string bucket_, endpoint_;
  std::shared_ptr<GcsAuth> auth_;
  bool bucket_seen_ = false;
};

}  // namespace t5xx::storage
