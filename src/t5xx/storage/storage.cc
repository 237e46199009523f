// Local and object-store files behind one interface (see storage.h).
#include "t5xx/storage/storage.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>

#include "t5xx/storage/gcs_store.h"
#include "t5xx/storage/s3_store.h"
#include "t5xx/util/error.h"

namespace t5xx::storage {
namespace fs = std::filesystem;

ObjectStore& StoreFor(const std::string& scheme, const std::string& bucket) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<ObjectStore>> stores;
  static std::shared_ptr<GcsAuth> gcs_auth;
  static std::optional<AwsSettings> aws;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<ObjectStore>& s = stores[scheme + "://" + bucket];
  if (!s) {
    if (scheme == "gs") {
      if (!gcs_auth) gcs_auth = std::make_shared<GcsAuth>();
      s = std::make_unique<GcsStore>(bucket, GcsStore::EndpointFromEnvironment(), gcs_auth);
    } else {
      if (!aws) aws = ReadAwsSettings();
      s = std::make_unique<S3Store>(bucket, *aws);
    }
  }
  return *s;
}

namespace {

ObjectStore& Store(const Url& u) { return StoreFor(u.scheme_name(), u.bucket); }

std::string Errno() { return std::strerror(errno); }

std::string DirPrefix(const Url& u) { return u.object.empty() ? "" : u.object + "/"; }

bool HasWildcard(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

}  // namespace

std::optional<std::string> ReadIfExists(const std::string& path) {
  const Url u = ParseUrl(path);
  if (u.remote()) {
    T5XX_CHECK(!u.object.empty(), "cannot read " + path + ": it names a bucket, not a file");
    return Store(u).Get(u.object);
  }
  std::error_code ec;
  if (!fs::exists(u.path, ec)) return std::nullopt;
  T5XX_CHECK(!fs::is_directory(u.path, ec), "cannot read " + path + ": it is a directory, not a file");
  std::ifstream in(u.path, std::ios::binary);
  T5XX_CHECK(static_cast<bool>(in), "cannot read " + path + ": " + Errno());
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  T5XX_CHECK(!in.bad(), "cannot read " + path + ": " + Errno());
  return data;
}

std::string ReadFile(const std::string& path, const std::string& what) {
  std::optional<std::string> data = ReadIfExists(path);
  T5XX_CHECK(data.has_value(), "cannot read " + what + " " + path + ": it does not exist");
  return std::move(*data);
}

std::string ReadRange(const std::string& path, uint64_t offset, uint64_t length,
                      const std::string& what) {
  const Url u = ParseUrl(path);
  std::optional<std::string> data;
  if (u.remote()) {
    data = Store(u).GetRange(u.object, offset, length);
  } else {
    std::ifstream in(u.path, std::ios::binary);
    if (in) {
      data.emplace(length, '\0');
      in.seekg(static_cast<std::streamoff>(offset));
      in.read(data->data(), static_cast<std::streamsize>(length));
      data->resize(in ? length : static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
    }
  }
  T5XX_CHECK(data.has_value(), "cannot read " + what + " " + path + ": it does not exist");
  T5XX_CHECK(data->size() == length,
             "cannot read " + what + " " + path + ": bytes " + std::to_string(offset) + "+" +
                 std::to_string(length) + " were asked for, but it ends " +
                 std::to_string(data->size()) + " bytes into that range; the file is truncated "
                 "or the reference is corrupt");
  return std::move(*data);
}

void WriteFile(const std::string& path, std::string_view data) {
  const Url u = ParseUrl(path);
  if (u.remote()) {
    Store(u).Put(u.object, data);
    return;
  }
  const fs::path p(u.path);
  if (p.has_parent_path()) MakeDirs(p.parent_path().string());
  thread_local std::mt19937_64 rng(std::random_device{}());
  const fs::path tmp = p.string() + ".tmp-" + std::to_string(rng() % 1000000000);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  T5XX_CHECK(fd >= 0, "cannot write " + path + ": " + Errno());
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = Errno();
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error("cannot write " + path + ": " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = Errno();
    ::unlink(tmp.c_str());
    throw Error("cannot write " + path + ": " + why);
  }
  if (::rename(tmp.c_str(), p.c_str()) != 0) {
    const std::string why = Errno();
    ::unlink(tmp.c_str());
    throw Error("cannot write " + path + ": " + why);
  }
}

std::optional<uint64_t> FileSize(const std::string& path) {
  const Url u = ParseUrl(path);
  if (u.remote()) return u.object.empty() ? std::nullopt : Store(u).Size(u.object);
  std::error_code ec;
  if (!fs::is_regular_file(u.path, ec)) return std::nullopt;
  return fs::file_size(u.path, ec);
}

bool IsDirectory(const std::string& path) {
  const Url u = ParseUrl(path);
  if (!u.remote()) {
    std::error_code ec;
    return fs::is_directory(u.path, ec);
  }
  const Listing l = Store(u).List(DirPrefix(u), true);
  return !l.objects.empty() || !l.prefixes.empty();
}

bool Exists(const std::string& path) { return FileSize(path).has_value() || IsDirectory(path); }

std::vector<std::string> ListDirectory(const std::string& path) {
  const Url u = ParseUrl(path);
  std::set<std::string> names;
  if (u.remote()) {
    const std::string prefix = DirPrefix(u);
    const Listing l = Store(u).List(prefix, true);
    for (const ObjectInfo& o : l.objects) {
      if (o.name.size() > prefix.size()) names.insert(o.name.substr(prefix.size()));
    }
    for (const std::string& p : l.prefixes) {
      std::string n = p.substr(prefix.size());
      while (!n.empty() && n.back() == '/') n.pop_back();
      if (!n.empty()) names.insert(n);
    }
  } else {
    std::error_code ec;
    for (fs::directory_iterator it(u.path, ec), end; !ec && it != end; it.increment(ec)) {
      names.insert(it->path().filename().string());
    }
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> Glob(const std::string& pattern) {
  const Url u = ParseUrl(pattern);
  std::set<std::string> out;
  if (!u.remote()) {
    if (!HasWildcard(u.path)) {
      std::error_code ec;
      if (fs::exists(u.path, ec)) out.insert(pattern);
      return {out.begin(), out.end()};
    }
    glob_t g{};
    const int rc = ::glob(u.path.c_str(), 0, nullptr, &g);
    if (rc == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) out.insert(g.gl_pathv[i]);
    }
    globfree(&g);
    T5XX_CHECK(rc == 0 || rc == GLOB_NOMATCH, "cannot expand the file pattern " + pattern +
                                                  " (a directory on its way cannot be read)");
    return {out.begin(), out.end()};
  }
  if (!HasWildcard(u.object)) {
    if (FileSize(pattern) || IsDirectory(pattern)) out.insert(pattern);
    return {out.begin(), out.end()};
  }
  // List everything under the literal part before the first wildcard, then
  // match segment-wise ('*' does not cross '/', as gfile's glob).
  const std::string literal = u.object.substr(0, u.object.find_first_of("*?["));
  const Listing l = Store(u).List(literal, false);
  const std::string root = std::string(u.scheme_name()) + "://" + u.bucket + "/";
  for (const ObjectInfo& o : l.objects) {
    if (fnmatch(u.object.c_str(), o.name.c_str(), FNM_PATHNAME) == 0) out.insert(root + o.name);
    // A directory matching the pattern: its prefix, one level at a time.
    for (size_t s = o.name.find('/'); s != std::string::npos; s = o.name.find('/', s + 1)) {
      const std::string dir = o.name.substr(0, s);
      if (dir.size() >= literal.size() && fnmatch(u.object.c_str(), dir.c_str(), FNM_PATHNAME) == 0) {
        out.insert(root + dir);
      }
    }
  }
  return {out.begin(), out.end()};
}

void DeleteFile(const std::string& path) {
  const Url u = ParseUrl(path);
  if (u.remote()) {
    Store(u).Delete(u.object);
    return;
  }
  std::error_code ec;
  fs::remove(u.path, ec);
  T5XX_CHECK(!ec, "cannot delete " + path + ": " + ec.message());
}

void DeleteRecursively(const std::string& path) {
  const Url u = ParseUrl(path);
  if (u.remote()) {
    T5XX_CHECK(!u.object.empty(), "refusing to delete everything in bucket " + path);
    ObjectStore& s = Store(u);
    for (const ObjectInfo& o : s.List(DirPrefix(u), false).objects) s.Delete(o.name);
    return;
  }
  std::error_code ec;
  fs::remove_all(u.path, ec);
  T5XX_CHECK(!ec, "cannot delete " + path + ": " + ec.message());
}

void MakeDirs(const std::string& path) {
  const Url u = ParseUrl(path);
  if (u.remote() || u.path.empty()) return;
  std::error_code ec;
  fs::create_directories(u.path, ec);
  T5XX_CHECK(!ec, "cannot create the directory " + path + ": " + ec.message());
}

}  // namespace t5xx::storage
