// seqio_cache_tasks' preprocessing seeds: the task seed derived from
// --base_seed and the seed of each source shard's work item.
//
// Behaviour source: seqio/scripts/cache_tasks_main.py (run_pipeline: the task
// seed from md5(task name) and --base_seed) and seqio/beam_utils.py
// (PreprocessTask._emit_examples: the shard seed from md5(task name +
// "shard<i>"), with the 7-byte fallback above 2^63 - 1). Python ints are
// unbounded, so the values are computed exactly here (they reach ~2^129),
// then reduced to t5xx's uint64 seeds by taking them mod 2^64 (the low 64
// bits of the two's-complement value). Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace t5xx::seqio {

// An exact seqio seed (a Python int): high * 2^128 + low, high in [-1, 2].
struct CacheSeed {
  int64_t high = 0;
  unsigned __int128 low = 0;

  // Decimal, as Python's str(int) prints the value (e.g. "-5", "3402...").
  std::string ToString() const;
  // The t5xx seed: the value mod 2^64 (Python: value % 2**64). For values in
  // [0, 2^64) this is the value itself.
  uint64_t Reduced() const { return static_cast<uint64_t>(low); }
  bool operator==(const CacheSeed& o) const { return high == o.high && low == o.low; }
};

// seqio's task preprocessing seed: int.from_bytes(md5(task_name), "little")
// + base_seed when base_seed is given and is neither 0 nor -1 (seqio tests
// `FLAGS.base_seed and FLAGS.base_seed != -1`, so 0 means none too); else
// nullopt. Never throws.
std::optional<CacheSeed> CacheTaskSeed(const std::string& task_name,
                                       std::optional<int64_t> base_seed);

// seqio's seed of source shard `shard_index` (0-based) of a task:
// s = int.from_bytes(md5(task_name + "shard<i>"), "little") + (task seed or
// 0); when s > 2^63 - 1, s = int.from_bytes(first 7 bytes of that digest,
// "little") + (task seed or 0). The source's GetDataset and the task's
// PreprocessPrecache of that shard both get s.Reduced(). Never throws.
CacheSeed CacheShardSeed(const std::string& task_name, int64_t shard_index,
                         const std::optional<CacheSeed>& task_seed);

}  // namespace t5xx::seqio
