// t5xx's per-user cache directory: where the demo corpus is built by
// default (demo/corpus_builder.h DefaultDataDir) and where the measured
// matmul peak is kept (trainer/matmul_peak_cache.h). The XDG Base Directory
// convention ($XDG_CACHE_HOME, default ~/.cache), with a t5xx subfolder.
#pragma once

#include <string>

namespace t5xx {

// $XDG_CACHE_HOME/t5xx when XDG_CACHE_HOME is set and non-empty, else
// $HOME/.cache/t5xx. Nothing is created. Throws t5xx::Error when neither
// variable is set (the message names both).
std::string UserCacheDir();

}  // namespace t5xx
