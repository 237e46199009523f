// TFRecord files of tf.Example protos — seqio's TFExampleDataSource
// (seqio/dataset_providers.py: FileDataSource with a TFRecordDataset reader
// and tf.io.parse_single_example), without TensorFlow or protobuf: the
// record-file dataset (record_file_dataset.h) over TFRecordReader
// (tfrecord_file.h) and ParseTFExample (tf_example.h).
// Framework-free: no libtorch.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "t5xx/data/sources/file_data_source.h"
#include "t5xx/data/sources/record_file_dataset.h"

namespace t5xx::seqio {

// One TFRecord file (tfrecord_file.h) as the record-file dataset's
// RecordReader: after a record whose data CRC mismatches (it was read whole)
// reading can go on (kSkipRecord); any other error leaves the file
// unframeable (kSkipRestOfFile). Shared by TFExampleDataSource and the
// offline-cache reader (task_cache.h). Opening throws t5xx::Error naming the
// file.
std::unique_ptr<RecordReader> OpenTFRecordRecordReader(const std::string& path);

// seqio.TFExampleDataSource over TFRecord files of tf.Example.
//
// Shards are the sorted, de-duplicated glob matches of each split's pattern;
// sharding and file shuffling follow PlanFileRead (file_data_source.h):
// file-level when there are at least num_shards files, else every
// num_shards-th record; shuffle permutes the kept files with `seed`, records
// keep their order within a file. Files are opened lazily.
//
// Errors (t5xx::Error): GetDataset/ListShards on an unknown split (names the
// known splits), a pattern matching no file, bad shard_info; while iterating,
// CRC/truncation errors ("<file>: ... byte offset N") and parse errors
// ("<file>: record <i>: ..."; a missing requested key names the key).
//
// With bad_records.skip (BadRecordPolicy, file_data_source.h), instead of
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

 protected:
  DatasetPtr ReadPlan(FileReadPlan plan) const override;

 private:
  std::vector<std::string> features_;
};

}  // namespace t5xx::seqio
