// See remote_copy.h.
#include "t5xx/storage/remote_copy.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>

#include "t5xx/storage/object_store.h"
#include "t5xx/storage/storage.h"
#include "t5xx/util/error.h"

namespace t5xx {
namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

bool IsRemotePath(const std::string& path) {
  return StartsWith(path, "gs://") || StartsWith(path, "s3://");
}

std::string RemoteCopyPath(const std::string& path, const std::string& data_dir) {
  if (!IsRemotePath(path)) return path;
  const std::string rest = path.substr(5);  // "gs://" and "s3://" are 5 characters
  const size_t slash = rest.find('/');
  T5XX_CHECK(slash != std::string::npos && slash > 0 && slash + 1 < rest.size(),
             "'" + path + "' names no object: give gs://BUCKET/PATH");
  return (std::filesystem::path(data_dir) / rest.substr(0, slash) / rest.substr(slash + 1))
      .string();
}

namespace {

std::string ObjectCacheDir() {
  if (const char* d = std::getenv("T5XX_OBJECT_CACHE"); d != nullptr && *d != '\0') return d;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "/tmp") + "/.cache/t5xx/objects";
}

// Downloads `object` of `store` to `local` unless a file of `size` bytes
// is there already.
void Fetch(storage::ObjectStore& store, const std::string& url, const std::string& object,
           uint64_t size, const std::string& local) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(local, ec) && std::filesystem::file_size(local, ec) == size) return;
  std::optional<std::string> data = store.Get(object);
  T5XX_CHECK(data.has_value(), "cannot read " + url + ": it was deleted while being copied");
  storage::WriteFile(local, *data);
}

}  // namespace

std::optional<std::string> CachedCopy(const std::string& path);

std::optional<std::string> ReadableCopy(const std::string& path, const std::string& data_dir) {
  if (!IsRemotePath(path)) return path;
  std::string local = RemoteCopyPath(path, data_dir);
  std::error_code ec;
  if (!data_dir.empty() && std::filesystem::exists(local, ec)) return local;
  // The bucket itself, through the object cache.
  try {
    return CachedCopy(path);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) +
                (data_dir.empty() ? std::string()
                                  : "; nor is there a copy of " + path + " under --data_dir (" + local + ")"));
  }
}

std::optional<std::string> CachedCopy(const std::string& path) {
  const storage::Url u = storage::ParseUrl(path);
  storage::ObjectStore& store = storage::StoreFor(u.scheme_name(), u.bucket);
  const std::string cached = RemoteCopyPath(path, ObjectCacheDir() + "/" + u.scheme_name());
  if (std::optional<uint64_t> size = store.Size(u.object)) {
    Fetch(store, path, u.object, *size, cached);
    return cached;
  }
  const std::vector<storage::ObjectInfo> objects = store.List(u.object + "/", false).objects;
  if (objects.empty()) return std::nullopt;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < objects.size();) {
      const std::string rel = objects[i].name.substr(u.object.size() + 1);
      Fetch(store, path + "/" + rel, objects[i].name, objects[i].size, cached + "/" + rel);
    }
  };
  std::vector<std::future<void>> jobs;
  for (size_t t = 0; t < std::min<size_t>(8, objects.size()); ++t) {
    jobs.push_back(std::async(std::launch::async, worker));
  }
  for (auto& j : jobs) j.get();
  return cached;
}

namespace {
std::mutex& DataDirMutex() {
  static std::mutex mu;
  return mu;
}
std::string& DataDir() {
  static std::string dir;
  return dir;
}
}  // namespace

void SetRemoteCopyDataDir(const std::string& data_dir) {
  std::lock_guard<std::mutex> lock(DataDirMutex());
  DataDir() = data_dir;
}

std::string RemoteCopyDataDir() {
  std::lock_guard<std::mutex> lock(DataDirMutex());
  return DataDir();
}

std::string LocalCopyIfAny(const std::string& path) {
  if (!IsRemotePath(path)) return path;
  return ReadableCopy(path, RemoteCopyDataDir()).value_or(path);
}

std::string MissingRemoteCopyMessage(const std::string& path, const std::string& data_dir,
                                     const std::string& what, bool directory) {
  return what + " is " + path + ", which does not exist: the bucket has no " +
         (directory ? "directory" : "file") + " there" +
         (data_dir.empty() ? std::string()
                           : " and there is no copy of it under --data_dir (" +
                                 RemoteCopyPath(path, data_dir) + ")") +
         "; correct the path";
}

}  // namespace t5xx
