// Text-line data source — seqio's TextLineDataSource
// (seqio/dataset_providers.py): one example per line of plain or gzip files.
// Framework-free: no libtorch.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "t5xx/data/sources/file_data_source.h"

namespace t5xx::seqio {

// Yields {"text": <line>} for every line of the files matched by the split's
// glob pattern: the line's bytes as they are in the file, without the "\n"
// (or "\r\n") that ends it — not decoded, so bytes that are not UTF-8 pass
// through unchanged (util/utf8.h). A file's last line needs no newline; a
// final newline does not start another line.
//
// Blank lines are kept as examples, as seqio's TextLineDataSource
// (tf.data.TextLineDataset) keeps them: an empty line yields {"text": ""}
// (an example with no tokens; `t5xx data stats` counts such examples as
// "empty_examples"), and a line of spaces yields its spaces. t5xx has no
// preprocessor that drops them: remove them from the file if the task
// should not see them.
//
// The first `skip_header_lines` lines of each file are skipped and do not
// count for example-level sharding. Files, sharding and shuffling follow
// PlanFileRead (file_data_source.h).
//
// Errors (t5xx::Error): empty split map (constructor); unknown split, a
// pattern matching no file, invalid ShardInfo (GetDataset); unreadable or
// truncated files (while iterating, naming file:line).
class TextLineDataSource : public FileDataSource {
 public:
  explicit TextLineDataSource(
      std::map<std::string, std::string> split_to_filepattern,
      int skip_header_lines = 0);

 protected:
  DatasetPtr ReadPlan(FileReadPlan plan) const override;

 private:
  int skip_header_lines_;
};

}  // namespace t5xx::seqio
