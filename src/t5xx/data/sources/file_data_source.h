// seqio's FileDataSource: a data source whose splits are file patterns, and
// the plan of which files (and which of their examples) one reader takes.
//
// Behaviour source: seqio/dataset_providers.py (FileDataSource,
// list_shards, the file-level sharding of get_dataset and its example-level
// fallback when there are fewer files than shards). The readers of the
// files are in record_file_dataset.h. Framework-free: no libtorch.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "t5xx/data/sources/data_source.h"

namespace t5xx::seqio {

// Which files one reader opens and which of their examples it keeps.
// Produced by PlanFileRead following seqio's sharding rules.
struct FileReadPlan {
  std::vector<std::string> files;  // in reading order
  // Keep the example with 0-based stream position p iff
  // p % example_stride == example_offset (example-level sharding fallback).
  int example_stride = 1;
  int example_offset = 0;
};

// Expands `pattern` (sorted, de-duplicated glob) and applies seqio's rules:
//  * shard_info.num_shards <= number of files: file-level sharding, file i is
//    kept iff i % num_shards == index (tf.data Dataset.shard on file names);
//  * fewer files than shards: every file is read and every num_shards-th
//    example is kept, starting at index (seqio Task.get_dataset fallback);
//  * shuffle=true: the kept files are permuted by a Fisher-Yates shuffle
//    driven by a splitmix64 stream seeded with `seed` (platform-independent;
//    seqio shuffles file names with the seed, then interleaves). Examples
//    within a file keep their order.
// Throws t5xx::Error naming `source_name`, the split and the pattern when the
// pattern matches no file or a path that is not a regular file, and when
// shard_info is invalid (num_shards < 1 or index outside [0, num_shards)).
FileReadPlan PlanFileRead(const std::string& source_name,
                          const std::string& split, const std::string& pattern,
                          bool shuffle, uint64_t seed,
                          const ShardInfo& shard_info);

// What a file source does with a bad record (a malformed JSON line, a
// missing/non-string field, a TFRecord with a bad CRC or an unparsable
// tf.Example). Default: the error (naming file and line or byte offset).
// With skip=true the record is skipped and counted in *skipped instead; the
// count is shared by every dataset made from the source (see
// skipped_records()) and each dataset also keeps its own count in its
// SaveState ("skipped"), so RestoreState restores it (and adds it back to
// *skipped). Nothing is dropped silently.
struct BadRecordPolicy {
  bool skip = false;
  std::shared_ptr<std::atomic<int64_t>> skipped =
      std::make_shared<std::atomic<int64_t>>(0);
};

// seqio.FileDataSource: a source whose splits are file patterns. splits(),
// ListShards() and GetDataset() (planning with PlanFileRead: sharding and
// file shuffling) and the bad-record count are shared; a subclass only reads
// a plan's files.
class FileDataSource : public DataSource {
 public:
  // `source_name` names the source in errors. Throws t5xx::Error when
  // split_to_filepattern is empty.
  FileDataSource(std::string source_name,
                 std::map<std::string, std::string> split_to_filepattern,
                 BadRecordPolicy bad_records = {});

  std::vector<std::string> splits() const override;
  // Throws t5xx::Error for an unknown split (naming the known ones), a
  // pattern matching no file, or bad shard_info (see PlanFileRead).
  DatasetPtr GetDataset(const std::string& split, bool shuffle, uint64_t seed,
                        const ShardInfo& shard_info) const override;
  // The sorted, de-duplicated files of `split` (seqio list_shards). Throws
  // like GetDataset.
  std::vector<std::string> ListShards(const std::string& split) const override;
  // True: GetDataset applies seqio's whole rule itself (PlanFileRead: files
  // when there are enough, else the examples of every file at every
  // num_shards-th position -- the examples seqio's task-level ds.shard keeps,
  // but only this shard's records are parsed).
  bool supports_arbitrary_sharding() const override { return true; }

  // Bad records skipped so far by all datasets of this source (0 unless
  // bad_records.skip), including counts brought back by RestoreState.
  int64_t skipped_records() const override { return bad_records_.skipped->load(); }
  const BadRecordPolicy& bad_record_policy() const { return bad_records_; }

 protected:
  // A lazy Dataset over the files (and example stride) of `plan`.
  virtual DatasetPtr ReadPlan(FileReadPlan plan) const = 0;

 private:
  const std::string& PatternFor(const std::string& split) const;

  std::string source_name_;
  std::map<std::string, std::string> split_to_filepattern_;
  BadRecordPolicy bad_records_;
};

}  // namespace t5xx::seqio
