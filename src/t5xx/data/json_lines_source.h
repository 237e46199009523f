// JSON-lines data source (C4 format) — seqio's FileDataSource specialised to
// one JSON object per line (seqio/dataset_providers.py: FileDataSource with a
// read_file_fn; TFDS c4 stores the same three string fields).
//
// Also declares the file-planning helpers shared with TextLineDataSource.
// Framework-free: no libtorch.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/data_source.h"

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
// pattern matches no file, and when shard_info is invalid
// (num_shards < 1 or index outside [0, num_shards)).
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

// Parses one line of `path` (1-based line_number) into an Example, or returns
// std::nullopt to skip the line (it then does not count as an example for
// sharding).
using LineParser = std::function<std::optional<Example>(
    const std::string& path, int64_t line_number, const std::string& line)>;

// A lazy Dataset reading plan.files in order, one line at a time, through
// `parse`; applies the plan's example stride. Files are opened on demand.
// With policy.skip, a t5xx::Error thrown by `parse` skips the line (it is not
// an example for sharding) and counts it; otherwise the error propagates.
DatasetPtr ReadLinesDataset(FileReadPlan plan, LineParser parse,
                            BadRecordPolicy policy = {});

// seqio.FileDataSource: a source whose splits are file patterns. splits(),
// ListShards() and GetDataset() (planning with PlanFileRead: sharding and
// file shuffling) are shared; a subclass only reads a plan's files.
class FileDataSource : public DataSource {
 public:
  // `source_name` names the source in errors. Throws t5xx::Error when
  // split_to_filepattern is empty.
  FileDataSource(std::string source_name,
                 std::map<std::string, std::string> split_to_filepattern);

  std::vector<std::string> splits() const override;
  // Throws t5xx::Error for an unknown split (naming the known ones), a
  // pattern matching no file, or bad shard_info (see PlanFileRead).
  DatasetPtr GetDataset(const std::string& split, bool shuffle, uint64_t seed,
                        const ShardInfo& shard_info) const override;
  // The sorted, de-duplicated files of `split` (seqio list_shards). Throws
  // like GetDataset.
  std::vector<std::string> ListShards(const std::string& split) const;

 protected:
  // A lazy Dataset over the files (and example stride) of `plan`.
  virtual DatasetPtr ReadPlan(FileReadPlan plan) const = 0;

 private:
  const std::string& PatternFor(const std::string& split) const;

  std::string source_name_;
  std::map<std::string, std::string> split_to_filepattern_;
};

// Reads C4-style JSON lines: every non-blank line is one JSON object.
//
// Each Example maps field name -> std::string, the JSON string's text as
// UTF-8; bytes inside a JSON string that are not UTF-8 (which JSON forbids)
// are kept as they are, as the other sources keep a file's bytes
// (ParseJsonKeepingBytes, util/json_text.h). With a non-empty
// `fields` list exactly those fields are extracted; otherwise every top-level
// field whose value is a JSON string (C4: "text", "url", "timestamp";
// non-string values are skipped). Files may be plain or gzip (.gz, detected
// by content). Blank lines are skipped.
//
// Errors (t5xx::Error), raised lazily while iterating except the first:
//  * GetDataset: unknown split (names the known splits); a pattern matching
//    no file (names the pattern and split); bad shard_info.
//  * "<file>:<line>: malformed JSON line: ..." for unparsable text or a
//    value that is not an object;
//  * "<file>:<line>: missing field 'F' ..." when a requested field is absent,
//    "<file>:<line>: field 'F' is not a string ..." when it has another type.
// With bad_records.skip these three line errors skip the line and count it
// (skipped_records()); file open/read errors still throw.
class JsonLinesDataSource : public FileDataSource {
 public:
  // split_to_filepattern: e.g. {"train", "/data/c4-train.json-*.gz"}.
  // Throws t5xx::Error when the map is empty.
  explicit JsonLinesDataSource(
      std::map<std::string, std::string> split_to_filepattern,
      std::vector<std::string> fields = {},
      BadRecordPolicy bad_records = {});

  // Bad lines skipped so far by all datasets of this source (0 unless
  // bad_records.skip), including counts brought back by RestoreState.
  int64_t skipped_records() const override { return bad_records_.skipped->load(); }
  const BadRecordPolicy& bad_record_policy() const { return bad_records_; }

 protected:
  DatasetPtr ReadPlan(FileReadPlan plan) const override;

 private:
  std::vector<std::string> fields_;
  BadRecordPolicy bad_records_;
};

// Parses one C4 JSON line as JsonLinesDataSource does (exposed for tests and
// other readers). Throws t5xx::Error "<path>:<line_number>: ...".
Example ParseJsonLine(const std::string& path, int64_t line_number,
                      const std::string& line,
                      const std::vector<std::string>& fields);

}  // namespace t5xx::seqio
