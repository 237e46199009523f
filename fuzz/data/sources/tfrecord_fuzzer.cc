// Fuzz target: the TFRecord/tf.Example source (data/sources/tfrecord_source.h):
// record framing, CRCs, gzip detection and the tf.Example decoder, with and
// without skip_bad_records. Input: byte 0 selects the options (bit 0: skip
// bad records; bit 1: request the features "inputs" and "targets" instead
// of every feature); the rest is the file.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "t5xx/data/sources/tfrecord_source.h"
#include "t5xx/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace t5xx;
  fuzz::ClearScratchDir();
  const std::string path = fuzz::WriteScratchFile(
      "data.tfrecord", fuzz::InputBytes(data, size, 1));
  seqio::BadRecordPolicy policy;
  policy.skip = data[0] & 1;
  std::vector<std::string> features;
  if (data[0] & 2) features = {"inputs", "targets"};
  try {
    seqio::TFExampleDataSource source({{"train", path}}, features, policy);
    auto dataset = source.GetDataset("train", false, 0, {});
    while (dataset->Next()) {
    }
  } catch (const Error& e) {
    fuzz::ExpectNamedError(e.what(), {path});
  }
  return 0;
}
