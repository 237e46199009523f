// See remote_copy.h.
#include "t5xx/util/files/remote_copy.h"

#include <filesystem>
#include <mutex>

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

std::optional<std::string> ReadableCopy(const std::string& path, const std::string& data_dir) {
  if (!IsRemotePath(path)) return path;
  std::string local = RemoteCopyPath(path, data_dir);
  std::error_code ec;
  if (std::filesystem::exists(local, ec)) return local;
  return std::nullopt;
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
  const std::string dir = RemoteCopyDataDir();
  if (dir.empty()) return path;
  return ReadableCopy(path, dir).value_or(path);
}

std::string MissingRemoteCopyMessage(const std::string& path, const std::string& data_dir,
                                     const std::string& what, bool directory) {
  const std::string local = RemoteCopyPath(path, data_dir);
  const std::string parent = std::filesystem::path(local).parent_path().string() + "/";
  std::string copy;
  if (StartsWith(path, "gs://")) {
    copy = directory ? "mkdir -p " + parent + " && gsutil -m cp -r " + path + " " + parent
                     : "gsutil cp " + path + " " + local;
  } else {
    copy = directory ? "aws s3 cp --recursive " + path + " " + local
                     : "aws s3 cp " + path + " " + local;
  }
  return what + " is " + path + ", and t5xx does not read object storage yet: it reads a "
         "local copy of it under --data_dir (" + local + "), which does not exist; make it "
         "with `" + copy + "` (or pass --data_dir=DIR where DIR/<bucket>/<path> holds one)";
}

}  // namespace t5xx
