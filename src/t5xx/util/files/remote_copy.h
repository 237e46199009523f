// Local copies of object-storage files (gs://, s3://) that t5xx cannot read
// over the network yet: `gs://BUCKET/PATH` is looked for as
// `<data_dir>/BUCKET/PATH`, so `gsutil -m cp -r gs://t5-data/vocabs
// <data_dir>/t5-data/` makes t5x's and t5's vocabulary paths
// (gs://t5-data/vocabs/cc_all.32000/sentencepiece.model) resolve unchanged.
// One place for the rule: model gins' vocabularies (seqio_gin) and t5's
// task catalog (catalog/) use it. Framework-free: no libtorch.
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
// remote; the copy under `data_dir` when it exists; nullopt otherwise.
std::optional<std::string> ReadableCopy(const std::string& path, const std::string& data_dir);

// The data directory of a run (--data_dir), for readers that are not given
// one (a checkpoint path bound in gin); "" until set. Thread-safe.
void SetRemoteCopyDataDir(const std::string& data_dir);
std::string RemoteCopyDataDir();
// `path` itself unless it is remote and its copy under RemoteCopyDataDir()
// exists; then the copy.
std::string LocalCopyIfAny(const std::string& path);

// The error for a remote `path` without a local copy: names the path, what
// reads it (`what`, e.g. "t5's default vocabulary"), where the copy was
// looked for, and the gsutil/aws command that makes it.
// `directory`: the copy command copies a directory (gsutil -m cp -r).
std::string MissingRemoteCopyMessage(const std::string& path, const std::string& data_dir,
                                     const std::string& what, bool directory = false);

}  // namespace t5xx
