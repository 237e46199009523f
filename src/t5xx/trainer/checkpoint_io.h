// Writes the train state (parameters, optimizer state, step) in t5x's
// checkpoint layout through the framework-free checkpoints library:
// optimizer.target.<param path> and optimizer.state.<path> for every
// optim::StateArray of the optimizer -- for Adafactor
// state.param_states.<param path>.{v_row, v_col, v, m}, for optax adamw
// state.param_states.0.{count, mu.<param path>, nu.<param path>} -- with
// t5x's dtypes and its choice of inline (msgpack) or zarr arrays.
#pragma once

#include <string>
#include <vector>

#include "t5xx/checkpoints/async_checkpointer.h"
#include "t5xx/models/param_store.h"
#include "t5xx/optim/optimizer.h"

namespace t5xx::trainer {

// The dtype parameters are saved in (t5x's SaveCheckpointConfig.dtype: it
// casts `target` only; optimizer slots keep their own dtypes).
enum class SaveDType { kFloat32, kBFloat16 };

// Copies the train state off the training buffers into arrays the
// checkpointer owns: the part of a save that blocks training. `extra_files`
// (e.g. the dataset state) go along. Throws std::logic_error for a state
// dtype the checkpoint format lacks.
checkpoints::PendingCheckpoint SnapshotTrainState(const models::ParamStore& params,
                                                  const optim::Optimizer& optimizer,
                                                  SaveDType dtype = SaveDType::kFloat32,
                                                  std::vector<checkpoints::ExtraFile> extra_files = {});

// Snapshot and save in one blocking call. Returns the committed directory
// MODEL_DIR/checkpoint_<step>. Throws t5xx::Error (from the checkpoints
// library) on I/O failure or when that checkpoint already exists.
std::string SaveTrainState(const std::string& model_dir, const models::ParamStore& params,
                           const optim::Optimizer& optimizer);

}  // namespace t5xx::trainer
