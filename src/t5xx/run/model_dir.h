// MODEL_DIR, the run's output folder (t5x's model_dir): the check that a run
// may use it, done before anything is written, and its creation with the
// operative config (t5x writes config.gin there at start-up).
#pragma once

#include <string>

namespace t5xx::run {

// MODEL_DIR must be a directory (or creatable: its nearest existing
// ancestor a writable directory) that holds no checkpoint -- an empty one,
// or one with unrelated files, is fine, as in t5x; t5xx cannot resume yet.
// Throws t5xx::Error saying what to pass instead.
void CheckModelDir(const std::string& model_dir);

// Creates MODEL_DIR and writes `operative_config` to MODEL_DIR/config.gin.
// Throws t5xx::Error when either fails.
void CreateModelDir(const std::string& model_dir, const std::string& operative_config);

}  // namespace t5xx::run
