// File helpers of the data layer: glob expansion and gzip-or-plain line I/O
// (see file_utils.h).
#include "t5xx/util/files/file_utils.h"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>

#include "t5xx/util/error.h"
#include "t5xx/util/files/file_kind.h"

namespace t5xx::seqio {

std::vector<std::string> Glob(const std::string& pattern) {
  glob_t g;
  std::memset(&g, 0, sizeof(g));
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> out;
  if (rc == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  if (rc != 0 && rc != GLOB_NOMATCH) {
    throw Error("cannot expand file pattern '" + pattern +
                "': glob failed (" + (rc == GLOB_ABORTED ? "read error"
                                      : rc == GLOB_NOSPACE ? "out of memory"
                                                           : "unknown") +
                ")");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> GlobAll(const std::vector<std::string>& patterns) {
  std::vector<std::string> out;
  for (const auto& p : patterns) {
    auto m = Glob(p);
    out.insert(out.end(), m.begin(), m.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool IsSymlink(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

void MakeDirs(const std::string& path) {
  if (path.empty()) return;
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) {
      throw Error("cannot create directory '" + cur + "': " +
                  std::strerror(errno));
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw Error("cannot create directory '" + path +
                "': a non-directory is in the way");
  }
}

void RenameFile(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    throw Error("cannot rename '" + from + "' to '" + to +
                "': " + std::strerror(errno));
  }
}

std::string ReadFileToString(const std::string& path, size_t max_bytes) {
  // Uniform gzip/plain handling and errors; no line may exceed the whole's limit.
  LineReader reader(path, std::min(max_bytes, kMaxLineBytes));
  std::string out, line;
  while (reader.Next(&line)) {
    if (out.size() + line.size() + 1 > max_bytes) {  // out.size() <= max_bytes here
      throw Error("cannot read '" + path + "': its contents (after gzip decompression) exceed " +
                  std::to_string(max_bytes) + " bytes, the limit for reading a whole file at once "
                  "(stopped at line " + std::to_string(reader.line_number()) +
                  "); is this the file you meant?");
    }
    out += line;
    out += '\n';
  }
  return out;
}

void WriteStringToFileAtomic(const std::string& path,
                             const std::string& contents) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error("cannot write '" + tmp + "': " + std::strerror(errno));
    f << contents;
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw Error("cannot write '" + tmp + "' (disk full?)");
    }
  }
  RenameFile(tmp, path);
}

// ---------------------------------------------------------------- LineReader

LineReader::LineReader(const std::string& path, size_t max_line_bytes)
    : path_(path), max_line_bytes_(max_line_bytes) {
  if (!FileExists(path)) throw Error("file not found: '" + path + "'");
  // A FIFO would block the reader for ever, a directory fail later.
  if (const std::string why = NotARegularFile(path); !why.empty()) {
    throw Error("cannot read '" + path + "': it " + why);
  }
  file_ = gzopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    throw Error("cannot open '" + path + "': " + std::strerror(errno));
  }
  gzbuffer(file_, 1 << 17);
}

LineReader::~LineReader() {
  if (file_ != nullptr) gzclose(file_);
}

LineReader::LineReader(LineReader&& other) noexcept
    : path_(std::move(other.path_)),
      file_(std::exchange(other.file_, nullptr)),
      max_line_bytes_(other.max_line_bytes_),
      line_number_(other.line_number_),
      offset_(other.offset_),
      buffer_(std::move(other.buffer_)),
      buffer_pos_(other.buffer_pos_) {}

LineReader& LineReader::operator=(LineReader&& other) noexcept {
  if (this != &other) {
    if (file_ != nullptr) gzclose(file_);
    path_ = std::move(other.path_);
    file_ = std::exchange(other.file_, nullptr);
    max_line_bytes_ = other.max_line_bytes_;
    line_number_ = other.line_number_;
    offset_ = other.offset_;
    buffer_ = std::move(other.buffer_);
    buffer_pos_ = other.buffer_pos_;
  }
  return *this;
}

bool LineReader::Next(std::string* line) {
  line->clear();
  if (file_ == nullptr) return false;
  // gzread, not gzgets: gzgets ends its output at the first NUL byte, which
  // lost the rest of such a line and joined it to the next one.
  constexpr size_t kChunk = 1 << 16;
  bool got_any = false;
  while (true) {
    if (buffer_pos_ == buffer_.size()) {
      buffer_.resize(kChunk);
      const int n = gzread(file_, buffer_.data(), static_cast<unsigned>(kChunk));
      buffer_.resize(n > 0 ? static_cast<size_t>(n) : 0);
      buffer_pos_ = 0;
      if (n <= 0) {
        int errnum = 0;
        const char* msg = gzerror(file_, &errnum);
        // Z_BUF_ERROR at EOF means a truncated gzip stream.
        if (errnum == Z_BUF_ERROR) {
          throw Error(path_ + ":" + std::to_string(line_number_ + 1) +
                      ": unexpected end of gzip stream (truncated file?)");
        }
        if (n < 0 || errnum != Z_OK) {
          throw Error(path_ + ":" + std::to_string(line_number_ + 1) +
                      ": read error: " + (msg ? msg : "unknown"));
        }
        break;  // end of file
      }
    }
    const char* begin = buffer_.data() + buffer_pos_;
    const size_t available = buffer_.size() - buffer_pos_;
    const void* newline = std::memchr(begin, '\n', available);
    const size_t take =
        newline ? static_cast<size_t>(static_cast<const char*>(newline) - begin) : available;
    if (line->size() + take > max_line_bytes_) {
      throw Error(path_ + ":" + std::to_string(line_number_ + 1) + ": a line longer than " +
                  std::to_string(max_line_bytes_) + " bytes (the limit); is this a " +
                  "text file?");
    }
    line->append(begin, take);
    got_any = true;
    if (newline) {
      buffer_pos_ += take + 1;
      offset_ += take + 1;
      break;
    }
    buffer_pos_ += take;
    offset_ += take;
  }
  if (!got_any) return false;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  ++line_number_;
  return true;
}

void LineReader::Seek(uint64_t offset, int64_t line_number) {
  T5XX_CHECK(file_ != nullptr, path_ + ": seek on a closed line reader");
  buffer_.clear();
  buffer_pos_ = 0;
  const std::string where = path_ + ": saved position is line " + std::to_string(line_number) +
                            ", ending at byte " + std::to_string(offset);
  if (offset > 0) {
    char last = 0;
    T5XX_CHECK(gzseek(file_, static_cast<z_off_t>(offset - 1), SEEK_SET) ==
                       static_cast<z_off_t>(offset - 1) &&
                   gzread(file_, &last, 1) == 1,
               where + ", but the file is shorter (did the file change?)");
    T5XX_CHECK(last == '\n', where + ", but no line ends there (did the file change?)");
  } else {
    T5XX_CHECK(gzseek(file_, 0, SEEK_SET) == 0, where + ": cannot seek");
  }
  offset_ = offset;
  line_number_ = line_number;
}

// ---------------------------------------------------------------- GzipWriter

GzipWriter::GzipWriter(const std::string& path, int level)
    : path_(path), tmp_path_(path + ".tmp-" + std::to_string(::getpid())) {
  const std::string mode = "wb" + std::to_string(std::clamp(level, 1, 9));
  file_ = gzopen(tmp_path_.c_str(), mode.c_str());
  if (file_ == nullptr) {
    throw Error("cannot create '" + tmp_path_ + "': " + std::strerror(errno));
  }
  gzbuffer(file_, 1 << 17);
}

GzipWriter::~GzipWriter() {
  if (file_ != nullptr) {
    gzclose(file_);
    std::remove(tmp_path_.c_str());
  }
}

void GzipWriter::Write(const std::string& data) {
  if (file_ == nullptr) throw Error("write to closed file '" + path_ + "'");
  if (data.empty()) return;
  if (gzwrite(file_, data.data(), static_cast<unsigned>(data.size())) == 0) {
    int errnum = 0;
    const char* msg = gzerror(file_, &errnum);
    throw Error("cannot write '" + tmp_path_ + "': " + (msg ? msg : "?"));
  }
}

void GzipWriter::WriteLine(const std::string& line) {
  Write(line);
  Write("\n");
}

void GzipWriter::Close() {
  if (file_ == nullptr) return;
  const int rc = gzclose(file_);
  file_ = nullptr;
  if (rc != Z_OK) {
    std::remove(tmp_path_.c_str());
    throw Error("cannot finish writing '" + tmp_path_ + "' (zlib error " +
                std::to_string(rc) + ", disk full?)");
  }
  RenameFile(tmp_path_, path_);
}

}  // namespace t5xx::seqio
