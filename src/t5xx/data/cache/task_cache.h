// A task cache on disk, as seqio lays it out and reads it: where caches are
// searched (the global cache dirs, a task's directory, its COMPLETED
// marker), the paths of a split's files, and the reader of a cached split
// (seqio's _CachedDataSource). The writer is cache_tasks.h; the record and
// JSON encoding is cache_encoding.h.
//
// Behaviour source: seqio/utils.py (get/set/add_global_cache_dirs,
// get_task_dir_from_name, get_cached_info_path, get_cached_stats_path,
// get_cached_tfrecord_prefix) and seqio/dataset_providers.py (Task.cache_dir,
// Task.get_cached_stats, _CachedDataSource, _rename_plaintext_to_pretokenized,
// FileDataSource.get_dataset). Framework-free: no libtorch.
//
// A cache directory <d>/<TaskDirFromName(task)> holds, per split:
//   info.<split>.json   {"features": {k: {"dtype": "int32"|"int64"|"bool"|
//                        "string", "shape": [null] or []}}, "num_shards": M,
//                        "seqio_version": "...", and "t5xx_cache_format": 1
//                        when t5xx wrote it}
//   stats.<split>.json  {"examples": n, "<f>_tokens": n, "<f>_max_tokens": n}
//   <split>.tfrecord-00000-of-0000M ... (TFRecords of tf.Example)
// and one COMPLETED file once every split is written.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/sources/data_source.h"
#include "t5xx/data/sources/file_data_source.h"

namespace t5xx::seqio {

// Version of the t5xx fields of info.<split>.json ("t5xx_cache_format"); a
// reader refuses a larger one.
inline constexpr int kCacheFormatVersion = 1;

// seqio's cache reader interleaves its shard files like FileDataSource.
inline constexpr int kCacheCycleLength = 16;
inline constexpr int kCacheBlockLength = 16;

// seqio.add_global_cache_dirs / set_global_cache_dirs /
// get_global_cache_dirs: the process-wide list of directories searched for
// task caches, in order (thread-safe).
void AddGlobalCacheDirs(const std::vector<std::string>& dirs);
void SetGlobalCacheDirs(std::vector<std::string> dirs);
std::vector<std::string> GetGlobalCacheDirs();

// seqio.get_task_dir_from_name: the task name's ':'-separated parts joined
// as path components ("glue:cola_v2" -> "glue/cola_v2").
std::string TaskDirFromName(const std::string& task_name);

// seqio Task.cache_dir: the first <d>/<TaskDirFromName(task_name)> (d in
// dirs, in order) that holds a COMPLETED file; nullopt when none does.
std::optional<std::string> FindTaskCacheDir(const std::string& task_name,
                                            const std::vector<std::string>& dirs);

// seqio utils: <dir>/info.<split>.json, <dir>/stats.<split>.json,
// <dir>/<split>.tfrecord.
std::string CachedInfoPath(const std::string& dir, const std::string& split);
std::string CachedStatsPath(const std::string& dir, const std::string& split);
std::string CachedTfrecordPrefix(const std::string& dir, const std::string& split);
// Output shard `index` of `num_shards`: <prefix>-00003-of-00064 (Beam's
// shard name template, 5 digits or more).
std::string CachedShardPath(const std::string& dir, const std::string& split, int64_t index,
                            int64_t num_shards);

// One feature of info.<split>.json, checked to be one t5xx can hold.
struct CachedFeature {
  // "int32", "int64", "bool", "float32" or "string". "int64" features of a
  // cache older than seqio 0.0.0 are reported as "int32" (seqio's rule).
  // Read as: int32 or int64 [null] -> Tokens (values must fit int32);
  // string [] -> std::string; every other dtype and rank (0 or 1) -> an
  // Array of it.
  std::string dtype;
  bool tokens = false;  // int32/int64 of rank 1 ([null]): Tokens
  bool rank1 = false;   // shape [null] (else a scalar: shape [])
};

// info.<split>.json of a cache directory, parsed and checked.
struct CachedSplitInfo {
  std::map<std::string, CachedFeature> features;
  int64_t num_shards = 0;
  std::string seqio_version;  // "" when the file has none
  int t5xx_cache_format = 0;  // 0 when seqio (not t5xx) wrote it
};

// Reads and checks <cache_dir>/info.<split>.json. Throws t5xx::Error naming
// the file and what would fix it when it is missing or not JSON, lacks
// "features"/"num_shards" (num_shards >= 1), has a "t5xx_cache_format"
// larger than kCacheFormatVersion ("written by a newer t5xx"), or declares
// a feature t5xx cannot hold: rank >= 2 (seqio's ragged features, stored
// with `_rl:<dim>:<key>` row-length keys), a float dtype, a rank-0 integer
// or a rank-1 string (t5xx Examples hold strings and rank-1 int sequences).
CachedSplitInfo ReadCachedInfo(const std::string& cache_dir, const std::string& split);

// stats.<split>.json as written by seqio: {"examples": n, "<f>_tokens": n,
// "<f>_max_tokens": n, ...}. Throws t5xx::Error naming the file when it is
// missing, unparsable or without "examples".
nlohmann::json ReadCachedStats(const std::string& cache_dir, const std::string& split);

// seqio's _CachedDataSource for one split of a cache dir: a FileDataSource
// with that one split, whose shards are the M files
// <split>.tfrecord-NNNNN-of-<M> (M from info.<split>.json). GetDataset plans
// the files like every FileDataSource (PlanFileRead: file-level sharding when
// there are at least num_shards files, else every num_shards-th example of
// the whole stream; file shuffling with the seed) and reads them through
// Interleave(cycle_length 16, block_length 16), as seqio's
// FileDataSource.get_dataset does, so with shuffle=false t5xx and seqio
// yield the same order. Each record becomes an Example holding the info's
// features: a rank-1 int feature as Tokens (an empty Tokens when the record
// lacks it: FixedLenSequenceFeature(allow_missing=True)), a string as
// std::string (required in every record); a feature "<k>_plaintext" is
// renamed "<k>_pretokenized"; record features the info does not declare
// are dropped (tf.io.parse_single_example reads only those).
// Throws t5xx::Error naming the file for a missing/bad info.<split>.json (see
// ReadCachedInfo), a missing stats.<split>.json, a format from the future,
// a feature t5xx cannot hold, and shard files missing (naming the first) or
// absent. While iterating, a record whose features disagree with the info
// (a missing string, a kind other than declared, an `_rl:`/`_sp:` key) is
// an error naming the file and record. `bad_records` as FileDataSource's.
DataSourcePtr MakeCachedDataSource(const std::string& cache_dir, const std::string& split,
                                   BadRecordPolicy bad_records = {});

}  // namespace t5xx::seqio
