// Restoring a train state from a t5x legacy checkpoint (t5x/checkpoints.py
// Checkpointer.restore with t5x/utils.py RestoreCheckpointConfig's options
// and t5x/state_utils.py apply_assignment_map): parameters, optimizer slots,
// step, and the data pipeline state t5xx stores beside them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "t5xx/checkpoints/t5x/scanned_layers.h"
#include "t5xx/checkpoints/zarr_array.h"
#include "t5xx/models/param_store.h"
#include "t5xx/optim/optimizer.h"
#include "t5xx/partitioning/base_partitioner.h"

namespace t5xx::trainer {

// utils.RestoreCheckpointConfig's restore options.
struct RestoreOptions {
  // (regex over the model's t5x key, replacement naming the checkpoint key
  // or nullopt to skip the key), keys '/'-joined as t5x's
  // flatten_state_dict makes them: "target/encoder/layers_0/mlp/wi/kernel",
  // "state/param_states/...". The first fully matching pattern wins; keys no
  // pattern matches are looked up under their own name; every pattern must
  // match some key (t5x's require_all_rules_match). Skipped keys keep their
  // freshly initialised values and are listed in RestoreReport::notes.
  std::vector<std::pair<std::string, std::optional<std::string>>> assignment_map;
  // t5x: "Whether to restore all optimizer parameters from the checkpoint".
  // false: optimizer slots the checkpoint lacks (e.g. an AdamW checkpoint
  // restored into Adafactor) start from scratch, and checkpoint arrays the
  // model has no use for are ignored; both are listed in notes.
  bool strict = true;
  // Parameters missing from the checkpoint (after assignment_map) keep their
  // fresh initialisation instead of failing (t5x's fallback_to_scratch).
  bool fallback_to_scratch = false;
  // "float32" or "bfloat16": round restored parameters to that precision
  // (t5xx keeps float32 storage); nullopt = as saved.
  std::optional<std::string> dtype;
  // The part of each array this process owns, given its t5x key and its
  // global shape in the checkpoint: the live tensor then has the box's
  // shape and only the chunks that intersect the box are read. Unset: the
  // whole array. OwnedSlices(layout) makes it from a process's layout.
  std::function<checkpoints::Box(const std::string& key, const std::vector<int64_t>& shape)>
      owned_slice;
  // scalable_t5's scan_layers = True: the checkpoint holds t5x's scanned
  // layout (checkpoints/t5x/scanned_layers.h), which is read and split into the
  // per-layer parameters and slots. Keys (assignment_map, errors) are then
  // t5x's scanned ones ("target/encoder/encoder/..."). One process only
  // (owned_slice unset).
  std::optional<checkpoints::ScanLayout> scan;
};

struct RestoreReport {
  std::string checkpoint_dir;
  int64_t step = 0;  // state.step of the checkpoint
  // What was not restored as is, one line each (keys started from scratch,
  // checkpoint keys ignored, dtype casts).
  std::vector<std::string> notes;
  // The data pipeline state of this process (train_ds-<i>-of-<n>.json),
  // when the checkpoint holds one.
  std::optional<std::string> dataset_state;
  double bytes_read = 0;
  // The parameters (ParamStore names) the checkpoint did not fill, which
  // keep the values they came with (fallback_to_scratch, assignment_map
  // None); not computed (nullopt) with options.scan.
  std::optional<std::vector<std::string>> unrestored_params;
};

// The owned_slice of a process on the layout `layout` (every parameter and
// optimizer state array with its global shape and this process's box:
// Trainer::DescribeVariables(), or before the Trainer exists the
// partitioner's DescribeVariables(params, SlotShapes(optimizer))): each key
// reads the box its variable has in the layout, so a checkpoint saved on
// any mesh or process count restores onto this one (zarr arrays read only
// the chunks that meet the box; inline arrays, e.g. Adafactor's v_row and
// v_col, are sliced from the whole). A checkpoint array of another global
// shape gets the same share of its own shape (so the restore reports the
// shape difference); keys the layout lacks are read whole.
std::function<checkpoints::Box(const std::string& key, const std::vector<int64_t>& shape)>
OwnedSlices(const std::vector<partitioning::VariableInfo>& layout);

// The optimizer's state arrays as DescribeVariables takes them: local
// shapes, item sizes, and the parameter dims each keeps
// (optim::StateArray::param_dims).
std::vector<partitioning::SlotShape> SlotShapes(const optim::Optimizer& optimizer);

// Whether the optimizer's step comes from the checkpoint: false when the
// first assignment_map rule that fully matches t5x's key "state/step" maps
// it to None (e.g. [(r'state/.*', None)], t5x's way of finetuning with a
// fresh optimizer), so training starts at step 0. Throws t5xx::Error for an
// invalid regex.
bool RestoresStep(const RestoreOptions& options);

// Restores `params` and, when non-null, `optimizer` (already Init-ed for
// `params`) from checkpoint_dir, as t5x does. Every key of the model's
// state (target/<param>, state/<slot>) must be found in the checkpoint with
// the same shape, after assignment_map, unless the options allow otherwise;
// every mismatch (missing key, extra key, different shape) is collected and
// thrown as one t5xx::Error listing each key with its shapes and the
// setting that would accept it. Chunks are checked against the checkpoint's
// checksums sidecar when present. Dtypes are cast to the live tensors'.
// `process_index`/`process_count` name the dataset state file to read.
RestoreReport RestoreTrainState(const std::string& checkpoint_dir, models::ParamStore& params,
                                optim::Optimizer* optimizer, const RestoreOptions& options,
                                int process_index = 0, int process_count = 1);

}  // namespace t5xx::trainer
