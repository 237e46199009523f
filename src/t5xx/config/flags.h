// Command-line gin flags, as t5x's gin_utils reads them.
//
// Consumes from `args`:
//   --gin_file=F / --gin_file F          (repeatable; parsed in order, later wins)
//   --gin_bindings=B / --gin_bindings B  (repeatable; applied after all files)
//   --gin.NAME=VALUE                     (same as --gin_bindings='NAME = VALUE', but an
//                                         unparseable VALUE for a macro or string
//                                         parameter is taken as a plain string:
//                                         --gin.MODEL_DIR=/tmp/run works unquoted)
//   --gin_search_paths=a,b / --gin_search_paths a,b (comma-separated, repeatable)
// and returns the other arguments, in order. Arguments after a bare "--" are
// not consumed. Bindings (--gin_bindings and --gin.X) are applied in their
// command-line order after every --gin_file. Search paths are the given
// ones, then `config_dir` (the repo's configs/ by default, so
// --gin_file=models/t5_1_1/small.gin works from any directory).
//
// Does NOT call config.Finalize(); do that after adding any further bindings.
// Throws t5xx::Error on a flag without its value, a --gin.NAME without '='
// (naming the flag), and on any parse error in the files or bindings.
#pragma once

#include <string>
#include <vector>

#include "t5xx/config/config.h"

namespace t5xx::gin {

// The repo's configs/ folder (compile definition T5XX_CONFIG_DIR).
std::string DefaultConfigDir();

std::vector<std::string> ParseGinFlags(const std::vector<std::string>& args, Config& config,
                                       const std::string& config_dir = DefaultConfigDir());

}  // namespace t5xx::gin
