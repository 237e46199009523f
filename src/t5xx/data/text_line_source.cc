#include "t5xx/data/text_line_source.h"

#include <utility>

#include "t5xx/data/json_lines_source.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

TextLineDataSource::TextLineDataSource(
    std::map<std::string, std::string> split_to_filepattern,
    int skip_header_lines)
    : split_to_filepattern_(std::move(split_to_filepattern)),
      skip_header_lines_(skip_header_lines) {
  Check(!split_to_filepattern_.empty(),
        "TextLineDataSource: split_to_filepattern is empty; give at least "
        "one split, e.g. {\"train\": \"/data/*.txt\"}");
  Check(skip_header_lines_ >= 0,
        "TextLineDataSource: skip_header_lines must be >= 0, got " +
            std::to_string(skip_header_lines_));
}

std::vector<std::string> TextLineDataSource::splits() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : split_to_filepattern_) out.push_back(k);
  return out;
}

DatasetPtr TextLineDataSource::GetDataset(const std::string& split,
                                          bool shuffle, uint64_t seed,
                                          const ShardInfo& shard_info) const {
  auto it = split_to_filepattern_.find(split);
  if (it == split_to_filepattern_.end()) {
    std::string known;
    for (const auto& s : splits()) known += (known.empty() ? "'" : ", '") + s + "'";
    throw Error("TextLineDataSource: unknown split '" + split +
                "'; known splits: " + known);
  }
  FileReadPlan plan = PlanFileRead("TextLineDataSource", split, it->second,
                                   shuffle, seed, shard_info);
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
