// The text-line data source (seqio's TextLineDataSource) (see
// text_line_source.h).
#include "t5xx/data/sources/text_line_source.h"

#include <utility>

#include "t5xx/data/sources/record_file_dataset.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

TextLineDataSource::TextLineDataSource(
    std::map<std::string, std::string> split_to_filepattern,
    int skip_header_lines)
    : FileDataSource("TextLineDataSource", std::move(split_to_filepattern)),
      skip_header_lines_(skip_header_lines) {
  T5XX_CHECK(skip_header_lines_ >= 0,
        "TextLineDataSource: skip_header_lines must be >= 0, got " +
            std::to_string(skip_header_lines_));
}

DatasetPtr TextLineDataSource::ReadPlan(FileReadPlan plan) const {
  const int64_t skip = skip_header_lines_;
  return ReadLinesDataset(
      std::move(plan),
      [skip](const std::string&, int64_t line_number,
             const std::string& line) -> std::optional<Example> {
        if (line_number <= skip) return std::nullopt;
        return Example{{"text", line}};
      });
}

}  // namespace t5xx::seqio
