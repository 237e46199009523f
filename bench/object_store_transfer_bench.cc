// The client side of bench/object_store_bench.sh: t5xx's storage layer
// alone moving one directory tree to a bucket and back, for the side-by-side
// with boto3 over the same bytes (issue 52: >= 1.0x boto3's upload and
// download throughput).
//
//   build/bin/t5xx_object_store_transfer_bench LOCAL_DIR URL CACHE_DIR
//
// Upload: storage::TreeUploader::Upload of every file under LOCAL_DIR to
// URL (gs:// or s3://), 8 files at a time, each above 16 MiB in 8 parallel
// parts -- what a checkpoint's publish does. Download: storage::CachedCopy
// of URL into the empty object cache CACHE_DIR -- what a restore on a new
// machine does. Prints one line each: MiB, seconds, MiB/s.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "t5xx/storage/remote_copy.h"
#include "t5xx/storage/staged_output.h"
#include "t5xx/util/error.h"

namespace {

double TreeMiB(const std::string& dir) {
  uint64_t bytes = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) bytes += e.file_size();
  }
  return static_cast<double>(bytes) / (1 << 20);
}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Report(const char* what, double mib, double seconds) {
  std::printf("t5xx %s: %.1f MiB in %.2f s, %.1f MiB/s\n", what, mib, seconds, mib / seconds);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s LOCAL_DIR URL CACHE_DIR\n", argv[0]);
    return 2;
  }
  const std::string local = argv[1], url = argv[2], cache = argv[3];
  try {
    const double mib = TreeMiB(local);
    t5xx::storage::TreeUploader uploader(local, url);
    auto t0 = std::chrono::steady_clock::now();
    uploader.Upload("");
    Report("upload", mib, SecondsSince(t0));
    ::setenv("T5XX_OBJECT_CACHE", cache.c_str(), 1);
    t0 = std::chrono::steady_clock::now();
    const std::optional<std::string> copy = t5xx::CachedCopy(url);
    T5XX_CHECK(copy.has_value(), url + " is empty after the upload");
    Report("download", TreeMiB(*copy), SecondsSince(t0));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
