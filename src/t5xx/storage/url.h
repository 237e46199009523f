// Where a path lives: a local file (a plain path or file://...), a Google
// Cloud Storage object (gs://BUCKET/OBJECT) or an S3 object
// (s3://BUCKET/KEY) -- the schemes tf.io.gfile and TensorStore's kvstores
// give t5x. Framework-free.
#pragma once

#include <string>

namespace t5xx::storage {

struct Url {
  enum class Scheme { kLocal, kGcs, kS3 };
  Scheme scheme = Scheme::kLocal;
  std::string path;    // kLocal: the file system path ("file://" removed)
  std::string bucket;  // kGcs/kS3: the bucket
  std::string object;  // kGcs/kS3: the object's name (key), "" for the bucket
                       // itself; never starts with '/'
  std::string text;    // the URL as given (for messages)

  bool remote() const { return scheme != Scheme::kLocal; }
  // "gs" or "s3" (or "file").
  const char* scheme_name() const;
  // "gs://bucket/object" (or the local path).
  std::string ToString() const;
};

// Parses `text`. A path without "://" is local; "file:///abs/path" and
// "file://relative" are local too. Throws t5xx::Error naming `text` for
// another scheme ("hdfs://...": t5xx reads local paths, file://, gs:// and
// s3://) and for gs:// or s3:// without a bucket.
Url ParseUrl(const std::string& text);

// Whether `text` names object storage (gs:// or s3://), without throwing.
bool IsObjectStoreUrl(const std::string& text);

// `base` + "/" + `name` (no doubled '/'), for local paths and URLs alike.
std::string JoinPath(const std::string& base, const std::string& name);

// The parent of `text` ("gs://b/a/c" -> "gs://b/a"; a bucket's root has
// itself as parent), for local paths and URLs alike.
std::string ParentPath(const std::string& text);

}  // namespace t5xx::storage
