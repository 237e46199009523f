// Outputs that live in a bucket (MODEL_DIR, INFER_OUTPUT_DIR,
// EVAL_OUTPUT_DIR, cache_tasks' --output_cache_dir on gs:// or s3://) are
// written in a local staging directory and uploaded from it: what
// TensorFlow's GCS file system does for gfile writes (a local buffer file,
// uploaded whole on flush and close), because object stores have no append
// and no rename. The staging directory of `gs://b/run` is
// `<object cache>/staging/gs/b/run` (remote_copy.h's ObjectCacheDir), so a
// run restarted on the same machine finds its files again.
//
// An object becomes visible only whole (one PUT or a multipart upload);
// UploadTree's `last` files (commit markers) go up only once every other
// file has, so a reader that waits for the marker never sees a part.
// Framework-free.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <thread>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace t5xx::storage {

// An exclusive lock on a staging directory (flock on `dir`.lock, released
// when the process dies), for the processes of one host that share it.
class StagingLock {
 public:
  explicit StagingLock(const std::string& dir);
  ~StagingLock();
  StagingLock(const StagingLock&) = delete;
  StagingLock& operator=(const StagingLock&) = delete;

 private:
  int fd_;
};

// The local staging directory of output URL `url` (gs:// or s3://); throws
// t5xx::Error naming `url` for a URL without an object path.
std::string StagingDir(const std::string& url);

// Uploads the files of a local directory tree to the same relative names
// under a URL, each only when it changed (size or modification time) since
// this uploader last uploaded it. Thread-safe.
class TreeUploader {
 public:
  TreeUploader(std::string local_dir, std::string url);

  const std::string& local_dir() const { return local_; }
  const std::string& url() const { return url_; }

  // Makes local_dir() a copy of the bucket's objects under url() -- the
  // bucket is the truth: downloads those missing locally, of another size,
  // or small (< 1 MiB, e.g. a metrics.jsonl another machine appended to),
  // deletes the local files the bucket lacks, and counts every file as
  // uploaded. Names `skip` refuses (relative to local_dir()) are left as
  // they are on both sides. Call it under a StagingLock. Throws t5xx::Error
  // naming the URL that failed.
  void SyncDown(const std::function<bool(const std::string&)>& skip = nullptr);

  // Uploads the regular files under local_dir()/`sub` ("" = all) that
  // changed, `parallel` at a time, except those `skip` (given the name
  // relative to local_dir()) refuses; the names in `last` (relative to
  // local_dir()) after all the others, in order. Returns the number of
  // files uploaded. Throws t5xx::Error naming the file or URL that failed
  // (the store down past the retry budget, refused credentials); what was
  // uploaded before stays.
  size_t Upload(const std::string& sub, const std::vector<std::string>& last = {},
                const std::function<bool(const std::string&)>& skip = nullptr, int parallel = 8);

  // Uploads `data` (the content of `local_file`, just written; it becomes
  // local_dir()/`rel`, e.g. by the rename that commits a checkpoint) as
  // `rel` on a background thread (8 at once; blocks while 256 MiB wait),
  // then counts local_dir()/`rel` as uploaded with `local_file`'s size and
  // time as they are now (a rename keeps them).
  void UploadInBackground(const std::string& rel, std::string data, const std::string& local_file);
  // Waits until the background uploads are done; rethrows the first error.
  void WaitForBackground();

  // Bytes uploaded so far.
  uint64_t bytes_uploaded() const { return bytes_.load(); }

  // Forgets that the files under `sub` were uploaded (they were deleted in
  // the bucket).
  void Forget(const std::string& sub);

 private:
  struct Stamp {
    uint64_t size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const Stamp& o) const { return size == o.size && mtime_ns == o.mtime_ns; }
  };
  static Stamp StampOf(const std::string& file);
  bool UploadOne(const std::string& rel);  // false: unchanged, not uploaded

  std::string local_;
  std::string url_;
  std::mutex mu_;
  std::map<std::string, Stamp> uploaded_;
  std::atomic<uint64_t> bytes_{0};
  // Background uploads (UploadInBackground).
  struct Job {
    std::string rel;
    std::string data;
    Stamp stamp;
  };
  void BackgroundWorker();
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  uint64_t queued_bytes_ = 0;
  int busy_ = 0;
  bool stopping_ = false;
  std::exception_ptr background_error_;
  std::vector<std::thread> workers_;

 public:
  ~TreeUploader();
  TreeUploader(const TreeUploader&) = delete;
  TreeUploader& operator=(const TreeUploader&) = delete;
};

// An output directory (INFER_OUTPUT_DIR, EVAL_OUTPUT_DIR, cache_tasks'
// --output_cache_dir): the local path (file:// removed) of a local one; for
// gs:// or s3://, its staging directory, remembered for
// UploadStagedOutputs. Throws t5xx::Error naming `what` and `path` for a
// scheme t5xx does not know and for a bucket's root.
std::string StagedOutputPath(const std::string& path, const std::string& what);

// Uploads the files that changed in every staging directory
// StagedOutputPath returned in this process (call it once the outputs are
// complete). Returns one line per directory: "N files uploaded to URL".
// Throws t5xx::Error naming the URL that failed.
std::vector<std::string> UploadStagedOutputs();

// Deletes every object under `url` + "/", the names in `first` (relative to
// `url`) before the others, so a reader that needs them (commit markers)
// stops seeing the directory before any part of it goes. Throws
// t5xx::Error naming the URL.
void DeleteTree(const std::string& url, const std::vector<std::string>& first = {});

}  // namespace t5xx::storage
