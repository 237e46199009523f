// Staging directories and tree uploads (see staged_output.h).
#include "t5xx/storage/staged_output.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <future>
#include <memory>
#include <set>

#include "t5xx/storage/object_store.h"
#include "t5xx/storage/remote_copy.h"
#include "t5xx/storage/storage.h"
#include "t5xx/storage/url.h"
#include "t5xx/util/error.h"

namespace t5xx::storage {
namespace fs = std::filesystem;

std::string StagingDir(const std::string& url) {
  const Url u = ParseUrl(url);
  T5XX_CHECK(u.remote(), "StagingDir: '" + url + "' is not a gs:// or s3:// URL");
  T5XX_CHECK(!u.object.empty(), "'" + url + "' names a bucket, not a directory in it; give "
                                "gs://BUCKET/DIR or s3://BUCKET/DIR");
  return ObjectCacheDir() + "/staging/" + u.scheme_name() + "/" + u.bucket + "/" + u.object;
}

TreeUploader::TreeUploader(std::string local_dir, std::string url)
    : local_(std::move(local_dir)), url_(std::move(url)) {
  while (url_.size() > 5 && url_.back() == '/') url_.pop_back();
}

TreeUploader::Stamp TreeUploader::StampOf(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return {};
  return {static_cast<uint64_t>(st.st_size),
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

StagingLock::StagingLock(const std::string& dir)
    : fd_(::open((dir + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
  T5XX_CHECK(fd_ >= 0, "cannot open the lock file " + dir + ".lock: " + std::strerror(errno));
  while (::flock(fd_, LOCK_EX) != 0) {
    T5XX_CHECK(errno == EINTR, "cannot lock " + dir + ".lock: " + std::strerror(errno));
  }
}

StagingLock::~StagingLock() { ::close(fd_); }

void TreeUploader::SyncDown(const std::function<bool(const std::string&)>& skip) {
  const Url u = ParseUrl(url_);
  const std::string prefix = u.object + "/";
  ObjectStore& store = StoreFor(u.scheme_name(), u.bucket);
  std::map<std::string, ObjectInfo> remote;
  for (const ObjectInfo& o : store.List(prefix, false).objects) {
    const std::string rel = o.name.substr(prefix.size());
    // Folder markers and names that are no local path are not copied.
    if (rel.empty() || rel.back() == '/' || rel.front() == '/' || rel.find("//") != std::string::npos ||
        ("/" + rel + "/").find("/../") != std::string::npos || ("/" + rel + "/").find("/./") != std::string::npos ||
        (skip && skip(rel))) {
      continue;
    }
    remote[rel] = o;
  }
  std::vector<const ObjectInfo*> fetch;
  for (const auto& [rel, o] : remote) {
    const Stamp s = StampOf(local_ + "/" + rel);
    if (s.mtime_ns == 0 || s.size != o.size || o.size < (1u << 20)) fetch.push_back(&o);
  }
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < fetch.size();) {
      const std::string rel = fetch[i]->name.substr(prefix.size());
      std::optional<std::string> data = store.Get(fetch[i]->name);
      if (!data) continue;  // deleted meanwhile
      WriteFile(local_ + "/" + rel, *data);
    }
  };
  std::vector<std::future<void>> jobs;
  for (size_t t = 0; t < std::min<size_t>(8, fetch.size()); ++t) jobs.push_back(std::async(std::launch::async, worker));
  for (auto& j : jobs) j.get();
  // The local files the bucket lacks go; the rest count as uploaded.
  std::error_code ec;
  std::vector<fs::path> stale;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = fs::recursive_directory_iterator(local_, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string rel = fs::relative(it->path(), local_).generic_string();
    if (skip && skip(rel)) continue;
    if (remote.count(rel)) {
      uploaded_[rel] = StampOf(it->path().string());
    } else {
      stale.push_back(it->path());
    }
  }
  for (const fs::path& p : stale) fs::remove(p, ec);
}

bool TreeUploader::UploadOne(const std::string& rel) {
  const std::string file = local_ + "/" + rel;
  const Stamp before = StampOf(file);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = uploaded_.find(rel);
    if (it != uploaded_.end() && it->second == before) return false;
  }
  const std::optional<std::string> data = ReadIfExists(file);
  if (!data) return false;  // removed meanwhile: nothing to upload
  WriteFile(url_ + "/" + rel, *data);
  bytes_ += data->size();
  std::lock_guard<std::mutex> lock(mu_);
  uploaded_[rel] = before;
  return true;
}

size_t TreeUploader::Upload(const std::string& sub, const std::vector<std::string>& last,
                            const std::function<bool(const std::string&)>& skip, int parallel) {
  const fs::path root = sub.empty() ? fs::path(local_) : fs::path(local_) / sub;
  const std::set<std::string> later(last.begin(), last.end());
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string rel = fs::relative(it->path(), local_).generic_string();
    if (later.count(rel) || (skip && skip(rel))) continue;
    files.push_back(rel);
  }
  T5XX_CHECK(!ec || ec == std::errc::no_such_file_or_directory,
             "cannot list " + root.string() + " to upload it to " + url_ + ": " + ec.message());
  std::sort(files.begin(), files.end());
  std::atomic<size_t> next{0};
  std::atomic<size_t> count{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < files.size();) {
      if (UploadOne(files[i])) ++count;
    }
  };
  std::vector<std::future<void>> jobs;
  for (int t = 0; t < std::max(1, std::min<int>(parallel, static_cast<int>(files.size()))); ++t) {
    jobs.push_back(std::async(std::launch::async, worker));
  }
  std::exception_ptr failed;
  for (auto& j : jobs) {
    try {
      j.get();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
  for (const std::string& rel : last) {
    if (fs::is_regular_file(local_ + "/" + rel, ec)) {
      if (UploadOne(rel)) ++count;
    }
  }
  return count;
}

TreeUploader::~TreeUploader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void TreeUploader::UploadInBackground(const std::string& rel, std::string data,
                                      const std::string& local_file) {
  constexpr uint64_t kMaxQueued = 256ull << 20;
  const Stamp stamp = StampOf(local_file);
  std::unique_lock<std::mutex> lock(mu_);
  if (workers_.empty()) {
    for (int i = 0; i < 8; ++i) workers_.emplace_back([this] { BackgroundWorker(); });
  }
  cv_.wait(lock, [&] { return queued_bytes_ < kMaxQueued || jobs_.empty(); });
  queued_bytes_ += data.size();
  jobs_.push_back({rel, std::move(data), stamp});
  cv_.notify_all();
}

void TreeUploader::BackgroundWorker() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    ++busy_;
    lock.unlock();
    std::exception_ptr error;
    try {
      WriteFile(url_ + "/" + job.rel, job.data);
      bytes_ += job.data.size();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    --busy_;
    queued_bytes_ -= job.data.size();
    if (error) {
      if (!background_error_) background_error_ = error;
    } else {
      uploaded_[job.rel] = job.stamp;
    }
    cv_.notify_all();
  }
}

void TreeUploader::WaitForBackground() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return jobs_.empty() && busy_ == 0; });
  if (background_error_) std::rethrow_exception(std::exchange(background_error_, nullptr));
}

void TreeUploader::Forget(const std::string& sub) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string prefix = sub + "/";
  for (auto it = uploaded_.begin(); it != uploaded_.end();) {
    it = (it->first == sub || it->first.rfind(prefix, 0) == 0) ? uploaded_.erase(it) : std::next(it);
  }
}

namespace {
std::mutex& StagedMutex() {
  static std::mutex mu;
  return mu;
}
std::vector<std::unique_ptr<TreeUploader>>& Staged() {
  static std::vector<std::unique_ptr<TreeUploader>> staged;
  return staged;
}
}  // namespace

std::string StagedOutputPath(const std::string& path, const std::string& what) {
  const Url u = ParseUrl(path);
  if (!u.remote()) return u.path;
  T5XX_CHECK(!u.object.empty(), what + " '" + path + "' names a bucket, not a directory in it; give " +
                                    u.scheme_name() + "://BUCKET/DIR");
  const std::string local = StagingDir(path);
  std::lock_guard<std::mutex> lock(StagedMutex());
  for (const auto& t : Staged()) {
    if (t->url() == path) return local;
  }
  Staged().push_back(std::make_unique<TreeUploader>(local, path));
  // What the bucket holds already (an earlier run's outputs, maybe from
  // another machine) is what this run continues from.
  std::error_code ec;
  fs::create_directories(local, ec);
  T5XX_CHECK(!ec, what + " '" + path + "': cannot create its staging directory " + local + ": " + ec.message());
  StagingLock staging_lock(local);
  Staged().back()->SyncDown();
  return local;
}

std::vector<std::string> UploadStagedOutputs() {
  std::vector<std::string> lines;
  std::lock_guard<std::mutex> lock(StagedMutex());
  for (const auto& t : Staged()) {
    const size_t n = t->Upload("");
    lines.push_back(std::to_string(n) + " files uploaded to " + t->url() + " (staged in " + t->local_dir() + ")");
  }
  return lines;
}

void DeleteTree(const std::string& url, const std::vector<std::string>& first) {
  const Url u = ParseUrl(url);
  T5XX_CHECK(u.remote() && !u.object.empty(), "DeleteTree: '" + url + "' is not a directory in a bucket");
  ObjectStore& store = StoreFor(u.scheme_name(), u.bucket);
  for (const std::string& rel : first) store.Delete(u.object + "/" + rel);
  for (const ObjectInfo& o : store.List(u.object + "/", false).objects) store.Delete(o.name);
}

}  // namespace t5xx::storage
