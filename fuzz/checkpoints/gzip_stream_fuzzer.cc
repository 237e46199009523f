// Fuzz target: the gzip/zlib readers. The data layer's stream reader
// (util/files/file_utils.h: LineReader and ReadFileToString, zlib's gzread, which
// passes plain files through) on the input as a file, and the checkpoint
// chunk decoder (checkpoints/compression.h: Inflate, libdeflate then zlib)
// on the input as a buffer, once with no expected size and once with the
// size given by the input's first two bytes (as a zarr chunk's size is).
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "t5xx/checkpoints/compression.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace t5xx;
  fuzz::ClearScratchDir();
  const std::string path = fuzz::WriteScratchFile(
      "data.gz", fuzz::InputBytes(data, size));
  try {
    seqio::LineReader reader(path);
    std::string line;
    while (reader.Next(&line)) {
    }
  } catch (const Error& e) {
    fuzz::ExpectNamedError(e.what(), {path});
  }
  try {
    seqio::ReadFileToString(path);
  } catch (const Error& e) {
    fuzz::ExpectNamedError(e.what(), {path});
  }
  const size_t expected = size >= 2 ? (size_t{data[0]} << 8 | data[1]) : 0;
  for (const size_t want : {size_t{0}, expected}) {
    try {
      const std::vector<uint8_t> out = checkpoints::Inflate(data, size, "chunk 0.0", want);
      if (want > 0 && out.size() > want) {
        fuzz::Fault("Inflate returned more than the expected size");
      }
    } catch (const Error& e) {
      fuzz::ExpectNamedError(e.what(), {"chunk 0.0"});
    }
  }
  return 0;
}
