// Fuzz target: the text-line source (data/sources/text_line_source.h) reading one
// file, plain or gzip. Input: byte 0 % 4 is skip_header_lines; the rest is
// the file.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "t5xx/data/sources/text_line_source.h"
#include "t5xx/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace t5xx;
  fuzz::ClearScratchDir();
  const std::string path = fuzz::WriteScratchFile(
      "data.txt", fuzz::InputBytes(data, size, 1));
  try {
    seqio::TextLineDataSource source({{"train", path}}, data[0] % 4);
    auto dataset = source.GetDataset("train", false, 0, {});
    while (dataset->Next()) {
    }
  } catch (const Error& e) {
    fuzz::ExpectNamedError(e.what(), {path});
  }
  return 0;
}
