// The JSON-lines (C4 format) data source (see json_lines_source.h).
#include "t5xx/data/sources/json_lines_source.h"

#include <memory>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/sources/record_file_dataset.h"
#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/names.h"

namespace t5xx::seqio {
namespace {

bool IsBlank(const std::string& s) {
  for (char c : s) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
  }
  return true;
}

}  // namespace

Example ParseJsonLine(const std::string& path, int64_t line_number,
                      const std::string& line,
                      const std::vector<std::string>& fields) {
  const std::string where = path + ":" + std::to_string(line_number) + ": ";
  nlohmann::json j;
  std::string parse_error;
  if (!ParseJsonKeepingBytes(line, &j, &parse_error)) {
    throw Error(where + "malformed JSON line: " + parse_error);
  }
  if (!j.is_object()) {
    throw Error(where + "malformed JSON line: expected an object like "
                        "{\"text\": ...}, got a JSON " +
                std::string(j.type_name()));
  }
  Example ex;
  if (fields.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.value().is_string()) {
        ex.emplace(it.key(), it.value().get<std::string>());
      }
    }
    return ex;
  }
  for (const auto& f : fields) {
    auto it = j.find(f);
    if (it == j.end()) {
      std::vector<std::string> present;
      for (auto k = j.begin(); k != j.end(); ++k) present.push_back(k.key());
      throw Error(where + "missing field '" + f + "' (the line has " +
                  (present.empty() ? std::string("no fields")
                                   : QuotedList(present)) +
                  ")");
    }
    if (!it->is_string()) {
      throw Error(where + "field '" + f + "' is not a string (it is a JSON " +
                  it->type_name() + ")");
    }
    ex.emplace(f, it->get<std::string>());
  }
  return ex;
}

JsonLinesDataSource::JsonLinesDataSource(
    std::map<std::string, std::string> split_to_filepattern,
    std::vector<std::string> fields, BadRecordPolicy bad_records)
    : FileDataSource("JsonLinesDataSource", std::move(split_to_filepattern),
                     std::move(bad_records)),
      fields_(std::move(fields)) {}

DatasetPtr JsonLinesDataSource::ReadPlan(FileReadPlan plan) const {
  std::vector<std::string> fields = fields_;
  return ReadLinesDataset(
      std::move(plan),
      [fields](const std::string& path, int64_t line_number,
               const std::string& line) -> std::optional<Example> {
        if (IsBlank(line)) return std::nullopt;
        return ParseJsonLine(path, line_number, line, fields);
      },
      bad_record_policy());
}

}  // namespace t5xx::seqio
