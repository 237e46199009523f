// Fuzz target: a zarr v2 array as a t5x checkpoint stores it
// (checkpoints/zarr_array.h: ReadZarrMetadata and ReadZarrArray: the
// .zarray checks, chunk keys, gzip/zlib/raw chunk decoding and assembly).
// Input, files separated by "\n%%\n" (fuzz_support.h): the .zarray, then up
// to 8 chunk files, each "<key>\n<bytes>" with a key of digits, '.' and '/'
// (a key with "..", a leading '/' or another character is skipped).
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "t5xx/checkpoints/zarr_array.h"
#include "t5xx/util/error.h"

namespace {

bool UsableKey(const std::string& key) {
  if (key.empty() || key.size() > 32 || key.front() == '/' || key.back() == '/' ||
      key.find("..") != std::string::npos || key.find("//") != std::string::npos) {
    return false;
  }
  for (char c : key) {
    if (!(c == '.' || c == '/' || (c >= '0' && c <= '9'))) return false;
  }
  return key != ".";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace t5xx;
  fuzz::ClearScratchDir();
  const std::vector<std::string> parts = fuzz::SplitParts(data, size, 9);
  fuzz::WriteScratchFile("array/.zarray", parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t nl = parts[i].find('\n');
    if (nl == std::string::npos) continue;
    const std::string key = parts[i].substr(0, nl);
    if (!UsableKey(key)) continue;
    fuzz::TryWriteScratchFile("array/" + key, std::string_view(parts[i]).substr(nl + 1));
  }
  const std::string dir = fuzz::ScratchDir() + "/array";
  try {
    checkpoints::ReadZarrArray(dir, "target.a", std::nullopt, std::nullopt);
  } catch (const Error& e) {
    fuzz::ExpectNamedError(e.what(), {dir});
  }
  return 0;
}
