// Checkpoint file I/O: whole-file writes and reads, directory creation.
#include "t5xx/checkpoints/file_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "t5xx/util/error.h"

namespace t5xx::checkpoints {
namespace fs = std::filesystem;

void WriteFile(const fs::path& path, const void* data, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    throw Error("cannot create checkpoint file " + path.string() + ": " +
                std::strerror(errno));
  }
  size_t written = size ? std::fwrite(data, 1, size, f) : 0;
  int saved_errno = errno;
  bool ok = written == size && std::fflush(f) == 0;
  if (!ok) saved_errno = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    saved_errno = errno;
  }
  if (!ok) {
    throw Error("cannot write checkpoint file " + path.string() + ": " +
                std::strerror(saved_errno));
  }
}

std::vector<uint8_t> ReadFile(const fs::path& path, const std::string& what) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    throw Error("cannot read " + what + " " + path.string() + ": " +
                std::strerror(errno) +
                (errno == ENOENT ? " (missing file; is this a complete t5x "
                                   "legacy checkpoint directory?)"
                                 : ""));
  }
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    out.insert(out.end(), buf, buf + n);
  }
  bool err = std::ferror(f);
  std::fclose(f);
  if (err) throw Error("error reading " + what + " " + path.string());
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

}  // namespace t5xx::checkpoints
