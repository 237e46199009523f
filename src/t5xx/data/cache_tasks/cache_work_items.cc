// The map, reduce and finalize work items of cache_tasks (see
// cache_work_items.h).
#include "t5xx/data/cache_tasks/cache_work_items.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <utility>

#include "t5xx/data/cache/task_cache.h"
#include "t5xx/data/pipeline/seed_purposes.h"
#include "t5xx/data/sources/tfrecord_file.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/hash.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/files/protobuf_wire.h"
#include "t5xx/util/files/record_frame.h"
#include "t5xx/util/system/host_name.h"

namespace t5xx::seqio {
namespace {

namespace fs = std::filesystem;

std::string Numbered(const std::string& stem, int64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%05lld", static_cast<long long>(n));
  return stem + buf;
}

std::string MapDir(const CacheSplitPlan& plan, int64_t i) {
  return plan.work_dir + "/" + Numbered("map-", i);
}
std::string BucketPath(const std::string& map_dir, int64_t j) {
  return map_dir + "/" + Numbered("bucket-", j);
}
std::string SidecarPath(const CacheSplitPlan& plan, int64_t j) {
  return plan.work_dir + "/" + Numbered("shard-", j) + ".json";
}

std::string Where(const CacheSplitPlan& plan) {
  return "cache_tasks: task '" + plan.task_name + "', split '" + plan.split + "'";
}

void FsyncPath(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  T5XX_CHECK(fd >= 0, "cannot open '" + path + "' to sync it: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  T5XX_CHECK(rc == 0, "cannot sync '" + path + "': " + std::strerror(err));
}

// Writes data to path (created; truncated, or appended to with `append`),
// then fsyncs it when `sync`.
void WriteAll(const std::string& path, const std::string& data, bool append, bool sync) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
  T5XX_CHECK(fd >= 0, "cannot write '" + path + "': " + std::strerror(errno));
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      throw Error("cannot write '" + path + "': " + std::strerror(err) + " (disk full?)");
    }
    done += static_cast<size_t>(n);
  }
  const int rc = sync ? ::fsync(fd) : 0;
  const int err = errno;
  ::close(fd);
  T5XX_CHECK(rc == 0, "cannot sync '" + path + "': " + std::strerror(err));
}

std::string ParentDir(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// The kinds of an example's features, to compare examples cheaply.
std::string Signature(const Example& ex) {
  std::string s;
  for (const auto& [k, v] : ex) {
    s += k;
    s += std::holds_alternative<Tokens>(v) ? "\x01" : std::holds_alternative<Array>(v) ? "\x03" : "\x02";
  }
  return s;
}

// The map item's output: one buffer per output shard, appended to its
// bucket file when the buffers grow large, synced when the item ends.
class Buckets {
 public:
  Buckets(std::string dir, int64_t num_shards)
      : dir_(std::move(dir)), buffers_(num_shards), written_(num_shards, false) {}

  void Add(int64_t j, uint64_t key, uint64_t k, const std::string& example) {
    std::string payload;
    payload.reserve(16 + example.size());
    PutFixedLE(&payload, key, 8);
    PutFixedLE(&payload, k, 8);
    payload += example;
    AppendTFRecordFrame(&buffers_[j], payload);
    buffered_ += payload.size() + kTFRecordHeaderSize + kTFRecordFooterSize;
    if (buffered_ > kFlushBytes) Flush();
  }

  void Close() {
    Flush();
    for (size_t j = 0; j < written_.size(); ++j) {
      if (written_[j]) FsyncPath(BucketPath(dir_, j), false);
    }
  }

 private:
  static constexpr size_t kFlushBytes = 64u << 20;

  void Flush() {
    for (size_t j = 0; j < buffers_.size(); ++j) {
      if (buffers_[j].empty()) continue;
      WriteAll(BucketPath(dir_, j), buffers_[j], /*append=*/true, /*sync=*/false);
      written_[j] = true;
      buffers_[j].clear();
    }
    buffered_ = 0;
  }

  std::string dir_;
  std::vector<std::string> buffers_;
  std::vector<bool> written_;
  size_t buffered_ = 0;
};

// One example read back from a bucket.
struct Keyed {
  uint64_t key;
  int64_t i;
  uint64_t k;
  std::string example;
};

nlohmann::json ReadJson(const std::string& path, const std::string& where) {
  nlohmann::json j;
  std::string error;
  T5XX_CHECK(ParseJsonKeepingBytes(ReadFileToString(path), &j, &error),
             where + ": '" + path + "' is not JSON (" + error +
                 "); the work dir is damaged, rerun with --overwrite=true");
  return j;
}

}  // namespace

std::string UniqueTempSuffix() {
  static std::atomic<uint64_t> counter{0};
  return HostName() + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter.fetch_add(1));
}

void WriteFileDurably(const std::string& path, const std::string& data,
                      const std::string& temp_dir) {
  const std::string tmp = (temp_dir.empty() ? path : temp_dir + "/" + fs::path(path).filename().string()) +
                          ".tmp-" + UniqueTempSuffix();
  WriteAll(tmp, data, /*append=*/false, /*sync=*/true);
  RenameFile(tmp, path);
  FsyncPath(ParentDir(path), true);
}

void RemoveTreeAtomically(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  const std::string aside = dir + ".removing-" + UniqueTempSuffix();
  fs::rename(dir, aside, ec);
  T5XX_CHECK(!ec, "cannot move '" + dir + "' aside to remove it: " + ec.message());
  fs::remove_all(aside, ec);
  T5XX_CHECK(!ec, "cannot remove '" + aside + "': " + ec.message());
}

std::string CacheWorkRoot(const std::string& output_dir) {
  return output_dir + "/.t5xx_cache_tasks";
}
std::string CachePlanPath(const std::string& output_dir, const std::string& split) {
  return CacheWorkRoot(output_dir) + "/plan." + split + ".json";
}

nlohmann::json CacheSplitPlan::ToJson() const {
  nlohmann::json shards = nlohmann::json::array();
  for (const std::string& s : source_shards) {
    nlohmann::json entry = {{"name", s}};
    struct stat st;
    if (::stat(s.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      entry["bytes"] = static_cast<int64_t>(st.st_size);
      entry["mtime_ns"] = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 +
                          static_cast<int64_t>(st.st_mtim.tv_nsec);
    }
    shards.push_back(entry);
  }
  return {{"t5xx_cache_format", kCacheFormatVersion},
          {"task", task_name},
          {"split", split},
          {"num_shards", num_shards},
          {"source_shards", shards},
          {"task_seed", exact_task_seed.empty() ? nlohmann::json() : nlohmann::json(exact_task_seed)},
          {"shard_seeds", exact_shard_seeds},
          {"shuffle_seed", shuffle_seed}};
}

bool MapItemDone(const CacheSplitPlan& plan, int64_t i) { return FileExists(MapDir(plan, i)); }

bool OutputShardDone(const CacheSplitPlan& plan, int64_t j) {
  return FileExists(SidecarPath(plan, j)) &&
         FileExists(CachedShardPath(plan.output_dir, plan.split, j, plan.num_shards));
}

MapItemResult RunMapItem(const Task& task, const CacheSplitPlan& plan, int64_t i) {
  MapItemResult result;
  const std::string dir = MapDir(plan, i);
  if (FileExists(dir)) return result;
  const std::string where = Where(plan) + ", source shard " + std::to_string(i) + " ('" +
                            plan.source_shards[i] + "')";
  const std::string tmp = dir + ".tmp-" + UniqueTempSuffix();
  MakeDirs(tmp);
  Buckets buckets(tmp, plan.num_shards);
  nlohmann::json features;  // null until the first example
  std::string signature;
  const uint64_t item_seed = HashSeed(plan.shuffle_seed, static_cast<uint64_t>(i),
                                      seed_purpose::kCacheShuffleShard);
  try {
    DatasetPtr ds = task.source()->GetDataset(
        plan.split, /*shuffle=*/false, plan.shard_seeds[i],
        ShardInfo{static_cast<int>(i), static_cast<int>(plan.num_source_shards())});
    ds = task.PreprocessPrecache(std::move(ds), plan.shard_seeds[i]);
    uint64_t k = 0;
    while (auto ex = ds->Next()) {
      const std::string sig = Signature(*ex);
      if (k == 0) {
        signature = sig;
        features = CacheFeaturesOf(*ex);
      } else if (sig != signature) {
        throw Error("example " + std::to_string(k) + " has the features " +
                    DumpJson(CacheFeaturesOf(*ex)) + " but example 0 had " + DumpJson(features) +
                    "; a cache holds one feature set (info." + plan.split +
                    ".json), so make every example have the same features before the "
                    "CacheDatasetPlaceholder");
      }
      result.stats.Add(*ex, task.output_features());
      const uint64_t key = HashSeed(item_seed, k, seed_purpose::kCacheShuffleKey);
      buckets.Add(static_cast<int64_t>(key % static_cast<uint64_t>(plan.num_shards)), key, k,
                  EncodeCacheExample(*ex));
      ++k;
    }
    buckets.Close();
    const nlohmann::json stats = {{"stats", result.stats.ToJson()}, {"features", features}};
    WriteAll(tmp + "/stats.json", DumpJson(stats), /*append=*/false, /*sync=*/true);
    FsyncPath(tmp, true);
  } catch (const Error& e) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw Error(where + ": " + e.what());
  }
  std::error_code ec;
  fs::rename(tmp, dir, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    // Another process published this item first (a worker started twice):
    // its output is the same bytes.
    T5XX_CHECK(FileExists(dir), where + ": cannot publish '" + dir + "': " + ec.message());
    return MapItemResult{};
  }
  FsyncPath(plan.work_dir, true);
  return result;
}

int64_t RunReduceItem(const CacheSplitPlan& plan, int64_t j) {
  const std::string where = Where(plan) + ", output shard " + std::to_string(j);
  std::vector<Keyed> examples;
  for (int64_t i = 0; i < plan.num_source_shards(); ++i) {
    const std::string dir = MapDir(plan, i);
    T5XX_CHECK(FileExists(dir), where + ": map item " + std::to_string(i) + " ('" + dir +
                                    "') is not published yet");
    const std::string path = BucketPath(dir, j);
    if (!FileExists(path)) continue;
    TFRecordReader reader(path);
    std::string record;
    while (reader.Next(&record)) {
      T5XX_CHECK(record.size() >= 16, where + ": '" + path + "' record " +
                                          std::to_string(reader.record_index()) +
                                          " is too short; rerun with --overwrite=true");
      examples.push_back(Keyed{LoadLE(record.data(), 8), i, LoadLE(record.data() + 8, 8),
                               record.substr(16)});
    }
  }
  std::sort(examples.begin(), examples.end(), [](const Keyed& a, const Keyed& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.i != b.i) return a.i < b.i;
    return a.k < b.k;
  });
  std::string data;
  for (const Keyed& e : examples) AppendTFRecordFrame(&data, e.example);
  const int64_t n = static_cast<int64_t>(examples.size());
  WriteFileDurably(SidecarPath(plan, j), DumpJson(nlohmann::json{{"examples", n}}));
  // The temporary file stays in the work dir: in the output dir, a name
  // like "<split>.tfrecord-00000-of-00004.tmp-..-4" would match seqio's
  // shard pattern "<split>.tfrecord-*-of-*4".
  WriteFileDurably(CachedShardPath(plan.output_dir, plan.split, j, plan.num_shards), data,
                   plan.work_dir);
  return n;
}

CacheStats FinalizeSplit(const CacheSplitPlan& plan) {
  const std::string where = Where(plan);
  CacheStats total;
  nlohmann::json features;
  int64_t features_from = -1;
  for (int64_t i = 0; i < plan.num_source_shards(); ++i) {
    const std::string path = MapDir(plan, i) + "/stats.json";
    const nlohmann::json item = ReadJson(path, where);
    T5XX_CHECK(item.is_object() && item.contains("stats") && item.contains("features"),
               where + ": '" + path + "' lacks \"stats\"/\"features\"; rerun with --overwrite=true");
    total.Merge(CacheStats::FromJson(item["stats"], path));
    if (item["features"].is_null()) continue;
    if (features_from < 0) {
      features = item["features"];
      features_from = i;
    } else {
      T5XX_CHECK(item["features"] == features,
                 where + ": source shard " + std::to_string(i) + " has the features " +
                     DumpJson(item["features"]) + " but source shard " +
                     std::to_string(features_from) + " has " + DumpJson(features) +
                     "; a cache holds one feature set, so make every example have the same "
                     "features before the CacheDatasetPlaceholder");
    }
  }
  int64_t shard_examples = 0;
  for (int64_t j = 0; j < plan.num_shards; ++j) {
    const nlohmann::json side = ReadJson(SidecarPath(plan, j), where);
    // Bounded so that the sum cannot overflow (each shard holds at most 2^40).
    const std::optional<int64_t> examples =
        side.contains("examples") ? JsonInteger(side["examples"], 0, int64_t{1} << 40)
                                  : std::nullopt;
    T5XX_CHECK(examples.has_value(), where + ": '" + SidecarPath(plan, j) +
                                         "' lacks \"examples\" (an integer in [0, 2^40])");
    shard_examples += *examples;
  }
  T5XX_CHECK(shard_examples == total.examples,
             where + ": the output shards hold " + std::to_string(shard_examples) +
                 " examples but the map items produced " + std::to_string(total.examples) +
                 "; the work dir '" + plan.work_dir +
                 "' is damaged, rerun with --overwrite=true");
  if (features.is_null()) features = nlohmann::json::object();
  WriteFileDurably(CachedStatsPath(plan.output_dir, plan.split), CacheJsonText(total.ToJson()),
                   plan.work_dir);
  WriteFileDurably(CachedInfoPath(plan.output_dir, plan.split),
                   CacheJsonText(CacheInfoJson(features, plan.num_shards)), plan.work_dir);
  RemoveTreeAtomically(plan.work_dir);
  return total;
}

}  // namespace t5xx::seqio
