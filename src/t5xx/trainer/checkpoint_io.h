// Writes the train state (parameters, optimizer state, step) in t5x's
// checkpoint layout through the framework-free checkpoints library:
// optimizer.target.<param path> and optimizer.state.<path> for every
// optim::StateArray of the optimizer -- for Adafactor
// state.param_states.<param path>.{v_row, v_col, v, m}, for optax adamw
// state.param_states.0.{count, mu.<param path>, nu.<param path>} -- with
// t5x's dtypes and its choice of inline (msgpack) or zarr arrays -- from one
// process holding everything, or sharded: several processes each holding
// boxes of the variables, each writing the boxes it is the primary replica
// of (t5x: "each host writes its own slices").
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/checkpoints/t5x/scanned_layers.h"
#include "t5xx/checkpoints/async_checkpointer.h"
#include "t5xx/checkpoints/save_best.h"
#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/models/param_store.h"
#include "t5xx/optim/optimizer.h"
#include "t5xx/partitioning/base_partitioner.h"
#include "t5xx/partitioning/collectives/communicator.h"

namespace t5xx::trainer {

// The dtype parameters are saved in (t5x's SaveCheckpointConfig.dtype: it
// casts `target` only; optimizer slots keep their own dtypes).
enum class SaveDType { kFloat32, kBFloat16 };

// Copies the train state off the training buffers into arrays the
// checkpointer owns: the part of a save that blocks training. `extra_files`
// (e.g. the dataset state) go along. `scan` (scalable_t5's scan_layers =
// True): parameters and optimizer slots are saved in t5x's scanned layout
// (checkpoints::StackTrainState, each slot placed by its
// StateArray::param_dims). Throws std::logic_error for a state dtype the
// checkpoint format lacks; t5xx::Error from StackTrainState.
checkpoints::PendingCheckpoint SnapshotTrainState(
    const models::ParamStore& params, const optim::Optimizer& optimizer,
    SaveDType dtype = SaveDType::kFloat32, std::vector<checkpoints::ExtraFile> extra_files = {},
    const std::optional<checkpoints::ScanLayout>& scan = std::nullopt);

// The snapshot of a sharded save, on the caller's (training) thread of every
// process of `communicator` at the same point: `layout` says, for every
// parameter ("target/<param path>") and optimizer state array
// ("state/<StateArray path>"), its global shape, the box this process holds
// (the live tensor's shape) and whether it is the primary replica that
// writes it (Trainer::DescribeVariables()). Each zarr array carries its
// global shape and this process's box; inline (msgpack) arrays are made
// whole with an AllGather here, so the background save runs no
// collectives. Process 0 also makes the checkpoint's temporary directory
// (checkpoints::BeginShardedSave) and broadcasts its name; the result's
// `sharded` (wait_seconds: how long process 0 waits for the others' parts)
// makes AsyncCheckpointer::Save / SaveCheckpoint write this process's part.
// One process: exactly SnapshotTrainState. Throws t5xx::Error on every
// process when process 0 cannot start the checkpoint (e.g. it exists), and
// std::logic_error for a variable the layout lacks or whose box is not the
// live tensor's shape.
checkpoints::PendingCheckpoint SnapshotShardedTrainState(
    const std::string& model_dir, const models::ParamStore& params,
    const optim::Optimizer& optimizer, const std::vector<partitioning::VariableInfo>& layout,
    const partitioning::Communicator& communicator, SaveDType dtype = SaveDType::kFloat32,
    std::vector<checkpoints::ExtraFile> extra_files = {}, double wait_seconds = 600);

// Snapshot and save in one blocking call. Returns the committed directory
// MODEL_DIR/checkpoint_<step>. Throws t5xx::Error (from the checkpoints
// library) on I/O failure or when that checkpoint already exists.
std::string SaveTrainState(const std::string& model_dir, const models::ParamStore& params,
                           const optim::Optimizer& optimizer,
                           const std::optional<checkpoints::ScanLayout>& scan = std::nullopt);

// utils.SaveCheckpointConfig's retention: the newest `keep`, or with
// SaveBestCheckpointer (`save_best`) the best `keep` by the monitored
// metric in model_dir's summaries (read, as t5x's
// populate_metrics_for_steps reads them, only when there are more
// checkpoints than that) plus the newest.
checkpoints::RetentionPolicy RetentionPolicyOf(std::optional<int64_t> keep,
                                               std::optional<int64_t> keep_dataset_checkpoints,
                                               std::optional<int64_t> force_keep_period,
                                               const std::optional<checkpoints::SaveBestConfig>& save_best,
                                               const std::string& model_dir);

// prompt-tuning's Checkpointer.save_numpy, for TrainLoopConfig::before_save:
// the parameters whose path 'a/b/c' (the flax path without its leading '/',
// as prompt-tuning matches it) fully matches one of `regexes` (ECMAScript),
// each as a float32 .npy file named by its dotted name, via
// checkpoints::SaveNumpyCheckpoint (npy.h) under
// MODEL_DIR/numpy_checkpoints/checkpoint_<step>/. Throws t5xx::Error when a
// matched parameter is split across processes (the file needs it whole) or
// a write fails; std::regex_error for an invalid regex (when made).
std::function<void(int64_t step, const models::ParamStore& params)> NumpyCheckpointHook(
    const std::string& model_dir, const std::vector<std::string>& regexes);

}  // namespace t5xx::trainer
