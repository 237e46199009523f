// Validating a train configuration without running it: every check that
// needs no model parameters and no data (t5x's train() raises the same
// conditions, at start-up or later). `t5xx config` promises to validate
// without running, so any check that needs no training lives here, and
// `t5xx train` runs it first.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/run/restore.h"
#include "t5xx/run/train_config.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/trainer/train_loop.h"

namespace t5xx::run {

// What a validated train configuration runs: the loop's settings (without
// the operative config, FLOPs and peak, which train measures) and the
// train-eval datasets (TrainingEvalDatasetConfigs).
struct ValidatedTrainRun {
  seqio::OutputFeatures output_features;  // of the train task or mixture
  trainer::TrainLoopConfig loop;
  std::vector<DatasetConfig> eval_datasets;
  // Set when the memory plan (MemoryProblemBeforeAllocation) does not fit
  // this machine: train refuses the run with it; config, which validates the
  // configuration and not the machine it may later run on, prints it as a
  // note.
  std::optional<std::string> memory_problem;
  // The checkpoint the run starts from (PlanRestore), and its notes.
  std::optional<RestorePlan> restore;
  std::vector<std::string> restore_notes;
};

// t5x's utils.verify_matching_vocabs: the task's output vocabulary is the
// model's (a relative model path is under data_dir) and vocab_size covers
// the task's ids. Throws t5xx::Error naming the gin keys to change.
void CheckVocabularies(const ModelConfig& model, const std::string& task_name,
                       const seqio::OutputFeatures& output_features, const std::string& data_dir);

// Runs every check of a train configuration that needs no model parameters
// and no data and throws one t5xx::Error naming every failure ("N errors in
// the train configuration:", one line each; a check that needs an earlier
// one, e.g. a task's vocabulary needs the task, is skipped when it failed):
// CheckModelDir; the train and train-eval tasks or mixtures exist and
// CheckDataset passes; CheckVocabularies; the loop settings
// (trainer::CheckTrainLoopConfig: periods, actions); and the memory plan,
// whose verdict goes to memory_problem, not to the error. Batch and
// microbatch divisibility are checked by ReadTrainSetup.
ValidatedTrainRun ValidateTrainRun(const LoadedTrainConfig& loaded);

// The checks `t5xx infer` (`t5xx eval`) runs before it reads a checkpoint,
// and `t5xx config` runs for an infer (eval) configuration; nothing is
// written. One process and num_partitions = 1; the task or mixture exists;
// infer: the mode, and the dataset (CheckDataset: split, files, lengths);
// eval: the caches use_cached reads; the checkpoints to restore exist.
// Every failure in one t5xx::Error ("N errors in the infer
// configuration:"). Returns the checkpoint directories to restore.
std::vector<std::string> ValidateInferRun(const LoadedTrainConfig& loaded);
std::vector<std::string> ValidateEvalRun(const LoadedTrainConfig& loaded);

}  // namespace t5xx::run
