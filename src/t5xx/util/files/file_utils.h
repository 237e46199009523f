// File helpers for the data layer: glob expansion and gzip-or-plain line I/O.
//
// Reading goes through zlib's gzopen, which reads gzip (and therefore dictzip
// .dz) files and passes plain files through unchanged, so every reader here
// accepts both. Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <zlib.h>

namespace t5xx::seqio {

// Expands a shell glob pattern (POSIX glob(3): *, ?, [...]) to the matching
// paths, sorted bytewise and de-duplicated — the file list of seqio's
// FileDataSource (tf.io.gfile.glob, then sorted). A pattern without wildcard
// characters matches itself when that file exists. Returns an empty vector
// when nothing matches; callers decide whether that is an error. Throws
// t5xx::Error when glob(3) itself fails (e.g. unreadable directory).
std::vector<std::string> Glob(const std::string& pattern);

// Expands several patterns; the union is sorted and de-duplicated.
std::vector<std::string> GlobAll(const std::vector<std::string>& patterns);

bool FileExists(const std::string& path);
bool IsRegularFile(const std::string& path);  // false for symlinks, dirs
bool IsSymlink(const std::string& path);

// Creates `path` and its parents (like `mkdir -p`). Throws t5xx::Error naming
// the path on failure.
void MakeDirs(const std::string& path);

// Atomically replaces `to` by `from` (rename(2)). Throws t5xx::Error naming
// both paths on failure.
void RenameFile(const std::string& from, const std::string& to);

// The most ReadFileToString returns by default (1 GiB, counted after gzip
// decompression): whole-file reads are for metadata, configs and metrics, so
// a larger file (or a small gzip stream inflating past it) is refused before
// it is held in memory.
inline constexpr size_t kMaxWholeFileBytes = size_t{1} << 30;

// Reads a whole file (gzip or plain) into a string, each line followed by
// '\n'. Throws t5xx::Error naming the path when it cannot be opened or read,
// and when its (decompressed) contents exceed `max_bytes`, naming the limit.
std::string ReadFileToString(const std::string& path,
                             size_t max_bytes = kMaxWholeFileBytes);

// Writes `contents` to `path` (plain, not compressed) via a temporary file in
// the same directory and a rename, so readers never see a partial file.
void WriteStringToFileAtomic(const std::string& path,
                             const std::string& contents);

// The longest line LineReader returns (2 GiB, protobuf's limit on a
// message: no record is longer); a longer one is an error, not an
// allocation as large as the file (or a gzip stream's inflated size).
inline constexpr size_t kMaxLineBytes = size_t{1} << 31;

// Reads a gzip or plain text file line by line. Lines are returned without the
// trailing '\n' (and without a '\r' before it), every other byte as it is
// (NUL bytes and bytes that are not UTF-8 included); lines of any length are
// supported. Not copyable; movable.
class LineReader {
 public:
  // Throws t5xx::Error naming the path when it does not exist, is not a
  // regular file (a directory, FIFO or device), or cannot be opened.
  // `max_line_bytes` (at most kMaxLineBytes) bounds each line's length.
  explicit LineReader(const std::string& path, size_t max_line_bytes = kMaxLineBytes);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  LineReader(LineReader&& other) noexcept;
  LineReader& operator=(LineReader&& other) noexcept;

  // Stores the next line in *line and returns true; returns false at end of
  // file. Throws t5xx::Error naming the path and line on a read error
  // (e.g. a truncated gzip stream) and for a line over max_line_bytes.
  bool Next(std::string* line);
  // 1-based number of the line last returned by Next (0 before the first).
  int64_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }
  // Bytes of the (decompressed) text consumed: up to and including the
  // newline of the line last returned.
  uint64_t offset() const { return offset_; }
  // Continues after line `line_number`, which ends at byte `offset` (as
  // offset() and line_number() said): a seek in a plain file; a gzip file
  // is decompressed up to there (zlib's gzseek). Throws t5xx::Error naming
  // the path when the byte before `offset` is not a newline or the file is
  // shorter ("did the file change?").
  void Seek(uint64_t offset, int64_t line_number);

 private:
  std::string path_;
  gzFile file_ = nullptr;
  size_t max_line_bytes_ = kMaxLineBytes;
  int64_t line_number_ = 0;
  uint64_t offset_ = 0;
  std::string buffer_;     // decompressed bytes read ahead
  size_t buffer_pos_ = 0;  // the first of them not yet returned
};

// Writes a gzip-compressed file. Data goes to `<path>.tmp-<pid>` and is
// renamed to `path` by Close(), so a crashed writer never leaves a
// plausible-looking output. Destroying an unclosed writer deletes the
// temporary file.
class GzipWriter {
 public:
  // Throws t5xx::Error naming the path when the temporary cannot be created.
  // `level` is the zlib compression level (1 fastest .. 9 smallest).
  explicit GzipWriter(const std::string& path, int level = 6);
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  void Write(const std::string& data);
  // Writes `line` followed by '\n'.
  void WriteLine(const std::string& line);
  // Flushes, closes and renames into place. Throws t5xx::Error on failure.
  void Close();

 private:
  std::string path_;
  std::string tmp_path_;
  gzFile file_ = nullptr;
};

}  // namespace t5xx::seqio
