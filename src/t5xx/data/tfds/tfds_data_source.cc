// seqio.TfdsDataSource -- the implementation of tfds_data_source.h.
#include "t5xx/data/tfds/tfds_data_source.h"

#include <map>
#include <memory>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/sources/record_file_dataset.h"
#include "t5xx/data/sources/tf_example.h"
#include "t5xx/data/sources/tfrecord_source.h"
#include "t5xx/storage/remote_copy.h"
#include "t5xx/util/error.h"
#include "t5xx/util/hash.h"
#include "t5xx/util/names.h"

namespace t5xx::seqio {
namespace {

// TFDS reader.py: interleave over the file instructions.
constexpr int kCycleLength = 16;
constexpr int kBlockLength = 16;

// Reads `take` examples of one shard file (after its skip) and checks the
// file against dataset_info.json's shardLengths: fewer records, or more when
// the read ends at the shard's end, mean the file is not the one TFDS
// wrote (truncated, replaced, another version's). TFDS itself reads such a
// file silently. Not checked when bad records are skipped (they are counted
// instead).
class DeclaredShardDataset : public Dataset {
 public:
  DeclaredShardDataset(DatasetPtr input, TfdsFileRead read, int64_t declared, bool check)
      : input_(std::move(input)), read_(std::move(read)), declared_(declared), check_(check) {}

  std::optional<Example> Next() override {
    if (count_ >= read_.take) return std::nullopt;
    std::optional<Example> ex = input_->Next();
    if (!ex) {
      T5XX_CHECK(!check_, read_.file + " ends before record " +
                              std::to_string(read_.skip + count_ + 1) + " of the " +
                              std::to_string(declared_) +
                              " its dataset_info.json says (shardLengths): the file is "
                              "truncated or not the one TFDS wrote; prepare the dataset again "
                              "(tfds build)");
      return std::nullopt;
    }
    ++count_;
    if (check_ && count_ == read_.take && read_.skip + read_.take == declared_) {
      T5XX_CHECK(!input_->Next(), read_.file + " holds more records than the " +
                                      std::to_string(declared_) +
                                      " its dataset_info.json says (shardLengths): the file is "
                                      "not the one TFDS wrote; prepare the dataset again");
    }
    return ex;
  }

  nlohmann::json SaveState() const override {
    return {{"position", count_}, {"input", input_->SaveState()}};
  }
  void RestoreState(const nlohmann::json& state) override {
    count_ = StateField(state, "position", "TfdsShard").get<int64_t>();
    T5XX_CHECK(count_ >= 0 && count_ <= read_.take,
               "TfdsShard: saved position " + std::to_string(count_) + " is outside [0, " +
                   std::to_string(read_.take) + "] for " + read_.file);
    input_->RestoreState(StateField(state, "input", "TfdsShard"));
  }

 private:
  DatasetPtr input_;
  TfdsFileRead read_;
  int64_t declared_;
  bool check_;
  int64_t count_ = 0;
};

std::mutex& OverrideMutex() {
  static std::mutex mu;
  return mu;
}
std::string& OverrideDir() {
  static std::string dir;
  return dir;
}

}  // namespace

void SetTfdsDataDirOverride(const std::string& dir) {
  std::lock_guard<std::mutex> lock(OverrideMutex());
  OverrideDir() = dir;
}

std::string TfdsDataDirOverride() {
  std::lock_guard<std::mutex> lock(OverrideMutex());
  return OverrideDir();
}

TfdsDataSource::TfdsDataSource(std::string tfds_name, std::string tfds_data_dir,
                               std::map<std::string, std::string> splits,
                               bool caching_permitted, BadRecordPolicy bad_records)
    : tfds_name_(std::move(tfds_name)),
      tfds_data_dir_(std::move(tfds_data_dir)),
      splits_(std::move(splits)),
      caching_permitted_(caching_permitted),
      bad_records_(std::move(bad_records)) {
  T5XX_CHECK(!tfds_name_.empty(), "seqio.TfdsDataSource: tfds_name is empty; give the TFDS "
                                  "dataset, e.g. tfds_name='glue/cola:2.0.0'");
  if (!bad_records_.skipped) bad_records_.skipped = std::make_shared<std::atomic<int64_t>>(0);
}

std::shared_ptr<const TfdsDataSource::Loaded> TfdsDataSource::Load() const {
  const std::string dir = TfdsDataDir(TfdsDataDirOverride(), tfds_data_dir_);
  std::lock_guard<std::mutex> lock(mu_);
  // The override may change between uses (a test, a second run in one
  // process): load again when the directory did.
  if (loaded_ && loaded_->data_dir == dir) return loaded_;
  auto loaded = std::make_shared<Loaded>();
  loaded->data_dir = dir;
  loaded->dataset = LoadTfdsDataset(tfds_name_, dir);
  loaded->features = std::make_shared<const std::vector<TfdsFeature>>(
      LoadTfdsFeatures(loaded->dataset.dir + "/features.json"));
  loaded_ = loaded;
  return loaded_;
}

const TfdsDataset& TfdsDataSource::dataset() const { return Load()->dataset; }

std::vector<std::string> TfdsDataSource::splits() const {
  std::vector<std::string> out;
  if (!splits_.empty()) {
    for (const auto& [name, spec] : splits_) out.push_back(name);
    return out;
  }
  for (const TfdsSplitInfo& s : dataset().splits) out.push_back(s.name);
  return out;
}

std::vector<TfdsFileRead> TfdsDataSource::FileReadsOf(const Loaded& loaded,
                                                      const std::string& split) const {
  std::string spec = split;
  if (!splits_.empty()) {
    auto it = splits_.find(split);
    if (it == splits_.end()) {
      throw Error("seqio.TfdsDataSource('" + tfds_name_ + "'): unknown split '" + split +
                  "'; its splits: " + QuotedList(splits()));
    }
    spec = it->second;
  }
  try {
    return TfdsFileReads(ResolveTfdsSplit(spec, loaded.dataset), loaded.dataset);
  } catch (const Error& e) {
    throw Error("seqio.TfdsDataSource('" + tfds_name_ + "'): " + e.what());
  }
}

std::vector<std::string> TfdsDataSource::ListShards(const std::string& split) const {
  std::vector<std::string> out;
  for (const TfdsFileRead& r : FileReadsOf(*Load(), split)) out.push_back(r.file);
  return out;
}

std::optional<int64_t> TfdsDataSource::num_input_examples(const std::string& split) const {
  int64_t n = 0;
  for (const TfdsFileRead& r : FileReadsOf(*Load(), split)) n += r.take;
  return n;
}

DatasetPtr TfdsDataSource::GetDataset(const std::string& split, bool shuffle, uint64_t seed,
                                      const ShardInfo& shard_info) const {
  const std::shared_ptr<const Loaded> loaded = Load();
  std::vector<TfdsFileRead> reads = FileReadsOf(*loaded, split);
  const std::string who = "seqio.TfdsDataSource('" + tfds_name_ + "')";
  T5XX_CHECK(shard_info.num_shards >= 1 && shard_info.index >= 0 &&
                 shard_info.index < shard_info.num_shards,
             who + ": invalid ShardInfo(index=" + std::to_string(shard_info.index) +
                 ", num_shards=" + std::to_string(shard_info.num_shards) + ")");
  // TFDS's input_context: whole files per input pipeline.
  if (shard_info.num_shards > 1) {
    T5XX_CHECK(reads.size() >= static_cast<size_t>(shard_info.num_shards),
               who + ": split '" + split + "' reads " + std::to_string(reads.size()) +
                   " files, fewer than the " + std::to_string(shard_info.num_shards) +
                   " readers (TFDS shards by file; seqio's Task then shards the examples)");
    std::vector<TfdsFileRead> mine;
    for (size_t i = static_cast<size_t>(shard_info.index); i < reads.size();
         i += static_cast<size_t>(shard_info.num_shards)) {
      mine.push_back(reads[i]);
    }
    reads = std::move(mine);
  }
  if (shuffle && reads.size() > 1) {
    uint64_t state = seed;
    for (size_t i = reads.size() - 1; i > 0; --i) {
      const size_t j = static_cast<size_t>(SplitMix64Next(&state) % (i + 1));
      std::swap(reads[i], reads[j]);
    }
  }
  RecordFileFormat format;
  format.reader_name = "TFRecord reader";
  format.unit = "record";
  // A shard in a bucket is downloaded into the object cache when a reader
  // first opens it (each data replica fetches only its own shards).
  format.open = [](const std::string& path) { return OpenTFRecordRecordReader(LocalCopyIfAny(path)); };
  format.parse = [features = loaded->features](const std::string& path, int64_t index,
                                               const std::string& record) {
    const std::string where = path + ": record " + std::to_string(index);
    return std::optional<Example>(
        DecodeTfdsExample(ParseRawTFExample(record, where), *features, where));
  };
  // Each file's declared length (dataset_info.json's shardLengths).
  std::map<std::string, int64_t> declared;
  for (const TfdsSplitInfo& s : loaded->dataset.splits) {
    for (size_t i = 0; i < s.files.size(); ++i) declared[s.files[i]] = s.shard_lengths[i];
  }
  std::vector<std::function<DatasetPtr()>> factories;
  for (const TfdsFileRead& r : reads) {
    factories.push_back([r, format, policy = bad_records_, length = declared.at(r.file)]() {
      FileReadPlan one;
      one.files = {r.file};
      DatasetPtr ds = ReadRecordFiles(std::move(one), format, policy);
      if (r.skip > 0) ds = Skip(std::move(ds), r.skip);
      return DatasetPtr(
          std::make_unique<DeclaredShardDataset>(std::move(ds), r, length, !policy.skip));
    });
  }
  return Interleave(std::move(factories),
                    loaded->dataset.disable_shuffling ? 1 : kCycleLength, kBlockLength);
}

}  // namespace t5xx::seqio
