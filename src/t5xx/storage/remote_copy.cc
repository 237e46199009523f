// See remote_copy.h.
#include "t5xx/storage/remote_copy.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <set>

#include "t5xx/storage/object_store.h"
#include "t5xx/storage/storage.h"
#include "t5xx/storage/url.h"
#include "t5xx/util/error.h"

namespace t5xx {
bool IsRemotePath(const std::string& path) {
  return storage::IsObjectStoreUrl(path);
}

namespace {

// Whether `name` (an object name or a part of one) is safe to place under a
// local directory: no "." or ".." segment, no empty segment, not absolute.
bool SafeRelativeName(const std::string& name) {
  if (name.empty() || name.front() == '/') return false;
  size_t b = 0;
  while (b <= name.size()) {
    size_t e = name.find('/', b);
    if (e == std::string::npos) e = name.size();
    const std::string seg = name.substr(b, e - b);
    if (seg.empty() || seg == "." || seg == "..") return false;
    b = e + 1;
  }
  return true;
}

}  // namespace

std::string RemoteCopyPath(const std::string& path, const std::string& data_dir) {
  if (!IsRemotePath(path)) return path;
  const storage::Url u = storage::ParseUrl(path);  // (names a missing bucket, '//')
  T5XX_CHECK(!u.object.empty(), "'" + path + "' names no object: give " + u.scheme_name() +
                                    "://BUCKET/PATH");
  T5XX_CHECK(SafeRelativeName(u.object),
             "'" + path + "' has a '.' or '..' segment: object stores keep such names as they "
             "are, and t5xx will not copy them into a local directory; give the object's name");
  return (std::filesystem::path(data_dir) / u.bucket / u.object).string();
}

std::string ObjectCacheDir() {
  if (const char* d = std::getenv("T5XX_OBJECT_CACHE"); d != nullptr && *d != '\0') return d;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "/tmp") + "/.cache/t5xx/objects";
}

namespace {

// Where the cache keeps the version (ETag or generation) of the object it
// copied to `local` (beside the copies, not among them).
std::string VersionFile(const std::string& local) {
  const std::string root = ObjectCacheDir();
  const std::string rel = local.rfind(root, 0) == 0 ? local.substr(root.size()) : local;
  return root + "/.versions" + rel;
}

// Downloads `info` of `store` to `local` unless the copy there is of the
// same version (ETag / generation, else size).
void Fetch(storage::ObjectStore& store, const std::string& url, const storage::ObjectInfo& info,
           const std::string& local) {
  std::error_code ec;
  const std::string version = info.version.empty() ? "size " + std::to_string(info.size) : info.version;
  const std::string vfile = VersionFile(local);
  if (std::filesystem::is_regular_file(local, ec) && std::filesystem::file_size(local, ec) == info.size &&
      storage::ReadIfExists(vfile).value_or("") == version) {
    return;
  }
  std::optional<std::string> data = store.Get(info.name);
  T5XX_CHECK(data.has_value(), "cannot read " + url + ": it was deleted while being copied");
  storage::WriteFile(local, *data);
  storage::WriteFile(vfile, version);
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
  // One listing gives the file, or the directory's objects, with versions.
  const std::vector<storage::ObjectInfo> listed = store.List(u.object, false).objects;
  for (const storage::ObjectInfo& o : listed) {
    if (o.name == u.object) {
      Fetch(store, path, o, cached);
      return cached;
    }
  }
  std::vector<storage::ObjectInfo> objects;
  for (const storage::ObjectInfo& o : listed) {
    if (o.name.rfind(u.object + "/", 0) != 0) continue;
    const std::string rel = o.name.substr(u.object.size() + 1);
    // A "folder" marker (consoles, rclone, Hadoop write "dir/"): no file.
    if (rel.empty() || (o.name.back() == '/' && o.size == 0)) continue;
    T5XX_CHECK(SafeRelativeName(rel), "cannot copy " + path + ": the bucket holds the object '" + o.name +
                                          "', whose name has a '.', '..' or empty segment; t5xx "
                                          "will not place it in a local directory");
    objects.push_back(o);
  }
  if (objects.empty()) return std::nullopt;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < objects.size();) {
      const std::string rel = objects[i].name.substr(u.object.size() + 1);
      Fetch(store, path + "/" + rel, objects[i], cached + "/" + rel);
    }
  };
  std::vector<std::future<void>> jobs;
  for (size_t t = 0; t < std::min<size_t>(8, objects.size()); ++t) {
    jobs.push_back(std::async(std::launch::async, worker));
  }
  for (auto& j : jobs) j.get();
  // Files the bucket no longer has leave the copy.
  std::set<std::string> keep;
  for (const storage::ObjectInfo& o : objects) keep.insert(cached + "/" + o.name.substr(u.object.size() + 1));
  std::error_code ec;
  std::vector<std::filesystem::path> stale;
  for (auto it = std::filesystem::recursive_directory_iterator(cached, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && !keep.count(it->path().string())) stale.push_back(it->path());
  }
  for (const auto& p : stale) std::filesystem::remove(p, ec);
  return cached;
}

std::string WithUrls(std::string text) {
  const std::string root = ObjectCacheDir() + "/";
  for (const char* scheme : {"gs", "s3"}) {
    for (const std::string& local : {root + "staging/" + scheme + "/", root + scheme + "/"}) {
      const std::string url = std::string(scheme) + "://";
      for (size_t at; (at = text.find(local)) != std::string::npos;) text.replace(at, local.size(), url);
    }
  }
  return text;
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
  if (!IsRemotePath(path)) {
    // file:// is local; another scheme is named (storage::ParseUrl).
    return path.find("://") == std::string::npos ? path : storage::ParseUrl(path).path;
  }
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
