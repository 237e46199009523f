// Fuzz target: the gin engine (config/: lexer, parser, includes and
// Config::Finalize: name resolution, macros, references, scopes, type
// checks), then the operative config it prints. The registry holds every
// seqio configurable gin tasks may use (seqio_gin.h); resolution and type
// checking are the same code for t5x's configurables.
// Input, separated by "\n%%\n" (fuzz_support.h): main.gin, inc.gin (in the
// same folder, for `include 'inc.gin'`), then up to 4 --gin_bindings.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "t5xx/config/config.h"
#include "t5xx/config/registry.h"
#include "t5xx/seqio_gin/seqio_gin.h"
#include "t5xx/util/error.h"

namespace {

const t5xx::gin::Registry& SeqioRegistry() {
  static const t5xx::gin::Registry* registry = [] {
    auto* r = new t5xx::gin::Registry();
    t5xx::seqio_gin::RegisterSeqioConfigurables(*r);
    return r;
  }();
  return *registry;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace t5xx;
  fuzz::ClearScratchDir();
  const std::vector<std::string> parts = fuzz::SplitParts(data, size, 6);
  const std::string main_gin = fuzz::WriteScratchFile("config/main.gin", parts[0]);
  const std::string inc_gin = fuzz::WriteScratchFile("config/inc.gin", fuzz::Part(parts, 1));
  try {
    gin::Config config(&SeqioRegistry());
    config.ParseFile(main_gin);
    for (size_t i = 2; i < parts.size(); ++i) {
      config.AddBinding(parts[i], "--gin_bindings flag");
    }
    config.Finalize({"t5xx.seqio.register"});
    config.OperativeConfigString();
  } catch (const Error& e) {
    fuzz::ExpectNamedErrorAny(e.what(), {"main.gin", "inc.gin", "--gin_bindings"});
  }
  return 0;
}
