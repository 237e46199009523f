// MODEL_DIR in a bucket (gs://BUCKET/DIR, s3://BUCKET/DIR): the run works
// in MODEL_DIR's local staging directory (storage/staged_output.h) exactly
// as in a local MODEL_DIR, and each checkpoint, once committed there, is
// published to the bucket with a commit protocol object stores can keep
// (they have no rename):
//   1. every file of checkpoint_<N>/ is uploaded (8 at a time; large ones
//      as multipart uploads, each visible only whole),
//   2. the other files that changed (summaries written up to this step),
//   3. then its commit marker: the legacy layout's msgpack `checkpoint`
//      index (what t5x's restore opens), or for an Orbax checkpoint
//      `commit_success.txt` (what Orbax writes last on GCS and what its
//      readers take as "finalized").
// While it uploads (or deletes) checkpoint_<N>/, t5xx keeps an object
// checkpoint_<N>.t5xx-incomplete beside it: a prefix without its marker and
// with that object is an upload (or deletion) cut short, never restored and
// deleted by the next run; one without either is another program's, left
// alone (an Orbax checkpoint with _CHECKPOINT_METADATA counts as committed:
// off GCS, Orbax commits by a rename and writes no commit_success.txt).
// Retention deletes the marker first, then the rest. The other files (config.gin, TensorBoard
// event files, inference_eval outputs) are uploaded whole whenever they
// changed (after each checkpoint and at the end of the run), as
// TensorFlow's GCS file system uploads a gfile on flush.
// Framework-free.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "t5xx/storage/staged_output.h"

namespace t5xx::checkpoints {

// The checkpoint_<N> prefixes under a bucket directory `url`, by the
// rules above: committed (a marker, or Orbax's _CHECKPOINT_METADATA without
// t5xx's .t5xx-incomplete), left unfinished by t5xx, another program's
// unfinished ones, and temporary (.tmp-) names. Throws t5xx::Error naming
// the URL when it cannot be listed.
struct BucketCheckpoints {
  std::set<int64_t> committed;
  std::set<int64_t> t5xx_unfinished;
  std::set<int64_t> incomplete_markers;  // checkpoint_<N>.t5xx-incomplete objects
  std::vector<int64_t> foreign_unfinished;
  std::vector<std::string> temporary;  // names
};
BucketCheckpoints ListBucketCheckpoints(const std::string& url);

// For utils.RestoreCheckpointConfig mode 'latest' on a gs:// or s3://
// directory: a local directory holding a copy of only its newest committed
// checkpoint (through the object cache), or nullopt when it has none.
std::optional<std::string> LatestCheckpointCopy(const std::string& url);

// "checkpoint" for a legacy checkpoint directory, "commit_success.txt" for
// an Orbax one (orbax_checkpoint.h's IsOrbaxCheckpoint).
std::string CommitMarkerOf(const std::string& checkpoint_dir);

class BucketModelDir {
 public:
  // `url`: gs://BUCKET/DIR or s3://BUCKET/DIR. Throws t5xx::Error naming
  // the URL for another scheme or a bucket's root.
  explicit BucketModelDir(const std::string& url);

  const std::string& url() const { return uploader_.url(); }
  // The staging directory the run uses as its MODEL_DIR.
  const std::string& local() const { return uploader_.local_dir(); }

  // At start-up, in every process (serialised by a lock file beside the
  // staging directory): makes the staging directory agree with the
  // bucket, which is the truth --
  //   - deletes the bucket's checkpoint_<N>/ prefixes without a commit
  //     marker (uploads a killed run cut short) and its .tmp- prefixes;
  //   - removes staged checkpoints the bucket has not committed;
  //   - downloads the newest committed checkpoint when it is not staged
  //     (through the object cache), and stands in for older ones with
  //     empty directories, so retention counts them as t5x would.
  // Returns one line per thing it did, for the log. Throws t5xx::Error
  // naming the URL when the bucket cannot be listed or written (no such
  // bucket, refused credentials, the store down past the retry budget).
  std::vector<std::string> Reconcile();

  // The committing process, after checkpoint_<step> was committed in the
  // staging directory and retention deleted `deleted` there (their local
  // paths, as ApplyRetention returns them): uploads the checkpoint, its
  // marker last; deletes in the bucket what retention deleted (markers
  // first); then uploads the other files that changed (SyncFiles). Throws
  // t5xx::Error naming the URL that failed; the bucket's earlier
  // checkpoints are intact. Returns "published to URL (X MiB uploaded,
  // Y s after the local commit)".
  std::string Publish(int64_t step, const std::vector<std::string>& deleted);

  // From now on, the files of a checkpoint being written in the staging
  // directory by this process (its arrays: the files in sub-directories of
  // checkpoint_<N>.tmp-*) are uploaded as each is written, beside the
  // writing; Publish then waits for them and uploads the rest. Call it in
  // the committing process only.
  void UploadWhileWriting();

  // Uploads the files outside checkpoint directories that changed since
  // their last upload (config.gin, event files, inference_eval outputs).
  void SyncFiles();


 private:
  std::string IncompleteMarker(int64_t step) const;
  // checkpoint_<step>.t5xx-incomplete written (once) / deleted.
  void MarkIncomplete(int64_t step);
  void UnmarkIncomplete(int64_t step);

  storage::TreeUploader uploader_;
  std::mutex mu_;
  std::set<int64_t> marked_incomplete_;
  int observer_ = 0;  // checkpoints::AddFileObserver's id, 0: none
  uint64_t published_bytes_ = 0;  // uploader_.bytes_uploaded() after the last Publish

 public:
  ~BucketModelDir();
};

}  // namespace t5xx::checkpoints
