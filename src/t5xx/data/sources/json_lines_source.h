// JSON-lines data source (C4 format) — seqio's FileDataSource specialised to
// one JSON object per line of strings (seqio/dataset_providers.py:
// FileDataSource with a read_file_fn; TFDS c4 stores the same three string
// fields). Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/sources/file_data_source.h"

namespace t5xx::seqio {

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

 protected:
  DatasetPtr ReadPlan(FileReadPlan plan) const override;

 private:
  std::vector<std::string> fields_;
};

// Parses one C4 JSON line as JsonLinesDataSource does (exposed for tests and
// other readers). Throws t5xx::Error "<path>:<line_number>: ...".
Example ParseJsonLine(const std::string& path, int64_t line_number,
                      const std::string& line,
                      const std::vector<std::string>& fields);

}  // namespace t5xx::seqio
