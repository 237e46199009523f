// Task caches on disk and their reader (see task_cache.h).
#include "t5xx/data/cache/task_cache.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <regex>
#include <set>
#include <utility>

#include "t5xx/data/cache/cache_encoding.h"
#include "t5xx/data/sources/record_file_dataset.h"
#include "t5xx/data/sources/tf_example.h"
#include "t5xx/data/sources/tfrecord_file.h"
#include "t5xx/data/sources/tfrecord_source.h"
#include "t5xx/storage/remote_copy.h"
#include "t5xx/storage/storage.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/files/protobuf_wire.h"

namespace t5xx::seqio {
namespace {

std::mutex& GlobalCacheDirsMutex() {
  static std::mutex m;
  return m;
}
std::vector<std::string>& GlobalCacheDirs() {
  static std::vector<std::string> dirs;
  return dirs;
}

// posixpath.join(a, b): b when absolute or a is empty, else a + "/" + b
// (no second "/" after one a ends with; "a" + "" -> "a/").
std::string JoinPath(const std::string& a, const std::string& b) {
  if (a.empty() || (!b.empty() && b[0] == '/')) return b;
  return a.back() == '/' ? a + b : a + "/" + b;
}

std::string RebuildHint(const std::string& cache_dir) {
  return "rebuild the cache with `t5xx cache_tasks --tasks=<task> --output_cache_dir=<dir> "
         "--overwrite=true` (cache directory '" + cache_dir + "')";
}

nlohmann::json ReadJsonFile(const std::string& path, const std::string& cache_dir,
                            const std::string& what) {
  T5XX_CHECK(FileExists(path), path + ": no such file, so '" + cache_dir +
                                   "' holds no complete cache of this split (" + what + "); " +
                                   RebuildHint(cache_dir));
  nlohmann::json j;
  std::string error;
  T5XX_CHECK(ParseJsonKeepingBytes(ReadFileToString(path), &j, &error),
             path + ": not JSON (" + error + "); " + RebuildHint(cache_dir));
  T5XX_CHECK(j.is_object(), path + ": expected a JSON object; " + RebuildHint(cache_dir));
  return j;
}

// seqio casts int64 features to int32 for caches written before seqio
// 0.0.0 (packaging.version: "0.pre", the value of a missing field, is such
// a version). True for versions below 0.0.0: a release of zeros with a
// pre-release or development tag and no post-release tag.
bool BeforeSeqio000(const std::string& version, const std::string& path) {
  static const std::regex kPep440(
      R"(v?(\d+(?:\.\d+)*))"
      R"((?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*)?)"
      R"((?:-\d+|[-_.]?(post|rev|r)[-_.]?\d*)?)"
      R"((?:[-_.]?(dev)[-_.]?\d*)?)"
      R"((?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?)",
      std::regex::icase);
  std::smatch m;
  T5XX_CHECK(std::regex_match(version, m, kPep440),
             path + ": \"seqio_version\" '" + version + "' is not a version (PEP 440)");
  const std::string release = m[1].str();
  const bool zeros = release.find_first_not_of("0.") == std::string::npos;
  return zeros && !m[3].matched && (m[2].matched || m[4].matched);
}

// The keys of a serialized tf.Example's feature map, in record order.
std::vector<std::string> RecordKeys(const std::string& record, const std::string& where) {
  std::vector<std::string> keys;
  try {
    WireReader example(record.data(), record.size());
    while (!example.done()) {
      int wt = 0;
      if (example.Tag(&wt) != 1 || wt != 2) {
        example.SkipField(wt);
        continue;
      }
      const auto features = example.Bytes();
      WireReader map(features.first, features.second);
      while (!map.done()) {
        if (map.Tag(&wt) != 1 || wt != 2) {
          map.SkipField(wt);
          continue;
        }
        const auto entry = map.Bytes();
        WireReader e(entry.first, entry.second);
        while (!e.done()) {
          if (e.Tag(&wt) == 1 && wt == 2) {
            const auto key = e.Bytes();
            keys.emplace_back(key.first, key.second);
          } else {
            e.SkipField(wt);
          }
        }
      }
    }
  } catch (const WireFormatError& e) {
    throw Error(where + ": not a tf.Example (" + e.what() + ")");
  }
  return keys;
}

// One declared feature of a cache record from its raw tf.Example list, as
// _CachedDataSource's parse and cast give it (CachedFeature says how).
FeatureValue CachedValue(const CachedFeature& f, const RawFeature* raw, const std::string& key,
                         const std::string& where, const std::string& info_path) {
  const std::string damaged = "; the cache is damaged, rebuild it";
  Array a;
  a.dtype = f.dtype == "int64"     ? Array::DType::kInt64
            : f.dtype == "bool"    ? Array::DType::kBool
            : f.dtype == "float32" ? Array::DType::kFloat32
            : f.dtype == "string"  ? Array::DType::kString
                                   : Array::DType::kInt32;
  if (!raw) {
    // FixedLenSequenceFeature(allow_missing=True): an empty sequence.
    T5XX_CHECK(f.rank1, where + ": " + f.dtype + " feature '" + key + "' (declared in " +
                            info_path + ") is missing" + damaged);
    if (f.tokens) return Tokens{};
    a.shape = {0};
    return a;
  }
  const RawFeature::Kind want = f.dtype == "string"    ? RawFeature::kBytes
                                : f.dtype == "float32" ? RawFeature::kFloat
                                                       : RawFeature::kInt64;
  static const char* kNames[] = {"a bytes_list", "a float_list", "an int64_list"};
  T5XX_CHECK(raw->kind == want, where + ": feature '" + key + "' is " + kNames[raw->kind] +
                                    " but " + info_path + " declares it " + f.dtype + damaged);
  const size_t n = want == RawFeature::kBytes   ? raw->bytes.size()
                   : want == RawFeature::kFloat ? raw->floats.size()
                                                : raw->ints.size();
  T5XX_CHECK(f.rank1 || n == 1, where + ": feature '" + key + "' holds " + std::to_string(n) +
                                    " values but " + info_path + " declares a scalar" + damaged);
  if (f.tokens || a.dtype == Array::DType::kInt32 || a.dtype == Array::DType::kBool) {
    for (int64_t v : raw->ints) {
      const bool fits = a.dtype == Array::DType::kBool ? (v == 0 || v == 1)
                                                       : (v >= INT32_MIN && v <= INT32_MAX);
      T5XX_CHECK(fits, where + ": feature '" + key + "' holds " + std::to_string(v) + ", not a " +
                           (f.tokens ? std::string("token id (int32)") : f.dtype) + damaged);
    }
  }
  if (f.tokens) return Tokens(raw->ints.begin(), raw->ints.end());
  if (a.dtype == Array::DType::kString && !f.rank1) return raw->bytes[0];
  if (f.rank1) a.shape = {static_cast<int64_t>(n)};
  a.ints = raw->ints;
  a.floats = raw->floats;
  a.strings = raw->bytes;
  return a;
}

// One cache record -> Example, as _CachedDataSource's parse, cast and
// rename steps.
Example ParseCachedRecord(const CachedSplitInfo& info, const std::string& info_path,
                          const std::string& where, const std::string& record) {
  for (const std::string& key : RecordKeys(record, where)) {
    const bool ragged = key.rfind(kRaggedLengthKeyPrefix, 0) == 0;
    T5XX_CHECK(!ragged && key.rfind(kSparseIndicesKeyPrefix, 0) != 0,
               where + ": key '" + key + "' holds the " +
                   (ragged ? "row lengths of a ragged" : "indices of a sparse") +
                   " feature; t5xx reads cached features of rank 0 and 1 only, so this cache "
                   "cannot be read (cache the task with those)");
  }
  const std::map<std::string, RawFeature> raw = ParseRawTFExample(record, where);
  Example out;
  for (const auto& [key, feature] : info.features) {
    auto it = raw.find(key);
    FeatureValue value =
        CachedValue(feature, it == raw.end() ? nullptr : &it->second, key, where, info_path);
    static const std::string kOld = "_plaintext";
    std::string name = key;
    if (name.size() >= kOld.size() &&
        name.compare(name.size() - kOld.size(), kOld.size(), kOld) == 0) {
      name = name.substr(0, name.size() - kOld.size()) + "_pretokenized";
    }
    out[name] = std::move(value);
  }
  return out;
}

// seqio's _CachedDataSource: one split's shard files, interleaved.
class CachedDataSource : public FileDataSource {
 public:
  CachedDataSource(std::string cache_dir, const std::string& split,
                   std::shared_ptr<const CachedSplitInfo> info, BadRecordPolicy bad_records)
      : FileDataSource("task cache '" + cache_dir + "'",
                       {{split, CachedTfrecordPrefix(cache_dir, split) + "-*-of-" +
                                    ShardSuffix(info->num_shards)}},
                       std::move(bad_records)),
        info_(std::move(info)),
        info_path_(CachedInfoPath(cache_dir, split)) {}

  static std::string ShardSuffix(int64_t num_shards) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%05lld", static_cast<long long>(num_shards));
    return buf;
  }

 protected:
  DatasetPtr ReadPlan(FileReadPlan plan) const override {
    RecordFileFormat format;
    format.reader_name = "TFRecord reader";
    format.unit = "record";
    format.open = [](const std::string& path) {
      return OpenTFRecordRecordReader(path);
    };
    format.parse = [info = info_, info_path = info_path_](
                       const std::string& path, int64_t index, const std::string& record) {
      return std::optional<Example>(ParseCachedRecord(
          *info, info_path, path + ": record " + std::to_string(index), record));
    };
    std::vector<std::function<DatasetPtr()>> factories;
    for (const std::string& file : plan.files) {
      factories.push_back([file, format, policy = bad_record_policy()]() {
        FileReadPlan one;
        one.files = {file};
        return ReadRecordFiles(std::move(one), format, policy);
      });
    }
    DatasetPtr ds = Interleave(std::move(factories), kCacheCycleLength, kCacheBlockLength);
    // Fewer files than shards: seqio's Task.get_dataset shards the
    // interleaved stream by example.
    if (plan.example_stride > 1) {
      ds = Shard(std::move(ds), plan.example_stride, plan.example_offset);
    }
    return ds;
  }

 private:
  std::shared_ptr<const CachedSplitInfo> info_;
  std::string info_path_;
};

}  // namespace

void AddGlobalCacheDirs(const std::vector<std::string>& dirs) {
  std::lock_guard<std::mutex> lock(GlobalCacheDirsMutex());
  GlobalCacheDirs().insert(GlobalCacheDirs().end(), dirs.begin(), dirs.end());
}

void SetGlobalCacheDirs(std::vector<std::string> dirs) {
  std::lock_guard<std::mutex> lock(GlobalCacheDirsMutex());
  GlobalCacheDirs() = std::move(dirs);
}

std::vector<std::string> GetGlobalCacheDirs() {
  std::lock_guard<std::mutex> lock(GlobalCacheDirsMutex());
  return GlobalCacheDirs();
}

std::string TaskDirFromName(const std::string& task_name) {
  std::string out;
  size_t start = 0;
  while (true) {
    const size_t colon = task_name.find(':', start);
    out = JoinPath(out, task_name.substr(start, colon - start));
    if (colon == std::string::npos) return out;
    start = colon + 1;
  }
}

std::optional<std::string> FindTaskCacheDir(const std::string& task_name,
                                            const std::vector<std::string>& dirs) {
  for (const std::string& d : dirs) {
    const std::string dir = JoinPath(d, TaskDirFromName(task_name));
    if (IsRemotePath(dir)) {
      // A cache in a bucket (cache_tasks --output_cache_dir=gs://...): the
      // task's cache is copied whole (--data_dir's mirror or the object
      // cache) and read there.
      if (!storage::FileSize(dir + "/COMPLETED")) continue;
      const std::optional<std::string> local = ReadableCopy(dir, RemoteCopyDataDir());
      if (local) return *local;
      continue;
    }
    if (FileExists(JoinPath(dir, "COMPLETED"))) return dir;
  }
  return std::nullopt;
}

std::string CachedInfoPath(const std::string& dir, const std::string& split) {
  return JoinPath(dir, "info." + split + ".json");
}
std::string CachedStatsPath(const std::string& dir, const std::string& split) {
  return JoinPath(dir, "stats." + split + ".json");
}
std::string CachedTfrecordPrefix(const std::string& dir, const std::string& split) {
  return JoinPath(dir, split + ".tfrecord");
}
std::string CachedShardPath(const std::string& dir, const std::string& split, int64_t index,
                            int64_t num_shards) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "-%05lld-of-%05lld", static_cast<long long>(index),
                static_cast<long long>(num_shards));
  return CachedTfrecordPrefix(dir, split) + buf;
}

CachedSplitInfo ReadCachedInfo(const std::string& cache_dir, const std::string& split) {
  const std::string path = CachedInfoPath(cache_dir, split);
  const nlohmann::json j = ReadJsonFile(path, cache_dir, "its info file");
  CachedSplitInfo info;
  if (j.contains("t5xx_cache_format")) {
    const auto& f = j["t5xx_cache_format"];
    const std::optional<int64_t> format = JsonInteger(f, 1);
    T5XX_CHECK(format.has_value(),
               path + ": \"t5xx_cache_format\" must be an integer >= 1, got " + DumpJson(f));
    T5XX_CHECK(*format <= kCacheFormatVersion,
               path + ": t5xx_cache_format " + DumpJson(f) +
                   " was written by a newer t5xx (this one reads format " +
                   std::to_string(kCacheFormatVersion) +
                   " and older); upgrade t5xx, or " + RebuildHint(cache_dir));
    info.t5xx_cache_format = static_cast<int>(*format);
  }
  const std::optional<int64_t> num_shards =
      j.contains("num_shards") ? JsonInteger(j["num_shards"], 1) : std::nullopt;
  T5XX_CHECK(num_shards.has_value(),
             path + ": \"num_shards\" must be an integer >= 1; " + RebuildHint(cache_dir));
  info.num_shards = *num_shards;
  T5XX_CHECK(j.contains("features") && j["features"].is_object(),
             path + ": \"features\" (an object) is missing; seqio writes an empty info file "
                    "for a split without examples. " + RebuildHint(cache_dir));
  bool legacy = true;  // seqio's default "0.pre"
  if (j.contains("seqio_version")) {
    T5XX_CHECK(j["seqio_version"].is_string(), path + ": \"seqio_version\" must be a string");
    info.seqio_version = j["seqio_version"].get<std::string>();
    legacy = BeforeSeqio000(info.seqio_version, path);
  }
  for (const auto& [key, desc] : j["features"].items()) {
    const std::string where = path + ": feature '" + key + "'";
    T5XX_CHECK(desc.is_object() && desc.contains("dtype") && desc["dtype"].is_string() &&
                   desc.contains("shape") && desc["shape"].is_array(),
               where + ": expected {\"dtype\": ..., \"shape\": [...]}, got " + DumpJson(desc));
    T5XX_CHECK(key.rfind(kRaggedLengthKeyPrefix, 0) != 0 &&
                   key.rfind(kSparseIndicesKeyPrefix, 0) != 0,
               where + ": names starting with '_rl:'/'_sp:' hold ragged/sparse metadata in "
                       "seqio's tf.Examples, not features");
    CachedFeature f;
    f.dtype = desc["dtype"].get<std::string>();
    const auto& shape = desc["shape"];
    T5XX_CHECK(shape.size() <= 1,
               where + " has shape " + DumpJson(shape) + " (rank " + std::to_string(shape.size()) +
                   "): seqio stores such features ragged, with `_rl:<dim>:" + key +
                   "` row-length keys, and t5xx reads cached features of rank 0 and 1 only; "
                   "cache the task with the feature flattened to rank 1");
    T5XX_CHECK(shape.empty() || shape[0].is_null() || shape[0].is_number_integer(),
               where + " has shape " + DumpJson(shape) + "; expected [null] or []");
    if (legacy && f.dtype == "int64") f.dtype = "int32";
    f.rank1 = shape.size() == 1;
    // int64 sequences too, as t5xx always read them (values must fit int32):
    // token ids cached by older pipelines.
    f.tokens = f.rank1 && (f.dtype == "int32" || f.dtype == "int64");
    T5XX_CHECK(f.dtype == "int32" || f.dtype == "int64" || f.dtype == "bool" ||
                   f.dtype == "float32" || f.dtype == "string",
               where + " has dtype '" + f.dtype +
                   "': t5xx reads cached int32, int64, bool, float32 and string features; "
                   "cache the task without it");
    info.features[key] = f;
  }
  return info;
}

nlohmann::json ReadCachedStats(const std::string& cache_dir, const std::string& split) {
  const std::string path = CachedStatsPath(cache_dir, split);
  nlohmann::json j = ReadJsonFile(path, cache_dir, "its stats file");
  T5XX_CHECK(j.contains("examples") && j["examples"].is_number_integer(),
             path + ": \"examples\" (an integer) is missing; " + RebuildHint(cache_dir));
  return j;
}

DataSourcePtr MakeCachedDataSource(const std::string& cache_dir, const std::string& split,
                                   BadRecordPolicy bad_records) {
  auto info = std::make_shared<const CachedSplitInfo>(ReadCachedInfo(cache_dir, split));
  ReadCachedStats(cache_dir, split);  // seqio's reader loads it too
  // Every shard file must be there: a missing one would silently drop data.
  const std::vector<std::string> found = Glob(CachedTfrecordPrefix(cache_dir, split) + "-*-of-" +
                                              CachedDataSource::ShardSuffix(info->num_shards));
  const std::set<std::string> have(found.begin(), found.end());
  for (int64_t i = 0; i < info->num_shards; ++i) {
    const std::string shard = CachedShardPath(cache_dir, split, i, info->num_shards);
    T5XX_CHECK(have.count(shard),
               shard + ": missing (" + CachedInfoPath(cache_dir, split) + " declares " +
                   std::to_string(info->num_shards) + " shards, " +
                   std::to_string(have.size()) + " found); " + RebuildHint(cache_dir));
  }
  return std::make_shared<CachedDataSource>(cache_dir, split, std::move(info),
                                            std::move(bad_records));
}

}  // namespace t5xx::seqio
