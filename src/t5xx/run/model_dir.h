// MODEL_DIR, the run's output folder (t5x's model_dir): the check that a run
// may use it, done before anything is written, and its creation with the
// operative config (t5x writes config.gin there at start-up).
#pragma once

#include <string>
#include <vector>

namespace t5xx::run {

// MODEL_DIR must be a writable directory (or creatable: its nearest
// existing ancestor a writable directory). One that holds checkpoints is
// resumed from its latest (run/restore.h), as in t5x. Throws t5xx::Error
// saying what to pass instead.
void CheckModelDir(const std::string& model_dir);

// Creates MODEL_DIR, writes `operative_config` to MODEL_DIR/config.gin and
// removes the unfinished checkpoint_<N>.tmp-* directories an interrupted
// save left, returning their paths. Throws t5xx::Error when any fails.
std::vector<std::string> CreateModelDir(const std::string& model_dir,
                                        const std::string& operative_config);

}  // namespace t5xx::run
