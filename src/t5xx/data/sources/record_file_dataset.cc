// The one dataset over record files (resume, bad records, example sharding)
// (see record_file_dataset.h).
#include "t5xx/data/sources/record_file_dataset.h"

#include <memory>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"

namespace t5xx::seqio {
namespace {

class RecordFileDataset : public Dataset {
 public:
  RecordFileDataset(FileReadPlan plan, RecordFileFormat format,
                    BadRecordPolicy policy)
      : plan_(std::move(plan)), format_(std::move(format)),
        policy_(std::move(policy)) {}

  std::optional<Example> Next() override {
    while (true) {
      if (!reader_) {
        if (file_index_ >= plan_.files.size()) return std::nullopt;
        reader_ = format_.open(plan_.files[file_index_]);
      }
      bool got = false;
      try {
        got = reader_->Next(&record_);
      } catch (const Error&) {
        if (!policy_.skip) throw;
        switch (reader_->after_error()) {
          case RecordReader::AfterError::kThrow:
            throw;
          case RecordReader::AfterError::kSkipRecord:
            if (Mine(position_++)) Skipped();
            continue;
          case RecordReader::AfterError::kSkipRestOfFile:
            Skipped();
            NextFile();
            continue;
        }
      }
      if (!got) {
        NextFile();
        continue;
      }
      const int64_t pos = position_;
      if (!format_.parse_decides_position) {
        ++position_;
        if (!Mine(pos)) continue;
      }
      std::optional<Example> ex;
      try {
        ex = format_.parse(reader_->path(), reader_->index(), record_);
      } catch (const Error&) {
        if (!policy_.skip) throw;
        Skipped();
        continue;
      }
      if (!ex) continue;
      if (format_.parse_decides_position) {
        ++position_;
        if (!Mine(pos)) continue;
      }
      return ex;
    }
  }

  nlohmann::json SaveState() const override {
    nlohmann::json s = {{"file_index", file_index_},
                        {format_.unit, reader_ ? reader_->consumed() : 0},
                        {"position", position_}};
    if (reader_ && reader_->byte_offset() >= 0) s["offset"] = reader_->byte_offset();
    if (policy_.skip) s["skipped"] = skipped_;
    return s;
  }

  void RestoreState(const nlohmann::json& state) override {
    const std::string& who = format_.reader_name;
    const size_t file_index = static_cast<size_t>(StateCount(state, "file_index", who.c_str()));
    const int64_t records = static_cast<int64_t>(StateCount(state, format_.unit.c_str(), who.c_str()));
    T5XX_CHECK(file_index <= plan_.files.size(),
               who + ": saved file index " + std::to_string(file_index) +
                   " is past the " + std::to_string(plan_.files.size()) +
                   " files of this read plan");
    reader_.reset();
    file_index_ = file_index;
    position_ = static_cast<int64_t>(StateCount(state, "position", who.c_str()));
    const int64_t skipped = state.value("skipped", int64_t{0});
    *policy_.skipped += skipped - skipped_;
    skipped_ = skipped;
    if (records <= 0) return;
    T5XX_CHECK(file_index < plan_.files.size(),
               who + ": saved state has a " + format_.unit + " but no file left");
    reader_ = format_.open(plan_.files[file_index_]);
    if (state.contains("offset")) {
      const auto offset = static_cast<int64_t>(StateCount(state, "offset", who.c_str()));
      // Every record takes at least a byte (a line its newline).
      T5XX_CHECK(offset >= records, plan_.files[file_index_] + ": saved position is " +
                                        format_.unit + " " + std::to_string(records) +
                                        " at byte " + std::to_string(offset) +
                                        ", fewer bytes than records; the state is damaged");
      if (reader_->SeekTo(offset, records)) return;
    }
    while (reader_->consumed() < records) {
      bool got = false;
      try {
        got = reader_->Next(&record_);
      } catch (const Error&) {
        // A bad record consumed whole was skipped (and counted) before the
        // save.
        if (policy_.skip &&
            reader_->after_error() == RecordReader::AfterError::kSkipRecord) {
          continue;
        }
        throw;
      }
      T5XX_CHECK(got, plan_.files[file_index_] + ": saved position is " +
                          format_.unit + " " + std::to_string(records) +
                          " but the file has only " +
                          std::to_string(reader_->consumed()) + " " +
                          format_.unit + "s (did the file change?)");
    }
  }

 private:
  bool Mine(int64_t position) const {
    return position % plan_.example_stride == plan_.example_offset;
  }
  void NextFile() {
    reader_.reset();
    ++file_index_;
  }
  void Skipped() {
    ++skipped_;
    ++*policy_.skipped;
  }

  FileReadPlan plan_;
  RecordFileFormat format_;
  BadRecordPolicy policy_;
  int64_t skipped_ = 0;
  size_t file_index_ = 0;
  std::unique_ptr<RecordReader> reader_;
  std::string record_;
  int64_t position_ = 0;
};

// LineReader as a RecordReader: its records are lines.
class LineRecordReader : public RecordReader {
 public:
  explicit LineRecordReader(const std::string& path) : lines_(path) {}
  bool Next(std::string* record) override { return lines_.Next(record); }
  int64_t consumed() const override { return lines_.line_number(); }
  int64_t index() const override { return lines_.line_number(); }
  const std::string& path() const override { return lines_.path(); }
  int64_t byte_offset() const override { return static_cast<int64_t>(lines_.offset()); }
  // (offset and consumed are counts: RecordFileDataset checked them.)
  bool SeekTo(int64_t offset, int64_t consumed) override {
    lines_.Seek(static_cast<uint64_t>(offset), consumed);
    return true;
  }

 private:
  LineReader lines_;
};

}  // namespace

DatasetPtr ReadRecordFiles(FileReadPlan plan, RecordFileFormat format,
                           BadRecordPolicy policy) {
  return std::make_unique<RecordFileDataset>(std::move(plan), std::move(format),
                                             std::move(policy));
}

DatasetPtr ReadLinesDataset(FileReadPlan plan, LineParser parse,
                            BadRecordPolicy policy) {
  RecordFileFormat format;
  format.reader_name = "line reader";
  format.unit = "line";
  format.open = [](const std::string& path) {
    return std::make_unique<LineRecordReader>(path);
  };
  format.parse = std::move(parse);
  format.parse_decides_position = true;
  return ReadRecordFiles(std::move(plan), std::move(format), std::move(policy));
}

}  // namespace t5xx::seqio
