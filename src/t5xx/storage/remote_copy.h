// Local copies of object-storage files and directories (gs://, s3://) for
// the readers that read local files (SentencePiece, the TFDS and
// checkpoint readers): `gs://BUCKET/PATH` is read from
//   1. `<data_dir>/BUCKET/PATH` when that exists -- an offline mirror, so
//      `gsutil -m cp -r gs://t5-data/vocabs <data_dir>/t5-data/` serves t5x's
//      and t5's vocabulary paths (gs://t5-data/vocabs/...) unchanged;
//   2. else the bucket itself (storage.h), downloaded once into the object
//      cache `<T5XX_OBJECT_CACHE or ~/.cache/t5xx/objects>/<scheme>/BUCKET/PATH`
//      (a directory: every object under it, in parallel), and downloaded
//      again when the sizes in the bucket differ from the cached files.
// One place for the rule: model gins' vocabularies (seqio_gin), t5's task
// catalog (catalog/), restored checkpoints (run/). Framework-free.
#pragma once

#include <optional>
#include <string>

namespace t5xx {

// Whether `path` names object storage: "gs://..." or "s3://...".
bool IsRemotePath(const std::string& path);

// "<data_dir>/BUCKET/PATH" for "gs://BUCKET/PATH" (or s3://); `path` itself
// when it is not remote. Throws t5xx::Error for a remote path without a
// bucket or object ("gs://", "gs://bucket").
std::string RemoteCopyPath(const std::string& path, const std::string& data_dir);

// The local file or directory to read for `path`: `path` when it is not
// remote; the copy under `data_dir` when it exists; else the object cache's
// copy of the file or directory at `path`; nullopt when the bucket has
// neither. Throws t5xx::Error (naming the URL) when the bucket cannot be
// read: no such bucket, refused credentials, the store down.
std::optional<std::string> ReadableCopy(const std::string& path, const std::string& data_dir);

// The object cache's copy of the file or directory at remote `path`
// (downloaded when missing or of another size), nullopt when the bucket has
// neither. Throws t5xx::Error naming the URL when the bucket cannot be read.
std::optional<std::string> CachedCopy(const std::string& path);

// The object cache's root: $T5XX_OBJECT_CACHE, else ~/.cache/t5xx/objects.
std::string ObjectCacheDir();

// `text` with every path into the object cache's copies
// (<cache>/<gs|s3>/BUCKET/...) and staging directories
// (<cache>/staging/<gs|s3>/BUCKET/...) written as the URL it stands for:
// what messages, logs and records show a user.
std::string WithUrls(std::string text);

// The data directory of a run (--data_dir), for readers that are not given
// one (a checkpoint path bound in gin); "" until set. Thread-safe.
void SetRemoteCopyDataDir(const std::string& data_dir);
std::string RemoteCopyDataDir();
// `path` itself unless it is remote; then ReadableCopy under
// RemoteCopyDataDir(), or `path` when the bucket has nothing there.
std::string LocalCopyIfAny(const std::string& path);

// The error for a remote `path` that neither its copy under `data_dir` nor
// the bucket has: names the path, what reads it (`what`, e.g. "t5's
// default vocabulary") and where the copy was looked for.
// `directory`: a directory was expected.
std::string MissingRemoteCopyMessage(const std::string& path, const std::string& data_dir,
                                     const std::string& what, bool directory = false);

}  // namespace t5xx
