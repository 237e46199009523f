// Checkpoint file I/O: durable whole-file writes, reads, directory creation
// and directory fsync.
#include "t5xx/checkpoints/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <vector>
#include <cstdio>
#include <cstring>

#include "t5xx/util/error.h"

namespace t5xx::checkpoints {
namespace fs = std::filesystem;

namespace {

struct Observer {
  int id;
  std::string dir;
  FileWrittenFn fn;
};
std::mutex& ObserversMutex() {
  static std::mutex mu;
  return mu;
}
std::vector<Observer>& Observers() {
  static std::vector<Observer> observers;
  return observers;
}
std::atomic<int> observer_count{0};

void Notify(const fs::path& path, const void* data, size_t size) {
  std::vector<FileWrittenFn> fns;
  {
    std::lock_guard<std::mutex> lock(ObserversMutex());
    const std::string p = path.string();
    for (const Observer& o : Observers()) {
      if (p.size() > o.dir.size() && p.compare(0, o.dir.size(), o.dir) == 0 && p[o.dir.size()] == '/') {
        fns.push_back(o.fn);
      }
    }
  }
  for (const FileWrittenFn& fn : fns) fn(path, data, size);
}

}  // namespace

int AddFileObserver(const std::string& dir, FileWrittenFn fn) {
  static int next_id = 0;
  std::lock_guard<std::mutex> lock(ObserversMutex());
  Observers().push_back({++next_id, dir, std::move(fn)});
  ++observer_count;
  return next_id;
}

void RemoveFileObserver(int id) {
  std::lock_guard<std::mutex> lock(ObserversMutex());
  auto& v = Observers();
  const auto it = std::remove_if(v.begin(), v.end(), [id](const Observer& o) { return o.id == id; });
  observer_count -= static_cast<int>(v.end() - it);
  v.erase(it, v.end());
}

void WriteFile(const fs::path& path, const void* data, size_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw Error("cannot create checkpoint file " + path.string() + ": " +
                std::strerror(errno));
  }
  const char* p = static_cast<const char*>(data);
  size_t left = size;
  int err = 0;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (err) {
    throw Error("cannot write checkpoint file " + path.string() + ": " +
                std::strerror(err));
  }
  if (observer_count.load() > 0) Notify(path, data, size);
}

namespace {

// Opens `path` for reading and returns its descriptor and size. O_NONBLOCK:
// opening a FIFO must not wait for a writer; a file that is not regular
// (FIFO, device, directory) is refused, before reading. `verb` words a
// failure to open ("cannot <verb> <what> <path>: ...").
std::pair<int, uint64_t> OpenRegularFile(const fs::path& path, const std::string& what,
                                         const char* verb) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    throw Error(std::string("cannot ") + verb + " " + what + " " + path.string() + ": " +
                std::strerror(err) +
                (err == ENOENT ? " (missing file; is the checkpoint directory complete?)" : ""));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error("cannot read " + what + " " + path.string() +
                ": not a regular file (a directory, FIFO or device)");
  }
  return {fd, st.st_size > 0 ? static_cast<uint64_t>(st.st_size) : 0};
}

}  // namespace

std::vector<uint8_t> ReadFileRange(const fs::path& path, uint64_t offset, uint64_t length,
                                   const std::string& what) {
  const auto [fd, size] = OpenRegularFile(path, what, "open");
  if (offset > size || length > size - offset) {
    ::close(fd);
    throw Error(path.string() + " (" + what + ") has " + std::to_string(size) +
                " bytes, but the checkpoint refers to bytes " + std::to_string(offset) + "+" +
                std::to_string(length) + " of it; the file is truncated or the reference is "
                "corrupt");
  }
  std::vector<uint8_t> out(static_cast<size_t>(length));
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + done, out.size() - done,
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      throw Error("error reading " + what + " " + path.string() + ": " +
                  (n == 0 ? std::string("unexpected end of file") : std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return out;
}

std::vector<uint8_t> ReadFile(const fs::path& path, const std::string& what) {
  // One allocation of the file's size, then reads until end of file (a file
  // that grows meanwhile is read in full too).
  const auto [fd, size] = OpenRegularFile(path, what, "read");
  std::vector<uint8_t> out(static_cast<size_t>(size));
  size_t got = 0;
  int err = 0;
  while (true) {
    if (got == out.size()) out.resize(std::max<size_t>(out.size() * 2, 1 << 16));
    const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (err) throw Error("error reading " + what + " " + path.string() + ": " + std::strerror(err));
  out.resize(got);
  return out;
}

void MakeDir(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) {
    throw Error("cannot create directory " + path.string() + ": " +
                ec.message());
  }
}

void SyncDir(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    throw Error("cannot open directory " + path.string() + " to sync it: " +
                std::strerror(errno));
  }
  int err = ::fsync(fd) != 0 ? errno : 0;
  ::close(fd);
  // Some file systems cannot fsync a directory; that is not a failure of
  // the data, which was synced file by file.
  if (err && err != EINVAL && err != ENOTSUP) {
    throw Error("cannot sync directory " + path.string() + ": " +
                std::strerror(err));
  }
}

}  // namespace t5xx::checkpoints
