// Writes the train state (parameters, Adafactor slots, step) in t5x's
// checkpoint layout through the framework-free checkpoints library:
// optimizer.target.<param path> and
// optimizer.state.param_states.<param path>.{v_row, v_col, v, m}.
#pragma once

#include <string>

#include "t5xx/models/param_store.h"
#include "t5xx/optim/adafactor.h"

namespace t5xx::trainer {

// Returns the committed directory MODEL_DIR/checkpoint_<step>. Throws
// t5xx::Error (from the checkpoints library) on I/O failure or when that
// checkpoint already exists.
std::string SaveTrainState(const std::string& model_dir,
                           const models::ParamStore& params,
                           const optim::Adafactor& optimizer);

}  // namespace t5xx::trainer
