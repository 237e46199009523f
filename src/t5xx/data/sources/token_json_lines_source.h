// t5xx.seqio.JsonLinesDataSource: JSON lines whose string fields are text
// and whose arrays of integers are token ids (pre-tokenized data), the gin
// source that gin-defined tasks name. seqio's FileDataSource over
// ReadLinesDataset (record_file_dataset.h): sharding, file shuffling, resume
// and bad-record skipping are the file source's. Framework-free.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/sources/file_data_source.h"

namespace t5xx::seqio {

// One Example per non-blank line: a JSON string field becomes text (its
// bytes kept, ParseJsonKeepingBytes), an array of int32 becomes Tokens.
// `fields` empty: every field, and a field of any other type is an error
// that suggests listing `fields`; else exactly those fields, each required.
// Errors (t5xx::Error, lazily per line, skipped and counted with
// bad_records.skip): "<file>:<line>: malformed JSON line: ...", "missing
// field 'F'", "field 'F' is <json>, neither a string nor an array of int32
// token ids".
class TokenJsonLinesDataSource : public FileDataSource {
 public:
  // The gin name errors use.
  static constexpr char kGinName[] = "t5xx.seqio.JsonLinesDataSource";

  TokenJsonLinesDataSource(std::map<std::string, std::string> split_to_filepattern,
                           std::vector<std::string> fields, BadRecordPolicy bad_records);

 protected:
  DatasetPtr ReadPlan(FileReadPlan plan) const override;

 private:
  std::vector<std::string> fields_;
};

// Parses one line as TokenJsonLinesDataSource does; std::nullopt for a blank
// line. Throws t5xx::Error "<path>:<line_number>: ...".
std::optional<Example> ParseTokenJsonLine(const std::string& path, int64_t line_number,
                                          const std::string& line,
                                          const std::vector<std::string>& fields);

}  // namespace t5xx::seqio
