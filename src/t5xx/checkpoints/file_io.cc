// Checkpoint file I/O: durable whole-file writes, reads, directory creation
// and directory fsync.
#include "t5xx/checkpoints/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "t5xx/util/error.h"

namespace t5xx::checkpoints {
namespace fs = std::filesystem;

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
}

std::vector<uint8_t> ReadFile(const fs::path& path, const std::string& what) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; a file that is
  // not regular (FIFO, device, directory) is refused below, before reading.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    throw Error("cannot read " + what + " " + path.string() + ": " + std::strerror(err) +
                (err == ENOENT ? " (missing file; is this a complete t5x "
                                 "legacy checkpoint directory?)"
                               : ""));
  }
  // One allocation of the file's size, then reads until end of file (a file
  // that grows meanwhile is read in full too).
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error("cannot read " + what + " " + path.string() +
                ": not a regular file (a directory, FIFO or device)");
  }
  std::vector<uint8_t> out(st.st_size > 0 ? static_cast<size_t>(st.st_size) : 0);
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
