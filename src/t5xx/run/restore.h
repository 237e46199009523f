// Where a train run starts, in t5x's order (t5x/train.py, utils.py
// TrainStateInitializer / get_first_valid_restore_config_and_paths): the
// latest finished checkpoint in MODEL_DIR (resuming a preempted run, with
// its data position), else utils.CheckpointConfig.restore (e.g. finetuning
// from INITIAL_CHECKPOINT_PATH), else from scratch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/run/train_config.h"
#include "t5xx/trainer/checkpoint_restore.h"

namespace t5xx::run {

struct RestorePlan {
  std::string checkpoint_dir;
  int64_t step = 0;
  bool resuming = false;  // MODEL_DIR's own checkpoint
  trainer::RestoreOptions options;
  // Restore the train data position when the checkpoint has one (resuming)
  // or as utils.RestoreCheckpointConfig.restore_dataset asks.
  bool restore_dataset = false;
  bool require_dataset = false;  // restore_dataset = True: it must exist
  std::string description;       // for the log
};

// The checkpoint a run starts from, or nullopt for a fresh start; reads
// only the checkpoint's index. `notes` gets what the log should say (a
// 'latest' path without checkpoints, as t5x logs "No checkpoints found").
// Throws t5xx::Error naming the gin binding when a 'specific' path is not
// a checkpoint, or the index cannot be read.
std::optional<RestorePlan> PlanRestore(const TrainSetup& s, std::vector<std::string>* notes);

// t5x's get_first_valid_restore_config_and_paths: with mode 'latest' or
// 'all' every path must be an existing directory (one without checkpoints
// is skipped, as in t5x); throws t5xx::Error naming the binding and the path
// otherwise. Used by train (PlanRestore), infer and eval.
void CheckRestoreDirectories(const RestoreCheckpointConfig& r);

}  // namespace t5xx::run
