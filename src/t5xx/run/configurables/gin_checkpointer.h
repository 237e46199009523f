// The checkpointer classes of t5x's Save/RestoreCheckpointConfig and what
// decides which checkpoints stay (gin_checkpointer.cc):
// t5x.checkpoints.Checkpointer (force_keep_period), SaveBestCheckpointer,
// OrbaxCheckpointManagerInterface (train.use_orbax = True; its metric
// arguments give Orbax's CheckpointManager rules) and prompt-tuning's
// prompt_utils.Checkpointer (gin_prompt.h).
#pragma once

#include <string>

#include "t5xx/config/config.h"
#include "t5xx/config/registry.h"
#include "t5xx/run/train_config.h"

namespace t5xx::run {

// Registers t5x.checkpoints.{Checkpointer, SaveBestCheckpointer,
// OrbaxCheckpointManagerInterface} with t5x's parameters and defaults
// (called by RegisterTrainConfigurables).
void RegisterCheckpointerConfigurables(gin::Registry& registry);

// The checkpointer_cls / checkpoint_manager_cls of `configurable` (a
// Save/RestoreCheckpointConfig, called in `scope`): only t5x's legacy
// Checkpointer and OrbaxCheckpointManagerInterface; returns the
// checkpointer's scope. Throws t5xx::Error naming the binding otherwise.
std::string ReadCheckpointerCls(gin::Config& config, const char* configurable,
                                const std::string& scope);

// utils.SaveCheckpointConfig (scope `ss`): s.force_keep_period,
// s.save_best (SaveBestCheckpointer's settings, or with use_orbax
// OrbaxCheckpointManagerInterface's metric arguments under Orbax's rules)
// and s.numpy_save_paths (prompt_utils.Checkpointer). Throws t5xx::Error
// naming the binding for a bad metric_mode or metric name, and for
// SaveBestCheckpointer with use_orbax (t5x then ignores its settings).
void ReadSaveCheckpointerCls(gin::Config& config, const std::string& ss, bool use_orbax,
                             TrainSetup& s);

}  // namespace t5xx::run
