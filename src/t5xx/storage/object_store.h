// The operations t5xx needs of a bucket (TensorStore's kvstore, narrowed):
// whole and ranged reads, writes of whole objects, size, listing under a
// prefix, delete. One driver per service: GcsStore (gcs_store.h), S3Store
// (s3_store.h). Object names never start with '/'. Framework-free.
//
// Errors: a missing object is an empty optional / false, never an
// exception; everything else (no such bucket, no permission, bad
// credentials, the store down past the retry budget) throws t5xx::Error
// naming the URL and what failed -- never a secret.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "t5xx/storage/http_client.h"

namespace t5xx::storage {

struct ObjectInfo {
  std::string name;  // the full object name
  uint64_t size = 0;
  // What changes when the object is replaced: S3's ETag, Cloud Storage's
  // generation ("" when the store gives neither).
  std::string version;
};

struct Listing {
  std::vector<ObjectInfo> objects;    // directly under the prefix (with '/'
                                      // as delimiter) or all of them
  std::vector<std::string> prefixes;  // "sub/dirs/" one level down (with
                                      // the delimiter only), full names
};

class ObjectStore {
 public:
  // Large objects move in parts of kPartBytes, kParallelParts at a time:
  // a Get of a larger object fetches the rest of its ranges in parallel
  // after the first (what boto3's and gcloud's transfer managers do).
  static constexpr uint64_t kPartBytes = uint64_t{16} << 20;
  static constexpr int kParallelParts = 8;

  virtual ~ObjectStore() = default;
  // The object's bytes; nullopt when it does not exist.
  std::optional<std::string> Get(const std::string& object);
  // Bytes [offset, offset + length) (fewer at its end); nullopt when the
  // object does not exist.
  std::optional<std::string> GetRange(const std::string& object, uint64_t offset, uint64_t length);
  // Creates or replaces the object; visible to readers only complete.
  virtual void Put(const std::string& object, std::string_view data) = 0;
  // The object's size; nullopt when it does not exist.
  virtual std::optional<uint64_t> Size(const std::string& object) = 0;
  // Objects whose names start with `prefix`; with `delimiter` '/', only one
  // level (deeper names folded into `prefixes`).
  virtual Listing List(const std::string& prefix, bool one_level) = 0;
  // Deletes the object (no error when it does not exist).
  virtual void Delete(const std::string& object) = 0;
  // "gs://bucket/object" or "s3://bucket/object", for messages.
  virtual std::string UrlFor(const std::string& object) const = 0;

 protected:
  // One GET with "Range: bytes=first-last" (RangeHeader): nullopt when the
  // object does not exist, else the answer as it came (200, 206 and 416
  // are read; any other status goes to Fail).
  virtual std::optional<HttpResponse> GetBytes(const std::string& object, uint64_t first,
                                               uint64_t last) = 0;
  // Throws t5xx::Error for the failed answer `r` to `what` ("cannot read")
  // on `object`: the URL, the store's status and code, the usual fix.
  [[noreturn]] virtual void Fail(const HttpResponse& r, const std::string& what,
                                 const std::string& object) const = 0;
  // "bytes=first-last", the Range header's value.
  static std::string RangeHeader(uint64_t first, uint64_t last);

 private:
  // The rest of a large object whose first `first.size()` bytes (of
  // `total`) came with its first answer, fetched with GetRange; returns the
  // whole object. Throws t5xx::Error naming the URL when a part comes back
  // short (the object changed while being read).
  std::string ReadRestInParallel(const std::string& object, std::string first, uint64_t total);
};

// The driver for gs:// or s3:// `bucket` (`scheme` "gs" or "s3"), shared by
// every caller in the process (credentials and connections are reused).
ObjectStore& StoreFor(const std::string& scheme, const std::string& bucket);

}  // namespace t5xx::storage
