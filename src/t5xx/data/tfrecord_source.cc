#include "t5xx/data/tfrecord_source.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "t5xx/data/file_utils.h"
#include "t5xx/data/json_lines_source.h"
#include <nlohmann/json.hpp>

#include "t5xx/util/crc32c.h"
#include "t5xx/util/error.h"
#include "t5xx/util/names.h"
#include "t5xx/util/protobuf_wire.h"
#include "t5xx/util/record_frame.h"

namespace t5xx::seqio {
namespace {

// Decodes one Feature message into the Example value of feature `key`.
FeatureValue DecodeFeature(const char* data, size_t size,
                           const std::string& key, const std::string& where) {
  WireReader r(data, size);
  int kind = 0;  // last oneof field seen wins, as in protobuf
  std::pair<const char*, size_t> body{nullptr, 0};
  while (!r.done()) {
    int wt = 0;
    const uint32_t field = r.Tag(&wt);
    if (field >= 1 && field <= 3 && wt == 2) {
      kind = static_cast<int>(field);
      body = r.Bytes();
    } else {
      r.SkipField(wt);
    }
  }
  if (kind == 0) {
    throw Error(where + ": feature '" + key +
                "' has no value (none of bytes_list, float_list, int64_list "
                "is set)");
  }
  if (kind == 2) {
    throw Error(where + ": feature '" + key +
                "' is a float_list: float features are not supported yet "
                "(t5xx Examples hold strings and int32 tokens); drop it from "
                "the requested features or store it as int64/bytes");
  }
  WireReader list(body.first, body.second);
  if (kind == 1) {
    std::vector<std::string> values;
    while (!list.done()) {
      int wt = 0;
      const uint32_t field = list.Tag(&wt);
      if (field == 1 && wt == 2) {
        auto b = list.Bytes();
        values.emplace_back(b.first, b.second);
      } else {
        list.SkipField(wt);
      }
    }
    if (values.size() != 1) {
      throw Error(where + ": feature '" + key + "' is a bytes_list of " +
                  std::to_string(values.size()) +
                  " elements; only single-element bytes_list (a string) is "
                  "supported");
    }
    return std::move(values[0]);
  }
  Tokens tokens;
  auto push = [&](uint64_t raw) {
    const int64_t v = static_cast<int64_t>(raw);
    if (v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max()) {
      throw Error(where + ": feature '" + key + "' has int64 value " +
                  std::to_string(v) +
                  " that does not fit int32 (t5xx token ids are int32)");
    }
    tokens.push_back(static_cast<int32_t>(v));
  };
  while (!list.done()) {
    int wt = 0;
    const uint32_t field = list.Tag(&wt);
    if (field == 1 && wt == 0) {
      push(list.Varint());
    } else if (field == 1 && wt == 2) {
      auto b = list.Bytes();
      WireReader packed(b.first, b.second);
      while (!packed.done()) push(packed.Varint());
    } else {
      list.SkipField(wt);
    }
  }
  return tokens;
}

// ---- dataset --------------------------------------------------------------

class TFExampleDataset : public Dataset {
 public:
  TFExampleDataset(FileReadPlan plan, std::vector<std::string> features,
                   BadRecordPolicy policy)
      : plan_(std::move(plan)), features_(std::move(features)),
        policy_(std::move(policy)) {}

  std::optional<Example> Next() override {
    while (true) {
      if (!reader_) {
        if (file_index_ >= plan_.files.size()) return std::nullopt;
        reader_ = std::make_unique<TFRecordReader>(plan_.files[file_index_]);
      }
      bool got = false;
      try {
        got = reader_->Next(&record_);
      } catch (const Error&) {
        if (!policy_.skip) throw;
        if (reader_->resumable_after_error()) {
          const int64_t pos = position_++;
          if (pos % plan_.example_stride == plan_.example_offset) Skipped();
        } else {
          Skipped();  // the rest of this file cannot be framed
          reader_.reset();
          ++file_index_;
        }
        continue;
      }
      if (!got) {
        reader_.reset();
        ++file_index_;
        continue;
      }
      const int64_t pos = position_++;
      if (pos % plan_.example_stride != plan_.example_offset) continue;
      const std::string where = reader_->path() + ": record " +
                                std::to_string(reader_->record_index());
      if (!policy_.skip) return ParseTFExample(record_, features_, where);
      try {
        return ParseTFExample(record_, features_, where);
      } catch (const Error&) {
        Skipped();
      }
    }
  }
  // Position = (file index, records consumed in that file, records seen).
  nlohmann::json SaveState() const override {
    // With a skipping policy also "skipped" (bad records skipped so far).
    nlohmann::json s = {{"file_index", file_index_},
                        {"record", reader_ ? reader_->records_consumed() : 0},
                        {"position", position_}};
    if (policy_.skip) s["skipped"] = skipped_;
    return s;
  }
  void RestoreState(const nlohmann::json& state) override {
    const size_t file_index =
        StateField(state, "file_index", "TFRecord reader").get<size_t>();
    const int64_t records =
        StateField(state, "record", "TFRecord reader").get<int64_t>();
    T5XX_CHECK(file_index <= plan_.files.size(),
          "TFRecord reader: saved file index " + std::to_string(file_index) +
              " is past the " + std::to_string(plan_.files.size()) +
              " files of this read plan");
    reader_.reset();
    file_index_ = file_index;
    position_ = StateField(state, "position", "TFRecord reader").get<int64_t>();
    const int64_t skipped = state.value("skipped", int64_t{0});
    *policy_.skipped += skipped - skipped_;
    skipped_ = skipped;
    if (records > 0) {
      T5XX_CHECK(file_index < plan_.files.size(),
            "TFRecord reader: saved state has a record but no file left");
      reader_ = std::make_unique<TFRecordReader>(plan_.files[file_index_]);
      while (reader_->records_consumed() < records) {
        bool got = false;
        try {
          got = reader_->Next(&record_);
        } catch (const Error&) {
          // A bad-data-CRC record was skipped (and counted) before the save.
          if (policy_.skip && reader_->resumable_after_error()) continue;
          throw;
        }
        T5XX_CHECK(got,
              plan_.files[file_index_] + ": saved position is record " +
                  std::to_string(records) + " but the file has only " +
                  std::to_string(reader_->records_consumed()) +
                  " records (did the file change?)");
      }
    }
  }

 private:
  FileReadPlan plan_;
  void Skipped() {
    ++skipped_;
    ++*policy_.skipped;
  }

  std::vector<std::string> features_;
  BadRecordPolicy policy_;
  int64_t skipped_ = 0;
  size_t file_index_ = 0;
  std::unique_ptr<TFRecordReader> reader_;
  std::string record_;
  int64_t position_ = 0;
};

}  // namespace

// ---- TFRecordReader ---------------------------------------------------------

TFRecordReader::TFRecordReader(const std::string& path) : path_(path) {
  file_ = gzopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    throw Error(path + ": cannot open TFRecord file: " +
                (errno ? std::strerror(errno) : "out of memory"));
  }
  gzbuffer(file_, 1 << 16);
}

TFRecordReader::~TFRecordReader() {
  if (file_ != nullptr) gzclose(file_);
}

size_t TFRecordReader::ReadFully(char* out, size_t n, uint64_t record_start) {
  size_t got = 0;
  while (got < n) {
    const unsigned chunk =
        static_cast<unsigned>(std::min<size_t>(n - got, 1u << 30));
    const int r = gzread(file_, out + got, chunk);
    if (r < 0) {
      int errnum = 0;
      const char* msg = gzerror(file_, &errnum);
      throw Error(path_ + ": read error in the TFRecord starting at byte "
                  "offset " + std::to_string(record_start) + ": " +
                  (msg ? msg : "unknown") +
                  " (truncated or corrupt gzip file?)");
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  offset_ += got;
  return got;
}

bool TFRecordReader::Next(std::string* record) {
  resumable_ = false;
  const uint64_t start = offset_;
  char header[12];
  const size_t got = ReadFully(header, sizeof(header), start);
  if (got == 0) return false;
  const std::string at = " at byte offset " + std::to_string(start) +
                         " (record " + std::to_string(record_index_ + 1) + ")";
  if (got < sizeof(header)) {
    throw Error(path_ + ": truncated TFRecord header" + at + ": got " +
                std::to_string(got) + " of 12 bytes");
  }
  const uint64_t length = LoadLE(header, 8);
  const uint32_t length_crc = static_cast<uint32_t>(LoadLE(header + 8, 4));
  if (MaskedCrc32c(header, 8) != length_crc) {
    throw Error(path_ + ": corrupt TFRecord" + at +
                ": length CRC mismatch (not a TFRecord file, or damaged)");
  }
  record->clear();
  // Grow in bounded steps so a damaged length cannot force a huge allocation
  // before the data is actually there.
  uint64_t remaining = length;
  while (remaining > 0) {
    const size_t step =
        static_cast<size_t>(std::min<uint64_t>(remaining, 1u << 24));
    const size_t old = record->size();
    record->resize(old + step);
    const size_t n = ReadFully(&(*record)[old], step, start);
    if (n < step) {
      throw Error(path_ + ": truncated TFRecord" + at + ": expected " +
                  std::to_string(length) + " data bytes, got " +
                  std::to_string(old + n));
    }
    remaining -= step;
  }
  char footer[4];
  const size_t f = ReadFully(footer, sizeof(footer), start);
  if (f < sizeof(footer)) {
    throw Error(path_ + ": truncated TFRecord" + at +
                ": data CRC missing (file cut short)");
  }
  if (MaskedCrc32c(record->data(), record->size()) !=
      static_cast<uint32_t>(LoadLE(footer, 4))) {
    ++records_consumed_;
    resumable_ = true;
    throw Error(path_ + ": corrupt TFRecord" + at + ": data CRC mismatch");
  }
  ++records_consumed_;
  ++record_index_;
  record_offset_ = start;
  return true;
}

std::vector<std::string> ReadTFRecordFile(const std::string& path) {
  TFRecordReader reader(path);
  std::vector<std::string> out;
  std::string rec;
  while (reader.Next(&rec)) out.push_back(rec);
  return out;
}

void WriteTFRecordFile(const std::string& path,
                       const std::vector<std::string>& records, bool gzip) {
  std::string data;
  for (const auto& r : records) AppendTFRecordFrame(&data, r);
  if (gzip) {
    GzipWriter w(path);
    w.Write(data);
    w.Close();
  } else {
    WriteStringToFileAtomic(path, data);
  }
}

// ---- tf.Example -------------------------------------------------------------

std::string SerializeTFExample(const Example& example) {
  std::string features;
  for (const auto& [key, value] : example) {
    std::string feature;
    if (const auto* s = std::get_if<std::string>(&value)) {
      std::string list;
      PutLengthDelimited(&list, 1, *s);
      PutLengthDelimited(&feature, 1, list);
    } else {
      const Tokens& toks = std::get<Tokens>(value);
      std::string packed;
      for (int32_t t : toks) {
        PutVarint(&packed, static_cast<uint64_t>(static_cast<int64_t>(t)));
      }
      std::string list;
      if (!toks.empty()) PutLengthDelimited(&list, 1, packed);
      PutLengthDelimited(&feature, 3, list);
    }
    std::string entry;
    PutLengthDelimited(&entry, 1, key);
    PutLengthDelimited(&entry, 2, feature);
    PutLengthDelimited(&features, 1, entry);
  }
  std::string out;
  PutLengthDelimited(&out, 1, features);
  return out;
}

namespace {

// ParseTFExample without the context of wire-format errors.
Example ParseTFExampleFields(const std::string& serialized,
                             const std::vector<std::string>& features,
                             const std::string& where) {
  const std::set<std::string> wanted(features.begin(), features.end());
  // key -> raw Feature bytes (last entry wins, as for protobuf maps).
  std::map<std::string, std::pair<const char*, size_t>> raw;
  WireReader ex(serialized.data(), serialized.size());
  while (!ex.done()) {
    int wt = 0;
    const uint32_t field = ex.Tag(&wt);
    if (field != 1 || wt != 2) {
      ex.SkipField(wt);
      continue;
    }
    auto fs = ex.Bytes();
    WireReader feats(fs.first, fs.second);
    while (!feats.done()) {
      const uint32_t ff = feats.Tag(&wt);
      if (ff != 1 || wt != 2) {
        feats.SkipField(wt);
        continue;
      }
      auto e = feats.Bytes();
      WireReader entry(e.first, e.second);
      std::string key;
      std::pair<const char*, size_t> value{"", 0};
      while (!entry.done()) {
        const uint32_t ef = entry.Tag(&wt);
        if (ef == 1 && wt == 2) {
          auto k = entry.Bytes();
          key.assign(k.first, k.second);
        } else if (ef == 2 && wt == 2) {
          value = entry.Bytes();
        } else {
          entry.SkipField(wt);
        }
      }
      raw[key] = value;
    }
  }
  Example out;
  if (features.empty()) {
    for (const auto& [key, v] : raw) {
      out.emplace(key, DecodeFeature(v.first, v.second, key, where));
    }
    return out;
  }
  for (const auto& key : wanted) {
    auto it = raw.find(key);
    if (it == raw.end()) {
      std::vector<std::string> present;
      for (const auto& [k, v] : raw) present.push_back(k);
      throw Error(where + ": missing feature '" + key + "' (the record has " +
                  (present.empty() ? std::string("no features")
                                   : QuotedList(present)) +
                  ")");
    }
    out.emplace(key, DecodeFeature(it->second.first, it->second.second, key,
                                   where));
  }
  return out;
}

}  // namespace

Example ParseTFExample(const std::string& serialized,
                       const std::vector<std::string>& features,
                       const std::string& where) {
  try {
    return ParseTFExampleFields(serialized, features, where);
  } catch (const WireFormatError& e) {
    throw Error(where + ": malformed tf.Example: " + e.what() +
                " (is this a TFRecord of tf.Example protos?)");
  }
}

// ---- TFExampleDataSource ----------------------------------------------------

TFExampleDataSource::TFExampleDataSource(
    std::map<std::string, std::string> split_to_filepattern,
    std::vector<std::string> features, BadRecordPolicy bad_records)
    : FileDataSource("TFExampleDataSource", std::move(split_to_filepattern)),
      features_(std::move(features)), bad_records_(std::move(bad_records)) {
  if (!bad_records_.skipped)
    bad_records_.skipped = std::make_shared<std::atomic<int64_t>>(0);
}

DatasetPtr TFExampleDataSource::ReadPlan(FileReadPlan plan) const {
  return std::make_unique<TFExampleDataset>(std::move(plan), features_,
                                            bad_records_);
}

}  // namespace t5xx::seqio
