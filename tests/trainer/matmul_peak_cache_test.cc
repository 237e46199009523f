// The matmul peak cache (trainer/matmul_peak_cache.h): its file round trip,
// the files it refuses (newer version, malformed) without failing, the rule
// that keeps the best record, the log line, where the file lives; and the
// measurement and key it stores (trainer/matmul_peak.h).
#include "t5xx/trainer/matmul_peak_cache.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "scoped_env.h"
#include "t5xx/kernels/bf16_matmul.h"
#include "t5xx/kernels/cpu/cpu_gemm.h"
#include "test_util.h"

namespace t5xx::trainer {
namespace {

MatmulPeakKey Key(const std::string& dtype = "float32", int threads = 2) {
  MatmulPeakKey k;
  k.device = "cpu";
  k.cpu_model = "AMD EPYC";
  k.cpu_flags = "avx2 fma";
  k.threads = threads;
  k.libtorch = "1.13.0";
  k.dtype = dtype;
  k.n = 2048;
  return k;
}

MatmulPeakMeasurement Fresh(double gflops, bool busy) {
  MatmulPeakMeasurement m;
  m.flops_per_s = gflops * 1e9;
  m.busy = busy;
  m.conditions = busy ? "this process kept 1.10 of its 2 threads' cores busy"
                      : "this process kept 1.97 of its 2 threads' cores busy";
  return m;
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void Spit(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

using t5xx::testing::ScopedEnv;

TEST(MatmulPeakCacheTest, KeyNamesEveryField) {
  EXPECT_EQ(Key().ToString(),
            "device=cpu; cpu=AMD EPYC; flags=avx2 fma; threads=2; libtorch=1.13.0; "
            "dtype=float32; n=2048");
}

TEST(MatmulPeakCacheTest, RoundTripThroughTheFile) {
  testing::TempDir dir;
  const std::string path = dir.path + "/new/sub/matmul_peak.json";  // directories created
  MatmulPeakCache cache;
  cache.entries[Key().ToString()] = {1.875e11, "2025-01-02T10:00:00Z", true, "quiet text"};
  cache.entries[Key("bfloat16 (emulated)").ToString()] = {1.5e11, "2025-01-03T11:00:00Z", false,
                                                          "busy text"};
  WriteMatmulPeakCache(path, cache);
  std::vector<std::string> warnings;
  const MatmulPeakCache back = ReadMatmulPeakCache(path, &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(back.writable);
  ASSERT_EQ(back.entries.size(), 2u);
  const MatmulPeakRecord& f32 = back.entries.at(Key().ToString());
  EXPECT_EQ(f32.flops_per_s, 1.875e11);
  EXPECT_EQ(f32.measured_at, "2025-01-02T10:00:00Z");
  EXPECT_TRUE(f32.quiet);
  EXPECT_EQ(f32.conditions, "quiet text");
  const MatmulPeakRecord& bf16 = back.entries.at(Key("bfloat16 (emulated)").ToString());
  EXPECT_EQ(bf16.flops_per_s, 1.5e11);
  EXPECT_FALSE(bf16.quiet);
  // Written through a temporary file and a rename: nothing else is left.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path + "/new/sub")) {
    ++files;
    EXPECT_EQ(e.path().filename(), "matmul_peak.json");
  }
  EXPECT_EQ(files, 1);
  // The format and version are in the file.
  const std::string text = Slurp(path);
  EXPECT_NE(text.find("\"format\": \"t5xx matmul peak cache\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"version\": 1"), std::string::npos) << text;
}

TEST(MatmulPeakCacheTest, MissingFileIsAnEmptyCacheWithoutWarnings) {
  testing::TempDir dir;
  std::vector<std::string> warnings;
  const MatmulPeakCache c = ReadMatmulPeakCache(dir.path + "/none.json", &warnings);
  EXPECT_TRUE(c.entries.empty());
  EXPECT_TRUE(c.writable);
  EXPECT_TRUE(warnings.empty());
}

TEST(MatmulPeakCacheTest, NewerVersionIsIgnoredWithAWarningRemeasuredAndLeftAlone) {
  testing::TempDir dir;
  const std::string path = dir.path + "/matmul_peak.json";
  const std::string newer =
      "{\"format\": \"t5xx matmul peak cache\", \"version\": 2, \"entries\": {\"" +
      Key().ToString() +
      "\": {\"flops_per_s\": 9e11, \"measured_at\": \"2030-01-01T00:00:00Z\", \"quiet\": true,"
      " \"something_new\": [1, 2]}}}\n";
  Spit(path, newer);
  std::vector<std::string> warnings;
  const MatmulPeakCache c = ReadMatmulPeakCache(path, &warnings);
  EXPECT_TRUE(c.entries.empty());
  EXPECT_FALSE(c.writable);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("format version 2, newer than this t5xx's 1"), std::string::npos)
      << warnings[0];
  // Resolving uses this run's measurement (not the file's 900 GFLOP/s) and
  // does not overwrite the newer file.
  const ResolvedMatmulPeak r =
      ResolveMatmulPeak(Key(), Fresh(180, false), "2025-02-01T00:00:00Z", path);
  EXPECT_EQ(r.flops_per_s, 180e9);
  EXPECT_FALSE(r.from_cache);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(Slurp(path), newer);
}

TEST(MatmulPeakCacheTest, MalformedFilesAreIgnoredWithAWarningAndReplaced) {
  testing::TempDir dir;
  const std::string path = dir.path + "/matmul_peak.json";
  const std::string k = Key().ToString();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "is not JSON"},
      {"[1, 2]", "is not a t5xx matmul peak cache"},
      {"{\"format\": \"t5xx matmul peak cache\", \"version\": \"1\", \"entries\": {}}",
       "has no valid \"version\""},
      {"{\"format\": \"t5xx matmul peak cache\", \"version\": 1}", "has no \"entries\" object"},
      {"{\"format\": \"t5xx matmul peak cache\", \"version\": 1, \"entries\": {\"" + k +
           "\": {\"flops_per_s\": -5, \"measured_at\": \"x\", \"quiet\": true}}}",
       "has a malformed entry"},
  };
  for (const auto& [text, why] : cases) {
    Spit(path, text);
    std::vector<std::string> warnings;
    EXPECT_TRUE(ReadMatmulPeakCache(path, &warnings).entries.empty()) << text;
    ASSERT_EQ(warnings.size(), 1u) << text;
    EXPECT_NE(warnings[0].find(why), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find(path), std::string::npos) << warnings[0];
    // Resolving measures, warns, and rewrites the file as a valid cache.
    const ResolvedMatmulPeak r =
        ResolveMatmulPeak(Key(), Fresh(150, false), "2025-02-01T00:00:00Z", path);
    EXPECT_EQ(r.flops_per_s, 150e9);
    EXPECT_EQ(r.warnings.size(), 1u);
    std::vector<std::string> after;
    const MatmulPeakCache fixed = ReadMatmulPeakCache(path, &after);
    EXPECT_TRUE(after.empty()) << text;
    ASSERT_EQ(fixed.entries.count(k), 1u) << text;
    EXPECT_EQ(fixed.entries.at(k).flops_per_s, 150e9);
  }
}

TEST(MatmulPeakCacheTest, ReplacementRule) {
  const MatmulPeakRecord quiet150{150e9, "t1", true, ""}, busy150{150e9, "t1", false, ""};
  auto rec = [](double g, bool quiet) { return MatmulPeakRecord{g * 1e9, "t2", quiet, ""}; };
  EXPECT_TRUE(ShouldReplacePeak(std::nullopt, rec(10, false)));  // nothing cached
  EXPECT_TRUE(ShouldReplacePeak(quiet150, rec(160, false)));     // higher, even busy
  EXPECT_FALSE(ShouldReplacePeak(quiet150, rec(140, true)));     // lower
  EXPECT_FALSE(ShouldReplacePeak(quiet150, rec(150, true)));     // equal
  EXPECT_TRUE(ShouldReplacePeak(busy150, rec(140, true)));       // quiet replaces busy
  EXPECT_FALSE(ShouldReplacePeak(busy150, rec(140, false)));     // lower and busy
}

TEST(MatmulPeakCacheTest, ResolveKeepsTheBestRecordAndSaysWhere) {
  testing::TempDir dir;
  const std::string path = dir.path + "/matmul_peak.json";
  // First run, quiet: measured now and kept.
  ResolvedMatmulPeak r = ResolveMatmulPeak(Key(), Fresh(150, false), "2025-01-01T00:00:00Z", path);
  EXPECT_EQ(r.flops_per_s, 150e9);
  EXPECT_FALSE(r.from_cache);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.description,
            "float32 matmul peak 150 GFLOP/s (2048^3, 2 threads): measured now on a quiet "
            "machine (this process kept 1.97 of its 2 threads' cores busy); kept in " +
                path);
  // A lower run (a loaded start): the cached 150 is used.
  r = ResolveMatmulPeak(Key(), Fresh(90, true), "2025-01-02T00:00:00Z", path);
  EXPECT_EQ(r.flops_per_s, 150e9);
  EXPECT_TRUE(r.from_cache);
  EXPECT_EQ(r.record.measured_at, "2025-01-01T00:00:00Z");
  EXPECT_EQ(r.description,
            "float32 matmul peak 150 GFLOP/s (2048^3, 2 threads): measured "
            "2025-01-01T00:00:00Z on a quiet machine (this process kept 1.97 of its 2 threads' "
            "cores busy), the best kept in " +
                path +
                "; measured now 90 GFLOP/s while the machine was busy (this process kept 1.10 "
                "of its 2 threads' cores busy)");
  // Higher replaces lower, even measured busy; then MFU may be overstated.
  r = ResolveMatmulPeak(Key(), Fresh(180, true), "2025-01-03T00:00:00Z", path);
  EXPECT_EQ(r.flops_per_s, 180e9);
  EXPECT_FALSE(r.from_cache);
  EXPECT_NE(r.description.find("(replacing 150 GFLOP/s of 2025-01-01T00:00:00Z)"),
            std::string::npos)
      << r.description;
  EXPECT_NE(r.description.find("; MFU may be overstated"), std::string::npos) << r.description;
  // A quiet measurement replaces a busy record.
  r = ResolveMatmulPeak(Key(), Fresh(170, false), "2025-01-04T00:00:00Z", path);
  EXPECT_EQ(r.flops_per_s, 170e9);
  EXPECT_EQ(r.description.find("overstated"), std::string::npos) << r.description;
  // Another key (threads) is its own record in the same file.
  r = ResolveMatmulPeak(Key("float32", 1), Fresh(95, false), "2025-01-05T00:00:00Z", path);
  EXPECT_EQ(r.flops_per_s, 95e9);
  std::vector<std::string> warnings;
  const MatmulPeakCache c = ReadMatmulPeakCache(path, &warnings);
  ASSERT_EQ(c.entries.size(), 2u);
  EXPECT_EQ(c.entries.at(Key().ToString()).flops_per_s, 170e9);
  EXPECT_EQ(c.entries.at(Key("float32", 1).ToString()).flops_per_s, 95e9);
}

TEST(MatmulPeakCacheTest, BusyWithNothingCachedSaysMfuMayBeOverstated) {
  testing::TempDir dir;
  const ResolvedMatmulPeak r =
      ResolveMatmulPeak(Key(), Fresh(90, true), "2025-01-01T00:00:00Z", dir.path + "/p.json");
  EXPECT_EQ(r.flops_per_s, 90e9);
  EXPECT_NE(r.description.find("measured now while the machine was busy"), std::string::npos)
      << r.description;
  EXPECT_NE(r.description.find("MFU may be overstated"), std::string::npos) << r.description;
}

TEST(MatmulPeakCacheTest, AnUnwritableCacheIsAWarningNotAnError) {
  testing::TempDir dir;
  Spit(dir.path + "/file", "x");  // a regular file where a directory should be
  const ResolvedMatmulPeak r = ResolveMatmulPeak(Key(), Fresh(120, false), "2025-01-01T00:00:00Z",
                                                 dir.path + "/file/sub/matmul_peak.json");
  EXPECT_EQ(r.flops_per_s, 120e9);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("cannot write the matmul peak cache"), std::string::npos)
      << r.warnings[0];
  EXPECT_EQ(r.description.find("kept in"), std::string::npos) << r.description;
}

TEST(MatmulPeakCacheTest, CachePathFromTheEnvironment) {
  ScopedEnv home("HOME", "/home/u");
  {
    ScopedEnv dir("T5XX_CACHE_DIR", "/c");
    EXPECT_EQ(MatmulPeakCachePath(), "/c/matmul_peak.json");
  }
  ScopedEnv dir("T5XX_CACHE_DIR", std::nullopt);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x");
    EXPECT_EQ(MatmulPeakCachePath(), "/x/t5xx/matmul_peak.json");
  }
  ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
  EXPECT_EQ(MatmulPeakCachePath(), "/home/u/.cache/t5xx/matmul_peak.json");
  ScopedEnv no_home("HOME", std::nullopt);
  EXPECT_ERROR_CONTAINS(MatmulPeakCachePath(), "set T5XX_CACHE_DIR");
}

TEST(MatmulPeakTest, MeasurementAndKeyOfThisProcess) {
  const MatmulPeakMeasurement m = MeasureMatmulPeak(at::kCPU, at::kFloat, 64, 2, 0.0);
  EXPECT_GT(m.flops_per_s, 0);
  EXPECT_TRUE(std::isfinite(m.flops_per_s));
  EXPECT_NE(m.conditions.find("this process kept"), std::string::npos) << m.conditions;
  const MatmulPeakKey f32 = CurrentMatmulPeakKey(at::kCPU, at::kFloat);
  EXPECT_EQ(f32.device, "cpu");
  EXPECT_EQ(f32.dtype, "float32 (" + device::CpuGemmPath() + ")");
  EXPECT_EQ(f32.n, 2048);
  EXPECT_EQ(f32.threads, at::get_num_threads());
  const MatmulPeakKey bf16 = CurrentMatmulPeakKey(at::kCPU, at::kBFloat16);
  EXPECT_EQ(bf16.dtype,
            models::NativeCpuBf16Matmul() ? "bfloat16 (native)"
                                          : "bfloat16 (emulated, " + device::CpuGemmPath() + ")");
  EXPECT_THROW(MeasureMatmulPeak(at::kCPU, at::kFloat, 0), std::invalid_argument);
}

TEST(MatmulPeakCacheTest, UtcTimestampShape) {
  const std::string t = UtcNowIso8601();
  ASSERT_EQ(t.size(), 20u) << t;
  EXPECT_EQ(t[4], '-');
  EXPECT_EQ(t[10], 'T');
  EXPECT_EQ(t[19], 'Z');
}

}  // namespace
}  // namespace t5xx::trainer
