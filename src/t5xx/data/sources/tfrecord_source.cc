// seqio's TFExampleDataSource: TFRecord files of tf.Example protos (see
// tfrecord_source.h).
#include "t5xx/data/sources/tfrecord_source.h"

#include <memory>
#include <utility>

#include "t5xx/data/sources/record_file_dataset.h"
#include "t5xx/data/sources/tf_example.h"
#include "t5xx/data/sources/tfrecord_file.h"

namespace t5xx::seqio {
namespace {

// TFRecordReader as a RecordReader (OpenTFRecordRecordReader).
class TFRecordRecordReader : public RecordReader {
 public:
  explicit TFRecordRecordReader(const std::string& path) : records_(path) {}
  bool Next(std::string* record) override { return records_.Next(record); }
  int64_t consumed() const override { return records_.records_consumed(); }
  int64_t index() const override { return records_.record_index(); }
  const std::string& path() const override { return records_.path(); }
  AfterError after_error() const override {
    return records_.resumable_after_error() ? AfterError::kSkipRecord
                                            : AfterError::kSkipRestOfFile;
  }
  int64_t byte_offset() const override { return static_cast<int64_t>(records_.offset()); }
  // (offset and consumed are counts: RecordFileDataset checked them.)
  bool SeekTo(int64_t offset, int64_t consumed) override {
    records_.Seek(static_cast<uint64_t>(offset), consumed);
    return true;
  }

 private:
  TFRecordReader records_;
};

}  // namespace

std::unique_ptr<RecordReader> OpenTFRecordRecordReader(const std::string& path) {
  return std::make_unique<TFRecordRecordReader>(path);
}

TFExampleDataSource::TFExampleDataSource(
    std::map<std::string, std::string> split_to_filepattern,
    std::vector<std::string> features, BadRecordPolicy bad_records)
    : FileDataSource("TFExampleDataSource", std::move(split_to_filepattern),
                     std::move(bad_records)),
      features_(std::move(features)) {}

DatasetPtr TFExampleDataSource::ReadPlan(FileReadPlan plan) const {
  RecordFileFormat format;
  format.reader_name = "TFRecord reader";
  format.unit = "record";
  format.open = OpenTFRecordRecordReader;
  format.parse = [features = features_](const std::string& path, int64_t index,
                                        const std::string& record) {
    return std::optional<Example>(
        ParseTFExample(record, features, path + ": record " + std::to_string(index)));
  };
  return ReadRecordFiles(std::move(plan), std::move(format), bad_record_policy());
}

}  // namespace t5xx::seqio
