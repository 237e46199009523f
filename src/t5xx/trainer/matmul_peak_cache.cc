// See matmul_peak_cache.h.
#include "t5xx/trainer/matmul_peak_cache.h"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <nlohmann/json.hpp>
#include <sstream>

#include "t5xx/trainer/train_metrics.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/system/user_cache_dir.h"

namespace t5xx::trainer {

namespace {

constexpr char kFormat[] = "t5xx matmul peak cache";

std::string Gflops(double flops_per_s) { return FormatMetric(flops_per_s / 1e9) + " GFLOP/s"; }

// The record of an entry's JSON; nullopt when a field is missing or has the
// wrong type, or the rate is not a positive finite number.
std::optional<MatmulPeakRecord> RecordFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  auto flops = j.find("flops_per_s"), at = j.find("measured_at"), quiet = j.find("quiet");
  if (flops == j.end() || !flops->is_number() || at == j.end() || !at->is_string() ||
      quiet == j.end() || !quiet->is_boolean()) {
    return std::nullopt;
  }
  MatmulPeakRecord r;
  r.flops_per_s = flops->get<double>();
  if (!std::isfinite(r.flops_per_s) || r.flops_per_s <= 0) return std::nullopt;
  r.measured_at = at->get<std::string>();
  r.quiet = quiet->get<bool>();
  if (auto c = j.find("conditions"); c != j.end() && c->is_string()) {
    r.conditions = c->get<std::string>();
  }
  return r;
}

}  // namespace

std::string MatmulPeakCachePath() {
  const char* dir = std::getenv("T5XX_CACHE_DIR");
  try {
    return (dir && *dir ? std::string(dir) : UserCacheDir()) + "/matmul_peak.json";
  } catch (const Error& e) {
    throw Error(std::string("cannot choose where to cache the matmul peak: set T5XX_CACHE_DIR (") +
                e.what() + ")");
  }
}

MatmulPeakCache ReadMatmulPeakCache(const std::string& path, std::vector<std::string>* warnings) {
  MatmulPeakCache cache;
  if (!seqio::FileExists(path)) return cache;
  auto ignore = [&](const std::string& why) {
    warnings->push_back("matmul peak cache " + path + " " + why +
                        ": ignored; it will be rewritten with this run's measurement");
    return MatmulPeakCache{};
  };
  std::string text;
  try {
    text = seqio::ReadFileToString(path);
  } catch (const std::exception& e) {
    return ignore(std::string("cannot be read (") + e.what() + ")");
  }
  nlohmann::json j;
  std::string error;
  if (!ParseJsonKeepingBytes(text, &j, &error)) return ignore("is not JSON (" + error + ")");
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat) {
    return ignore(std::string("is not a t5xx matmul peak cache (no \"format\": \"") + kFormat +
                  "\")");
  }
  if (!j.contains("version") || !j["version"].is_number_integer() ||
      j["version"].get<int64_t>() < 1) {
    return ignore("has no valid \"version\" (an integer >= 1)");
  }
  const int64_t version = j["version"].get<int64_t>();
  if (version > kMatmulPeakCacheVersion) {
    warnings->push_back("matmul peak cache " + path + " has format version " +
                        std::to_string(version) + ", newer than this t5xx's " +
                        std::to_string(kMatmulPeakCacheVersion) +
                        ": ignored and left as it is; the peak is measured now");
    cache.writable = false;
    return cache;
  }
  if (!j.contains("entries") || !j["entries"].is_object()) {
    return ignore("has no \"entries\" object");
  }
  for (const auto& [key, value] : j["entries"].items()) {
    std::optional<MatmulPeakRecord> r = RecordFromJson(value);
    if (!r) {
      return ignore("has a malformed entry '" + key +
                    "' (needs flops_per_s > 0, measured_at and quiet)");
    }
    cache.entries[key] = *r;
  }
  return cache;
}

void WriteMatmulPeakCache(const std::string& path, const MatmulPeakCache& cache) {
  nlohmann::json entries = nlohmann::json::object();
  for (const auto& [key, r] : cache.entries) {
    entries[key] = {{"flops_per_s", r.flops_per_s},
                    {"measured_at", r.measured_at},
                    {"quiet", r.quiet},
                    {"conditions", r.conditions}};
  }
  const nlohmann::json j = {
      {"format", kFormat}, {"version", kMatmulPeakCacheVersion}, {"entries", entries}};
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) seqio::MakeDirs(path.substr(0, slash));
  seqio::WriteStringToFileAtomic(path, DumpJson(j, 2) + "\n");
}

bool ShouldReplacePeak(const std::optional<MatmulPeakRecord>& cached,
                       const MatmulPeakRecord& fresh) {
  if (!cached) return true;
  if (fresh.flops_per_s > cached->flops_per_s) return true;
  return fresh.quiet && !cached->quiet;
}

ResolvedMatmulPeak ResolveMatmulPeak(const MatmulPeakKey& key, const MatmulPeakMeasurement& fresh,
                                     const std::string& now_utc, const std::string& cache_path) {
  ResolvedMatmulPeak out;
  MatmulPeakCache cache = ReadMatmulPeakCache(cache_path, &out.warnings);
  const std::string k = key.ToString();
  std::optional<MatmulPeakRecord> cached;
  if (auto it = cache.entries.find(k); it != cache.entries.end()) cached = it->second;
  MatmulPeakRecord now;
  now.flops_per_s = fresh.flops_per_s;
  now.measured_at = now_utc;
  now.quiet = !fresh.busy;
  now.conditions = fresh.conditions;
  const bool replace = ShouldReplacePeak(cached, now);
  out.record = replace ? now : *cached;
  out.from_cache = !replace;
  out.flops_per_s = out.record.flops_per_s;
  bool written = false;
  if (replace && cache.writable) {
    cache.entries[k] = now;
    try {
      WriteMatmulPeakCache(cache_path, cache);
      written = true;
    } catch (const std::exception& e) {
      out.warnings.push_back(std::string("cannot write the matmul peak cache: ") + e.what() +
                             " (the peak is measured again at the next run)");
    }
  }
  auto how = [](const MatmulPeakRecord& r) {
    const std::string state = r.quiet ? "on a quiet machine" : "while the machine was busy";
    return r.conditions.empty() ? state : state + " (" + r.conditions + ")";
  };
  std::ostringstream d;
  d << key.dtype << " matmul peak " << Gflops(out.flops_per_s) << " (" << key.n << "^3";
  if (key.device == "cpu") d << ", " << key.threads << " threads";
  d << "): ";
  if (out.from_cache) {
    d << "measured " << out.record.measured_at << " " << how(out.record) << ", the best kept in "
      << cache_path << "; measured now " << Gflops(fresh.flops_per_s) << " " << how(now);
  } else {
    d << "measured now " << how(now);
    if (written) {
      d << "; kept in " << cache_path;
      if (cached)
        d << " (replacing " << Gflops(cached->flops_per_s) << " of " << cached->measured_at << ")";
    }
  }
  if (!out.record.quiet) d << "; MFU may be overstated";
  out.description = d.str();
  return out;
}

std::string UtcNowIso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ResolvedMatmulPeak MeasuredMatmulPeak(at::Device device, at::ScalarType dtype) {
  const MatmulPeakKey key = CurrentMatmulPeakKey(device, dtype);
  const MatmulPeakMeasurement fresh = MeasureMatmulPeak(device, dtype, key.n);
  std::string path;
  try {
    path = MatmulPeakCachePath();
  } catch (const Error& e) {
    ResolvedMatmulPeak out;
    out.flops_per_s = fresh.flops_per_s;
    out.record.flops_per_s = fresh.flops_per_s;
    out.record.quiet = !fresh.busy;
    out.record.conditions = fresh.conditions;
    out.record.measured_at = UtcNowIso8601();
    out.description =
        key.dtype + " matmul peak " + Gflops(fresh.flops_per_s) + ": measured now " +
        (fresh.busy ? "while the machine was busy; MFU may be overstated" : "on a quiet machine") +
        " (not cached)";
    out.warnings.push_back(e.what());
    return out;
  }
  return ResolveMatmulPeak(key, fresh, UtcNowIso8601(), path);
}

}  // namespace t5xx::trainer
