#include "t5xx/data/json_lines_source.h"

#include <memory>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/file_utils.h"
#include "t5xx/util/error.h"
#include "t5xx/util/file_kind.h"
#include "t5xx/util/hash.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/names.h"

namespace t5xx::seqio {
namespace {

class LinesDataset : public Dataset {
 public:
  LinesDataset(FileReadPlan plan, LineParser parse, BadRecordPolicy policy)
      : plan_(std::move(plan)), parse_(std::move(parse)),
        policy_(std::move(policy)) {}

  std::optional<Example> Next() override {
    while (true) {
      if (!reader_) {
        if (file_index_ >= plan_.files.size()) return std::nullopt;
        reader_ = std::make_unique<LineReader>(plan_.files[file_index_]);
      }
      if (!reader_->Next(&line_)) {
        reader_.reset();
        ++file_index_;
        continue;
      }
      const int64_t pos = position_;
      // Every line is parsed, even for other example shards: the parser
      // decides whether a line is an example at all (blank lines are not).
      std::optional<Example> ex;
      if (policy_.skip) {
        try {
          ex = parse_(reader_->path(), reader_->line_number(), line_);
        } catch (const Error&) {
          ++skipped_;
          ++*policy_.skipped;
          continue;
        }
      } else {
        ex = parse_(reader_->path(), reader_->line_number(), line_);
      }
      if (!ex) continue;
      ++position_;
      if (pos % plan_.example_stride != plan_.example_offset) continue;
      return ex;
    }
  }
  // Position = (file index, lines consumed in that file, examples seen).
  // With a skipping policy also "skipped" (bad lines skipped so far).
  nlohmann::json SaveState() const override {
    nlohmann::json s = {{"file_index", file_index_},
                        {"line", reader_ ? reader_->line_number() : 0},
                        {"position", position_}};
    if (policy_.skip) s["skipped"] = skipped_;
    return s;
  }
  void RestoreState(const nlohmann::json& state) override {
    const size_t file_index =
        StateField(state, "file_index", "line reader").get<size_t>();
    const int64_t line = StateField(state, "line", "line reader").get<int64_t>();
    T5XX_CHECK(file_index <= plan_.files.size(),
          "line reader: saved file index " + std::to_string(file_index) +
              " is past the " + std::to_string(plan_.files.size()) +
              " files of this read plan");
    reader_.reset();
    file_index_ = file_index;
    position_ = StateField(state, "position", "line reader").get<int64_t>();
    const int64_t skipped = state.value("skipped", int64_t{0});
    *policy_.skipped += skipped - skipped_;
    skipped_ = skipped;
    if (line > 0) {
      T5XX_CHECK(file_index < plan_.files.size(),
            "line reader: saved state has a line but no file left");
      reader_ = std::make_unique<LineReader>(plan_.files[file_index_]);
      while (reader_->line_number() < line) {
        T5XX_CHECK(reader_->Next(&line_),
              plan_.files[file_index_] + ": saved position is line " +
                  std::to_string(line) + " but the file has only " +
                  std::to_string(reader_->line_number()) +
                  " lines (did the file change?)");
      }
    }
  }

 private:
  FileReadPlan plan_;
  LineParser parse_;
  BadRecordPolicy policy_;
  int64_t skipped_ = 0;
  size_t file_index_ = 0;
  std::unique_ptr<LineReader> reader_;
  std::string line_;
  int64_t position_ = 0;
};

bool IsBlank(const std::string& s) {
  for (char c : s) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
  }
  return true;
}

}  // namespace

FileReadPlan PlanFileRead(const std::string& source_name,
                          const std::string& split, const std::string& pattern,
                          bool shuffle, uint64_t seed,
                          const ShardInfo& shard_info) {
  if (shard_info.num_shards < 1 || shard_info.index < 0 ||
      shard_info.index >= shard_info.num_shards) {
    throw Error(source_name + ": invalid ShardInfo(index=" +
                std::to_string(shard_info.index) +
                ", num_shards=" + std::to_string(shard_info.num_shards) +
                "): need num_shards >= 1 and 0 <= index < num_shards");
  }
  std::vector<std::string> files = Glob(pattern);
  if (files.empty()) {
    throw Error(source_name + ": file pattern '" + pattern + "' of split '" +
                split + "' matches no file; check the path (and that the " +
                "data was built/downloaded)");
  }
  // A directory, FIFO or broken link would fail (or block) only when its
  // turn to be read comes, maybe hours in: refuse it when the list is made.
  for (const std::string& path : files) {
    const std::string why = NotARegularFile(path);
    T5XX_CHECK(why.empty(), source_name + ": file pattern '" + pattern + "' of split '" + split +
                                "' matches '" + path + "', which " + why +
                                "; narrow the pattern to the data files");
  }
  FileReadPlan plan;
  const size_t n = static_cast<size_t>(shard_info.num_shards);
  if (files.size() >= n) {
    for (size_t i = 0; i < files.size(); ++i) {
      if (i % n == static_cast<size_t>(shard_info.index)) {
        plan.files.push_back(files[i]);
      }
    }
  } else {
    plan.files = files;
    plan.example_stride = shard_info.num_shards;
    plan.example_offset = shard_info.index;
  }
  if (shuffle && plan.files.size() > 1) {
    uint64_t state = seed;
    for (size_t i = plan.files.size() - 1; i > 0; --i) {
      const size_t j = static_cast<size_t>(SplitMix64Next(&state) % (i + 1));
      std::swap(plan.files[i], plan.files[j]);
    }
  }
  return plan;
}

DatasetPtr ReadLinesDataset(FileReadPlan plan, LineParser parse,
                            BadRecordPolicy policy) {
  return std::make_unique<LinesDataset>(std::move(plan), std::move(parse),
                                        std::move(policy));
}

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

FileDataSource::FileDataSource(
    std::string source_name,
    std::map<std::string, std::string> split_to_filepattern)
    : source_name_(std::move(source_name)),
      split_to_filepattern_(std::move(split_to_filepattern)) {
  if (split_to_filepattern_.empty()) {
    throw Error(source_name_ + ": split_to_filepattern is empty; give at least "
                "one split, e.g. {\"train\": \"/data/train-*\"}");
  }
}

std::vector<std::string> FileDataSource::splits() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : split_to_filepattern_) out.push_back(k);
  return out;
}

const std::string& FileDataSource::PatternFor(const std::string& split) const {
  auto it = split_to_filepattern_.find(split);
  if (it == split_to_filepattern_.end()) {
    throw Error(source_name_ + ": unknown split '" + split +
                "'; known splits: " + QuotedList(splits()));
  }
  return it->second;
}

std::vector<std::string> FileDataSource::ListShards(const std::string& split) const {
  return PlanFileRead(source_name_, split, PatternFor(split), /*shuffle=*/false, 0,
                      ShardInfo{})
      .files;
}

DatasetPtr FileDataSource::GetDataset(const std::string& split, bool shuffle,
                                      uint64_t seed,
                                      const ShardInfo& shard_info) const {
  return ReadPlan(
      PlanFileRead(source_name_, split, PatternFor(split), shuffle, seed, shard_info));
}

JsonLinesDataSource::JsonLinesDataSource(
    std::map<std::string, std::string> split_to_filepattern,
    std::vector<std::string> fields, BadRecordPolicy bad_records)
    : FileDataSource("JsonLinesDataSource", std::move(split_to_filepattern)),
      fields_(std::move(fields)), bad_records_(std::move(bad_records)) {
  if (!bad_records_.skipped)
    bad_records_.skipped = std::make_shared<std::atomic<int64_t>>(0);
}

DatasetPtr JsonLinesDataSource::ReadPlan(FileReadPlan plan) const {
  std::vector<std::string> fields = fields_;
  return ReadLinesDataset(
      std::move(plan),
      [fields](const std::string& path, int64_t line_number,
               const std::string& line) -> std::optional<Example> {
        if (IsBlank(line)) return std::nullopt;
        return ParseJsonLine(path, line_number, line, fields);
      },
      bad_records_);
}

}  // namespace t5xx::seqio
