// Fuzz target: a safetensors file (checkpoints/transformers/safetensors.h:
// SafetensorsReader -- the header's length, the JSON header and its entries,
// the data offsets' coverage -- then reading every tensor it accepted), as
// `t5xx import` reads a Transformers model.safetensors.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "t5xx/checkpoints/transformers/safetensors.h"
#include "t5xx/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace t5xx;
  fuzz::ClearScratchDir();
  fuzz::WriteScratchFile("model.safetensors", fuzz::InputBytes(data, size));
  const std::string path = fuzz::ScratchDir() + "/model.safetensors";
  try {
    checkpoints::SafetensorsReader reader(path);
    uint64_t total = 0;
    for (const auto& [name, entry] : reader.tensors()) {
      const std::vector<uint8_t> bytes = reader.Read(name);
      if (bytes.size() != entry.end - entry.begin) fuzz::Fault("Read returned the wrong size");
      total += bytes.size();
    }
    if (total > size) fuzz::Fault("the tensors hold more bytes than the file");
  } catch (const Error& e) {
    fuzz::ExpectNamedError(e.what(), {path});
  }
  return 0;
}
