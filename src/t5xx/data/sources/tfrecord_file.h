// TFRecord files: reading and writing the framed records of one file (plain
// or gzip), without TensorFlow.
//
// Behaviour source: tensorflow/core/lib/io/record_reader.cc and
// record_writer.cc. Format (util/files/record_frame.h), little-endian:
//   uint64 length | uint32 masked_crc32c(length bytes) |
//   byte data[length] | uint32 masked_crc32c(data)
// masked_crc = ((crc >> 15) | (crc << 17)) + 0xa282ead8, crc = CRC-32C
// (Castagnoli, util/crc32c.h). Files may be plain or gzip (detected by
// content, as zlib's gzopen does; TF's compression_type="GZIP").
// Framework-free: no libtorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <zlib.h>

namespace t5xx::seqio {

// The largest record data a reader accepts: 2 GiB, protobuf's limit on a
// serialized message (a tf.Example cannot be larger). A length CRC that
// matches a larger length is refused as corruption before reading on.
inline constexpr uint64_t kMaxTFRecordBytes = uint64_t{1} << 31;

// Reads the records of one TFRecord file (plain or gzip) sequentially.
// Not copyable.
class TFRecordReader {
 public:
  // Throws t5xx::Error naming the path when it is missing, not a regular
  // file (a directory, FIFO or device) or cannot be opened.
  explicit TFRecordReader(const std::string& path);
  ~TFRecordReader();
  TFRecordReader(const TFRecordReader&) = delete;
  TFRecordReader& operator=(const TFRecordReader&) = delete;

  // Stores the next record's data in *record and returns true; false at a
  // clean end of file. Throws t5xx::Error "<path>: ... at byte offset N ..."
  // for a length or data CRC mismatch, a length over kMaxTFRecordBytes, a
  // truncated record (header or data cut short), or a read/decompression
  // error. Offsets count bytes of the
  // (decompressed) record stream and point at the start of the bad record.
  bool Next(std::string* record);
  // Records consumed from the stream: those returned plus those whose data
  // CRC mismatched (their frame was read whole, so reading can go on).
  int64_t records_consumed() const { return records_consumed_; }
  // After Next threw: true when the error was a data CRC mismatch and the
  // stream is positioned at the next record; false when the stream cannot be
  // framed any more (bad length CRC, truncation, read error).
  bool resumable_after_error() const { return resumable_; }
  // 0-based index of the record last returned by Next (-1 before the first).
  int64_t record_index() const { return record_index_; }
  // Byte offset (decompressed stream) where the last returned record starts.
  uint64_t record_offset() const { return record_offset_; }
  // Bytes of the (decompressed) stream consumed: where the next record
  // starts.
  uint64_t offset() const { return offset_; }
  // Continues at the record that starts at byte `offset`, after
  // `records_consumed` records (as offset() and records_consumed() said):
  // a seek in a plain file; a gzip file is decompressed up to there
  // (zlib's gzseek). Throws t5xx::Error naming the path when the file is
  // shorter; a wrong offset then fails Next's length CRC check.
  void Seek(uint64_t offset, int64_t records_consumed);
  const std::string& path() const { return path_; }

 private:
  // Reads up to n bytes; returns how many were read (short only at EOF).
  size_t ReadFully(char* out, size_t n, uint64_t record_start);

  std::string path_;
  gzFile file_ = nullptr;
  uint64_t offset_ = 0;
  uint64_t record_offset_ = 0;
  int64_t record_index_ = -1;
  int64_t records_consumed_ = 0;
  bool resumable_ = false;
};

// Reads every record of a TFRecord file. Throws like TFRecordReader.
std::vector<std::string> ReadTFRecordFile(const std::string& path);

// Writes `records` as a TFRecord file, gzip-compressed when `gzip`. The file
// appears atomically (temporary file + rename). Throws t5xx::Error naming the
// path on failure.
void WriteTFRecordFile(const std::string& path,
                       const std::vector<std::string>& records,
                       bool gzip = false);

}  // namespace t5xx::seqio
