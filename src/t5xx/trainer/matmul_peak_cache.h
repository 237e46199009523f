// The best matmul peak measured on this machine, kept between runs, so that
// timing/mfu divides by the machine's peak even when a run starts while
// the machine is busy (a peak measured then is low and the MFU inflated).
//
// One small JSON file per user: $T5XX_CACHE_DIR/matmul_peak.json when
// T5XX_CACHE_DIR is set and non-empty, else <UserCacheDir()>/matmul_peak.json
// (~/.cache/t5xx/). Format version 1:
//   {"format": "t5xx matmul peak cache", "version": 1,
//    "entries": {"<MatmulPeakKey::ToString()>":
//                  {"flops_per_s": 1.9e11, "measured_at": "2025-01-02T10:00:00Z",
//                   "quiet": true, "conditions": "<how busy the machine was>"}}}
// A record per key (machine, threads, libtorch, dtype and path, size). Every
// run measures (MeasureMatmulPeak) and keeps the best record: a fresh
// measurement replaces the cached one when it is higher, or when it was
// taken on a quiet machine and the cached one was not (ShouldReplacePeak).
// MFU is computed against the record kept. A file that cannot be parsed, or
// of another format, is replaced; one of a newer version is ignored and left
// as it is (a newer t5xx wrote it). Neither is ever fatal: the fresh
// measurement is used, with a warning.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/trainer/matmul_peak.h"

namespace t5xx::trainer {

inline constexpr int kMatmulPeakCacheVersion = 1;

struct MatmulPeakRecord {
  double flops_per_s = 0;
  std::string measured_at;  // UTC, "YYYY-MM-DDTHH:MM:SSZ"
  bool quiet = false;       // the machine did not look busy
  std::string conditions;   // MatmulPeakMeasurement::conditions
};

struct MatmulPeakCache {
  std::map<std::string, MatmulPeakRecord> entries;  // by MatmulPeakKey::ToString()
  bool writable = true;                             // false for a file of a newer format version
};

// The cache file's path (see top). Throws t5xx::Error when neither
// T5XX_CACHE_DIR, XDG_CACHE_HOME nor HOME is set.
std::string MatmulPeakCachePath();

// The cache in `path`: empty when the file does not exist; empty with a
// warning appended to *warnings when it cannot be read, is not JSON, is not
// this format, or has a malformed entry; empty, not writable, with a warning
// when its version is above kMatmulPeakCacheVersion. Never throws.
MatmulPeakCache ReadMatmulPeakCache(const std::string& path, std::vector<std::string>* warnings);

// Writes `cache` to `path` through a temporary file and a rename (readers
// never see a partial file), creating the directory. Throws t5xx::Error
// naming the path when it cannot.
void WriteMatmulPeakCache(const std::string& path, const MatmulPeakCache& cache);

// Whether `fresh` replaces `cached`: when there is none, when fresh is
// higher, or when fresh was taken on a quiet machine and cached was not.
bool ShouldReplacePeak(const std::optional<MatmulPeakRecord>& cached,
                       const MatmulPeakRecord& fresh);

// The peak a run divides by, and where it came from.
struct ResolvedMatmulPeak {
  double flops_per_s = 0;   // record.flops_per_s
  MatmulPeakRecord record;  // the record kept (the fresh one or the cached one)
  bool from_cache = false;  // record is the cached one
  // One line for the log: the rate in GFLOP/s, the dtype, when and how it
  // was measured, the fresh measurement when the cached one was kept, the
  // file; "MFU may be overstated" when the record kept was busy.
  std::string description;
  std::vector<std::string> warnings;  // unreadable/newer/unwritable file
};

// Updates the cache in `cache_path` with `fresh` (measured at `now_utc`)
// for `key` by ShouldReplacePeak, writes it when it changed (a write error
// becomes a warning), and returns the record kept. Never throws for the file.
ResolvedMatmulPeak ResolveMatmulPeak(const MatmulPeakKey& key, const MatmulPeakMeasurement& fresh,
                                     const std::string& now_utc, const std::string& cache_path);

// The current time as "YYYY-MM-DDTHH:MM:SSZ" (UTC).
std::string UtcNowIso8601();

// CurrentMatmulPeakKey, MeasureMatmulPeak (PeakMatmulSize) and
// ResolveMatmulPeak against MatmulPeakCachePath(): what `t5xx train` and
// bench/train_bench.cc divide model FLOP/s by. When no cache path can be
// chosen, the fresh measurement with a warning.
ResolvedMatmulPeak MeasuredMatmulPeak(at::Device device, at::ScalarType dtype);

}  // namespace t5xx::trainer
