// The one dataset over record files: reads a FileReadPlan's files record by
// record (lines, TFRecords), parses each record into an Example, keeps the
// plan's example shard, skips and counts bad records, and saves/restores its
// position. JsonLinesDataSource, TextLineDataSource, TokenJsonLinesDataSource
// and TFExampleDataSource are this dataset with their own reader and parser.
//
// Behaviour source: seqio's FileDataSource.get_dataset (with tf.data's
// ignore_errors when bad records are skipped) and tf.data iterator
// checkpoints for the saved position. One difference in order: seqio
// interleaves a reader's files (cycle_length 16, block_length 16), while
// this dataset reads them one after another -- the same examples, in
// another order when a reader has several files. The offline-cache reader
// (task_cache.h) follows seqio's interleave.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/sources/file_data_source.h"

namespace t5xx::seqio {

// Reads the records of one file in order.
class RecordReader {
 public:
  // What a bad-record policy that skips may do after Next threw.
  enum class AfterError {
    kThrow,           // not a bad record (e.g. an unreadable file): rethrow
    kSkipRecord,      // the bad record was consumed whole; reading goes on
    kSkipRestOfFile,  // the file cannot be read past this point
  };

  virtual ~RecordReader() = default;
  // Stores the next record in *record and returns true; false at the end of
  // the file. Throws t5xx::Error for a bad record or a read error.
  virtual bool Next(std::string* record) = 0;
  // Records consumed so far, the position a saved state resumes from
  // (including bad records consumed whole).
  virtual int64_t consumed() const = 0;
  // The number the parser gets with the last record returned (its line
  // number, or its record index), used to name it in errors.
  virtual int64_t index() const = 0;
  virtual const std::string& path() const = 0;
  // After Next threw: see AfterError.
  virtual AfterError after_error() const { return AfterError::kThrow; }
  // Random access for a saved position: the byte offset (of the
  // decompressed stream) where the next record starts, or -1 when this
  // reader cannot seek; SeekTo continues there after `consumed` records
  // (as consumed() said) and returns true, or returns false when it cannot
  // seek. Throws t5xx::Error naming the file when the offset is past its
  // end or not a record boundary it can check.
  virtual int64_t byte_offset() const { return -1; }
  virtual bool SeekTo(int64_t /*offset*/, int64_t /*consumed*/) { return false; }
};

// Parses one record of `path` (`index` from RecordReader::index) into an
// Example, or returns std::nullopt when the record is not an example.
// Throws t5xx::Error for a bad record.
using RecordParser = std::function<std::optional<Example>(
    const std::string& path, int64_t index, const std::string& record)>;
// The same, for lines (1-based line_number).
using LineParser = RecordParser;

// How one kind of record file is read.
struct RecordFileFormat {
  // Names the reader in state errors ("line reader", "TFRecord reader").
  std::string reader_name;
  // The record's name: the SaveState key of the position in the file and the
  // noun of errors ("line", "record").
  std::string unit;
  // Opens one file; throws t5xx::Error naming the path when it cannot.
  std::function<std::unique_ptr<RecordReader>(const std::string& path)> open;
  RecordParser parse;
  // true: every record is parsed, and only records parsed to an Example take
  // a stream position (a line parser decides what is an example, e.g. blank
  // lines are not). false: every record read takes a position and only the
  // records of this reader's example shard are parsed.
  bool parse_decides_position = false;
};

// A lazy Dataset over plan.files in order (opened on demand), one record at
// a time, keeping the example with stream position p iff
// p % plan.example_stride == plan.example_offset.
//
// Without policy.skip every error propagates. With policy.skip, a t5xx::Error
// from `parse`, or from the reader when its after_error() is kSkipRecord
// (the record takes a position and is counted only by the reader whose shard
// owns it) or kSkipRestOfFile (counted as 1; reading goes on with the next
// file), is counted in policy.skipped and in the dataset's own count instead.
//
// SaveState: {"file_index", <unit>: records consumed in that file,
// "offset": the byte where the next record starts (when the reader can
// seek), "position": stream positions taken, "skipped" (only with
// policy.skip)}. RestoreState reopens the file and seeks to "offset" (a
// gzip file is decompressed up to it); without one it reads up to the
// saved record again;
// throws t5xx::Error "<reader_name>: ..." for a missing field or a file index
// past the plan, and "<file>: saved position is <unit> N but the file has
// only M <unit>s (did the file change?)".
DatasetPtr ReadRecordFiles(FileReadPlan plan, RecordFileFormat format,
                           BadRecordPolicy policy = {});

// ReadRecordFiles over text lines (LineReader, file_utils.h: plain or gzip),
// "line reader"/"line"; every line goes through `parse`, which decides what
// is an example. Read errors are never skipped.
DatasetPtr ReadLinesDataset(FileReadPlan plan, LineParser parse,
                            BadRecordPolicy policy = {});

}  // namespace t5xx::seqio
