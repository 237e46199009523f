// Fuzz target: an Orbax checkpoint (checkpoints/orbax/orbax_checkpoint.h,
// ocdbt_reader.h): the OCDBT manifest, B+tree nodes and values, the zarr
// metadata and chunks they hold (raw or zstd), state/_METADATA -- read by
// CheckpointReader as restore, infer, eval and export read one, then every
// array it lists. Input parts (fuzz_support.h): state/manifest.ocdbt,
// state/d/0, state/d/1, state/_METADATA (not written when empty).
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/checkpoints/array.h"
#include "t5xx/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace t5xx;
  fuzz::ClearScratchDir();
  const std::vector<std::string> parts = fuzz::SplitParts(data, size, 4);
  fuzz::WriteScratchFile("checkpoint_1/state/manifest.ocdbt", fuzz::Part(parts, 0));
  fuzz::WriteScratchFile("checkpoint_1/state/d/0", fuzz::Part(parts, 1));
  fuzz::WriteScratchFile("checkpoint_1/state/d/1", fuzz::Part(parts, 2));
  if (!fuzz::Part(parts, 3).empty()) {
    fuzz::WriteScratchFile("checkpoint_1/state/_METADATA", fuzz::Part(parts, 3));
  }
  const std::string dir = fuzz::ScratchDir() + "/checkpoint_1";
  try {
    checkpoints::CheckpointReader reader(dir);
    for (const auto& [path, entry] : reader.arrays()) {
      const checkpoints::LoadedArray a = reader.Read(path);
      if (a.bytes.size() != static_cast<size_t>(checkpoints::NumElements(a.shape)) *
                                checkpoints::DTypeSize(a.dtype)) {
        fuzz::Fault("Read returned the wrong number of bytes for " + path);
      }
    }
  } catch (const Error& e) {
    fuzz::ExpectNamedError(e.what(), {dir});
  }
  return 0;
}
