// TFRecord files of tf.Example protos — seqio's TFExampleDataSource
// (seqio/dataset_providers.py: FileDataSource with a TFRecordDataset reader
// and tf.io.parse_single_example), without TensorFlow or protobuf.
//
// TFRecord format (tensorflow/core/lib/io/record_writer.h), little-endian:
//   uint64 length | uint32 masked_crc32c(length bytes) |
//   byte data[length] | uint32 masked_crc32c(data)
// masked_crc = ((crc >> 15) | (crc << 17)) + 0xa282ead8, crc = CRC-32C
// (Castagnoli). Files may be plain or gzip (detected by content, as zlib's
// gzopen does; TF's compression_type="GZIP").
//
// tf.Example wire format (tensorflow/core/example/{example,feature}.proto):
//   Example  { Features features = 1; }
//   Features { map<string, Feature> feature = 1; }   // entries: key=1 value=2
//   Feature  { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
//                           Int64List int64_list = 3; } }
//   BytesList { repeated bytes value = 1; }
//   FloatList { repeated float value = 1 [packed]; }
//   Int64List { repeated int64 value = 1 [packed]; }
// Packed and unpacked encodings of the repeated scalars are both accepted;
// unknown fields are skipped.
//
// Mapping to t5xx::seqio::Example:
//   bytes_list with exactly one element -> std::string
//   int64_list (any length, incl. 0)     -> Tokens (each value must fit int32)
//   float_list                           -> error "float features are not
//                                           supported yet" (only when the
//                                           feature is requested)
// Framework-free: no libtorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <zlib.h>

#include "t5xx/data/data_source.h"
#include "t5xx/data/json_lines_source.h"  // FileDataSource

namespace t5xx::seqio {

// Reads the records of one TFRecord file (plain or gzip) sequentially.
// Not copyable.
class TFRecordReader {
 public:
  // Throws t5xx::Error naming the path when it cannot be opened.
  explicit TFRecordReader(const std::string& path);
  ~TFRecordReader();
  TFRecordReader(const TFRecordReader&) = delete;
  TFRecordReader& operator=(const TFRecordReader&) = delete;

  // Stores the next record's data in *record and returns true; false at a
  // clean end of file. Throws t5xx::Error "<path>: ... at byte offset N ..."
  // for a length or data CRC mismatch, a truncated record (header or data
  // cut short), or a read/decompression error. Offsets count bytes of the
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

// Serializes an Example as a tf.Example: std::string -> bytes_list of one
// element; Tokens -> packed int64_list. Keys are written in sorted order, so
// the output is deterministic.
std::string SerializeTFExample(const Example& example);

// Parses a serialized tf.Example. `features` selects keys (empty = all); a
// feature not selected is never decoded, so it may have any kind. `where`
// prefixes error messages (e.g. "<file>: record 3"). Throws t5xx::Error
// "<where>: ..." for malformed protobuf, a missing requested key, a
// bytes_list without exactly one element, an int64 value outside int32
// (naming the feature and value), a float_list ("float features are not
// supported yet", naming the feature) or a Feature with no kind set.
Example ParseTFExample(const std::string& serialized,
                       const std::vector<std::string>& features,
                       const std::string& where);

// seqio.TFExampleDataSource over TFRecord files of tf.Example.
//
// Shards are the sorted, de-duplicated glob matches of each split's pattern;
// sharding and file shuffling follow PlanFileRead (json_lines_source.h):
// file-level when there are at least num_shards files, else every
// num_shards-th record; shuffle permutes the kept files with `seed`, records
// keep their order within a file. Files are opened lazily.
//
// Errors (t5xx::Error): GetDataset/ListShards on an unknown split (names the
// known splits), a pattern matching no file, bad shard_info; while iterating,
// CRC/truncation errors ("<file>: ... byte offset N") and parse errors
// ("<file>: record <i>: ..."; a missing requested key names the key).
//
// With bad_records.skip (BadRecordPolicy, json_lines_source.h), instead of
// throwing, while iterating:
//  * a record whose data CRC mismatches, or whose tf.Example cannot be
//    parsed, is skipped and counted as 1 (it still takes its position for
//    example-level sharding; it is counted only by the reader whose shard
//    owns that position);
//  * a bad length CRC, a truncated record or a read/decompression error
//    leaves the rest of that file unframeable: the rest of the file is
//    skipped, counted as 1 skipped record (its records cannot be counted),
//    and reading goes on with the next file.
// File open errors still throw. The count is skipped_records() and
// "skipped" in each dataset's SaveState (restored by RestoreState).
class TFExampleDataSource : public FileDataSource {
 public:
  // split_to_filepattern: e.g. {"train", "/data/train.tfrecord-*"}.
  // `features`: keys to extract (empty = every feature of each record).
  // Throws t5xx::Error when the map is empty.
  explicit TFExampleDataSource(
      std::map<std::string, std::string> split_to_filepattern,
      std::vector<std::string> features = {},
      BadRecordPolicy bad_records = {});

  // Bad records skipped so far by all datasets of this source (0 unless
  // bad_records.skip), including counts brought back by RestoreState.
  int64_t skipped_records() const override { return bad_records_.skipped->load(); }
  const BadRecordPolicy& bad_record_policy() const { return bad_records_; }

 protected:
  DatasetPtr ReadPlan(FileReadPlan plan) const override;

 private:
  std::vector<std::string> features_;
  BadRecordPolicy bad_records_;
};

}  // namespace t5xx::seqio
