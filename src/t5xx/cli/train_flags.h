// The command line of `t5xx train` and `t5xx config` (and `t5xx
// model_info`): t5x's gin flags (--gin_file, --gin.NAME=VALUE,
// --gin_bindings, --gin_search_paths) plus the command's own flags, turned
// into a loaded train configuration (run/train_setup.h).
#pragma once

#include <string>
#include <vector>

#include "t5xx/run/train_setup.h"

namespace t5xx::cli {

// Requires at least one --gin_file, parses the gin flags into a config with
// every configurable registered, adds the task cache directories of
// --seqio_additional_cache_dirs / --cache_dir (cache_dir_flags.h), parses
// --data_dir, --skip_bad_records, --device, --allow_tf32 and
// --peak_flops_per_s, and for infer and eval --int8_weights (the only
// other flags these commands take; a bad
// --device is refused first), refuses a bad $T5XX_BF16_MATMUL
// (kernels/bf16_matmul.h), then run::LoadTrainConfig.
// Throws t5xx::Error naming the flag or binding.
run::LoadedTrainConfig LoadTrainConfigFromFlags(const std::vector<std::string>& args,
                                                const std::string& command);

}  // namespace t5xx::cli
