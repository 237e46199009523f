// t5xx.seqio.JsonLinesDataSource: JSON lines with text or token fields (see
// token_json_lines_source.h).
#include "t5xx/data/sources/token_json_lines_source.h"

#include <climits>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/sources/record_file_dataset.h"
#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/utf8.h"

namespace t5xx::seqio {

TokenJsonLinesDataSource::TokenJsonLinesDataSource(
    std::map<std::string, std::string> split_to_filepattern, std::vector<std::string> fields,
    BadRecordPolicy bad_records)
    : FileDataSource(kGinName, std::move(split_to_filepattern), std::move(bad_records)),
      fields_(std::move(fields)) {}

std::optional<Example> ParseTokenJsonLine(const std::string& path, int64_t line_number,
                                          const std::string& line,
                                          const std::vector<std::string>& fields) {
  if (line.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
  const std::string where = path + ":" + std::to_string(line_number);
  nlohmann::json j;
  std::string parse_error;
  T5XX_CHECK(ParseJsonKeepingBytes(line, &j, &parse_error),
             where + ": malformed JSON line: " + parse_error);
  T5XX_CHECK(j.is_object(), where + ": malformed JSON line: expected one JSON object, got a JSON " +
                                std::string(j.type_name()));
  Example ex;
  auto convert = [&](const std::string& k, const nlohmann::json& x, bool requested) {
    if (x.is_string()) {
      ex[k] = x.get<std::string>();
      return;
    }
    if (x.is_array()) {
      Tokens ids;
      bool ok = true;
      for (const auto& e : x) {
        const std::optional<int64_t> id = JsonInteger(e, INT32_MIN, INT32_MAX);
        if (!id) {
          ok = false;
          break;
        }
        ids.push_back(static_cast<int32_t>(*id));
      }
      if (ok) {
        ex[k] = std::move(ids);
        return;
      }
    }
    // Never dropped silently: a task reading it would fail later with "no
    // feature" and no file:line.
    T5XX_CHECK(false, where + ": field '" + k + "' is " +
                          std::string(TruncateUtf8(DumpJson(x), 40)) +
                          ", neither a string nor an array of int32 token ids" +
                          (requested ? std::string()
                                     : std::string("; list the fields the task reads in ") +
                                           TokenJsonLinesDataSource::kGinName +
                                           ".fields to ignore the others"));
  };
  if (fields.empty()) {
    for (const auto& [k, x] : j.items()) convert(k, x, false);
  } else {
    for (const auto& k : fields) {
      auto it = j.find(k);
      T5XX_CHECK(it != j.end(), where + ": missing field '" + k + "'");
      convert(k, *it, true);
    }
  }
  return ex;
}

DatasetPtr TokenJsonLinesDataSource::ReadPlan(FileReadPlan plan) const {
  std::vector<std::string> fields = fields_;
  return ReadLinesDataset(
      std::move(plan),
      [fields](const std::string& path, int64_t line_number, const std::string& line) {
        return ParseTokenJsonLine(path, line_number, line, fields);
      },
      bad_record_policy());
}

}  // namespace t5xx::seqio
