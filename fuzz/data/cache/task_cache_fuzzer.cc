// Fuzz target: the seqio cache reader (data/cache/task_cache.h:
// MakeCachedDataSource over info.train.json, stats.train.json and the shard
// files it declares), with and without skip_bad_records.
// Input: byte 0 (bit 0: skip bad records), then, separated by "\n%%\n"
// (fuzz_support.h): info.train.json, stats.train.json, and up to 2 shard
// files train.tfrecord-0000i-of-00002.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "t5xx/data/cache/task_cache.h"
#include "t5xx/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace t5xx;
  fuzz::ClearScratchDir();
  const std::vector<std::string> parts = fuzz::SplitParts(data + 1, size - 1, 4);
  fuzz::WriteScratchFile("cache/info.train.json", parts[0]);
  if (parts.size() > 1) fuzz::WriteScratchFile("cache/stats.train.json", parts[1]);
  for (size_t i = 2; i < parts.size(); ++i) {
    fuzz::WriteScratchFile("cache/train.tfrecord-0000" + std::to_string(i - 2) + "-of-00002",
                           parts[i]);
  }
  const std::string dir = fuzz::ScratchDir() + "/cache";
  seqio::BadRecordPolicy policy;
  policy.skip = data[0] & 1;
  try {
    seqio::DataSourcePtr source = seqio::MakeCachedDataSource(dir, "train", policy);
    auto dataset = source->GetDataset("train", false, 0, {});
    while (dataset->Next()) {
    }
  } catch (const Error& e) {
    fuzz::ExpectNamedError(e.what(), {dir});
  }
  return 0;
}
