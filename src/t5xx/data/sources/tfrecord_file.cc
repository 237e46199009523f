// TFRecord files: reading and writing one file's framed records (see
// tfrecord_file.h).
#include "t5xx/data/sources/tfrecord_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "t5xx/util/crc32c.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_kind.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/files/protobuf_wire.h"
#include "t5xx/util/files/record_frame.h"

namespace t5xx::seqio {

// ---- TFRecordReader ---------------------------------------------------------

TFRecordReader::TFRecordReader(const std::string& path) : path_(path) {
  if (const std::string why = NotARegularFile(path); !why.empty()) {
    throw Error(path + ": cannot open TFRecord file: it " + why);
  }
  file_ = gzopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    throw Error(path + ": cannot open TFRecord file: " +
                (errno ? std::strerror(errno) : "out of memory"));
  }
  gzbuffer(file_, 1 << 16);
}

TFRecordReader::~TFRecordReader() {
  if (file_ != nullptr) gzclose(file_);
}

size_t TFRecordReader::ReadFully(char* out, size_t n, uint64_t record_start) {
  size_t got = 0;
  while (got < n) {
    const unsigned chunk =
        static_cast<unsigned>(std::min<size_t>(n - got, 1u << 30));
    const int r = gzread(file_, out + got, chunk);
    if (r < 0) {
      int errnum = 0;
      const char* msg = gzerror(file_, &errnum);
      throw Error(path_ + ": read error in the TFRecord starting at byte "
                  "offset " + std::to_string(record_start) + ": " +
                  (msg ? msg : "unknown") +
                  " (truncated or corrupt gzip file?)");
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  offset_ += got;
  return got;
}

void TFRecordReader::Seek(uint64_t offset, int64_t records_consumed) {
  // The byte before `offset` is read, so a file cut shorter is named here
  // rather than read as ending there.
  char last = 0;
  const z_off_t before = static_cast<z_off_t>(offset) - (offset > 0 ? 1 : 0);
  T5XX_CHECK(gzseek(file_, before, SEEK_SET) == before &&
                 (offset == 0 || gzread(file_, &last, 1) == 1),
             path_ + ": saved position is record " + std::to_string(records_consumed) +
                 " at byte offset " + std::to_string(offset) +
                 ", but the file is shorter (did the file change?)");
  offset_ = offset;
  records_consumed_ = records_consumed;
  record_index_ = records_consumed - 1;
  resumable_ = false;
}

bool TFRecordReader::Next(std::string* record) {
  resumable_ = false;
  const uint64_t start = offset_;
  char header[12];
  const size_t got = ReadFully(header, sizeof(header), start);
  if (got == 0) return false;
  const std::string at = " at byte offset " + std::to_string(start) +
                         " (record " + std::to_string(record_index_ + 1) + ")";
  if (got < sizeof(header)) {
    throw Error(path_ + ": truncated TFRecord header" + at + ": got " +
                std::to_string(got) + " of 12 bytes");
  }
  const uint64_t length = LoadLE(header, 8);
  const uint32_t length_crc = static_cast<uint32_t>(LoadLE(header + 8, 4));
  if (MaskedCrc32c(header, 8) != length_crc) {
    throw Error(path_ + ": corrupt TFRecord" + at +
                ": length CRC mismatch (not a TFRecord file, or damaged)");
  }
  if (length > kMaxTFRecordBytes) {
    throw Error(path_ + ": corrupt TFRecord" + at + ": it declares " + std::to_string(length) +
                " data bytes, more than a protobuf message can have (2 GiB)");
  }
  record->clear();
  // Grow in bounded steps so a damaged length cannot force a huge allocation
  // before the data is actually there.
  uint64_t remaining = length;
  while (remaining > 0) {
    const size_t step =
        static_cast<size_t>(std::min<uint64_t>(remaining, 1u << 24));
    const size_t old = record->size();
    record->resize(old + step);
    const size_t n = ReadFully(&(*record)[old], step, start);
    if (n < step) {
      throw Error(path_ + ": truncated TFRecord" + at + ": expected " +
                  std::to_string(length) + " data bytes, got " +
                  std::to_string(old + n));
    }
    remaining -= step;
  }
  char footer[4];
  const size_t f = ReadFully(footer, sizeof(footer), start);
  if (f < sizeof(footer)) {
    throw Error(path_ + ": truncated TFRecord" + at +
                ": data CRC missing (file cut short)");
  }
  if (MaskedCrc32c(record->data(), record->size()) !=
      static_cast<uint32_t>(LoadLE(footer, 4))) {
    ++records_consumed_;
    resumable_ = true;
    throw Error(path_ + ": corrupt TFRecord" + at + ": data CRC mismatch");
  }
  ++records_consumed_;
  ++record_index_;
  record_offset_ = start;
  return true;
}

std::vector<std::string> ReadTFRecordFile(const std::string& path) {
  TFRecordReader reader(path);
  std::vector<std::string> out;
  std::string rec;
  while (reader.Next(&rec)) out.push_back(rec);
  return out;
}

void WriteTFRecordFile(const std::string& path,
                       const std::vector<std::string>& records, bool gzip) {
  std::string data;
  for (const auto& r : records) AppendTFRecordFrame(&data, r);
  if (gzip) {
    GzipWriter w(path);
    w.Write(data);
    w.Close();
  } else {
    WriteStringToFileAtomic(path, data);
  }
}

}  // namespace t5xx::seqio
