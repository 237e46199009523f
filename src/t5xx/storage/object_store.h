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
  virtual ~ObjectStore() = default;
  // The object's bytes; nullopt when it does not exist.
  virtual std::optional<std::string> Get(const std::string& object) = 0;
  // Bytes [offset, offset + length) (fewer at its end); nullopt when the
  // object does not exist.
  virtual std::optional<std::string> GetRange(const std::string& object, uint64_t offset,
                                              uint64_t length) = 0;
  // Creates or replaces the object; visible to readers only complete.
  virtual void Put(const std::string& object, std::string_view data) = 0;
  // The object's size; nullopt when it does not exist.
  virtual std::optional<uint64_t> Size(const std::string& object) = 0;
  // Objects whose names start with `prefix`; with `delimiter` '/', only one
  // level (deeper names folded into `prefixes`).
  virtual Listing List(const std::string& prefix, bool one_level) = 0;
  // Deletes the object (no error when it does not exist).
  virtual void Delete(const std::string& object) = 0;
};

// A large object whose first `first.size()` bytes (of `total`) came with its
// first answer: the rest fetched with GetRange in `part_bytes` parts by
// `parallel` threads (what boto3's and gcloud's transfer managers do);
// returns the whole object. Throws t5xx::Error naming `url` when a part
// comes back short (the object changed while being read).
std::string ReadRestInParallel(ObjectStore& store, const std::string& url, const std::string& object,
                               std::string first, uint64_t total, uint64_t part_bytes, int parallel);

// The driver for gs:// or s3:// `bucket` (`scheme` "gs" or "s3"), shared by
// every caller in the process (credentials and connections are reused).
ObjectStore& StoreFor(const std::string& scheme, const std::string& bucket);

}  // namespace t5xx::storage
