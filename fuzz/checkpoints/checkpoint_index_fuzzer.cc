// Fuzz target: the msgpack index of a t5x checkpoint
// (checkpoints/t5x/msgpack_index.h: ListIndex, then ReadIndex, which also reads
// every array it points at). Input: the bytes of <dir>/checkpoint. The
// directory also holds one valid zarr array, target.a (float32 [2, 3],
// gzip), which a TensorStore spec in the index may name.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "t5xx/checkpoints/compression.h"
#include "t5xx/checkpoints/t5x/msgpack_index.h"
#include "t5xx/util/error.h"

namespace {

void WriteFixedArray() {
  using namespace t5xx;
  fuzz::WriteScratchFile(
      "ckpt/target.a/.zarray",
      R"({"chunks":[2,3],"compressor":{"id":"gzip","level":1},"dtype":"<f4",)"
      R"("fill_value":null,"filters":null,"order":"C","shape":[2,3],"zarr_format":2})");
  const float values[6] = {1, 2, 3, 4, 5, 6};
  const std::vector<uint8_t> z = checkpoints::GzipCompress(values, sizeof(values), 1);
  fuzz::WriteScratchFile("ckpt/target.a/0.0",
                         std::string_view(reinterpret_cast<const char*>(z.data()), z.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace t5xx;
  fuzz::ClearScratchDir();
  WriteFixedArray();
  const std::string index = fuzz::WriteScratchFile(
      "ckpt/checkpoint", fuzz::InputBytes(data, size));
  const std::string dir = fuzz::ScratchDir() + "/ckpt";
  try {
    checkpoints::ListIndex(dir, dir);
    checkpoints::ReadIndex(dir, dir);
  } catch (const Error& e) {
    fuzz::ExpectNamedError(e.what(), {dir});
  }
  return 0;
}
