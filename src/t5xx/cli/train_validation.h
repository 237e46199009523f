// The checks `t5xx train` and `t5xx config` share: everything about a train
// configuration that can be known without building the model or reading
// data (t5x's train() raises the same conditions, at start-up or later).
// `config` promises to validate without running, so any check that needs
// no training lives here and both commands call it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/cli/train_setup.h"
#include "t5xx/data/feature_converters.h"
#include "t5xx/data/preprocessors.h"
#include "t5xx/data/utils.h"
#include "t5xx/models/memory_plan.h"
#include "t5xx/trainer/train_loop.h"

namespace t5xx::cli {

// The model's feature converter, as t5x's models choose it
// (FEATURE_CONVERTER_CLS): EncDecFeatureConverter for EncoderDecoderModel;
// for DecoderOnlyModel seqio's DecoderFeatureConverter, i.e. the prefix-LM
// converter when the task has 'inputs' lengths, else the LM converter.
std::shared_ptr<seqio::FeatureConverter> MakeConverter(ModelKind kind, const DatasetConfig& d);

// Model-feature lengths of a batch (for FLOPs and the memory plan):
// encoder_input_tokens/decoder_target_tokens, or decoder_target_tokens =
// inputs + targets for the decoder-only converters.
std::map<std::string, int64_t> ModelFeatureLengths(ModelKind kind, const DatasetConfig& d);

// models::MemoryPlan for the configured model, optimizer, per-process batch
// (divided by num_microbatches: one microbatch's activations are alive at a
// time) and lengths; `param_shapes` empty: parameters, gradients and
// optimizer state count 0 (see ValidateTrainRun for the estimate used then).
models::MemoryPlan PlanMemory(const TrainSetup& s,
                              const std::vector<std::vector<int64_t>>& param_shapes);

// Throws t5xx::Error (with what to lower) unless plan.total() - allocated
// fits in `available` bytes (< 0: unknown, no check).
void CheckMemoryPlan(const models::MemoryPlan& plan, int64_t available, int64_t allocated);

// "the train dataset (train/utils.DatasetConfig: task 'x', split 'y')".
std::string Describe(const DatasetConfig& d, const std::string& scope);

// What a validated train configuration runs: the loop's settings (without
// the operative config, FLOPs and peak, which train measures) and the
// train-eval datasets (t5x's utils.get_training_eval_datasets: for a mixture
// each of its tasks that has the split, then the mixture; for a task, the
// task).
struct ValidatedTrainRun {
  seqio::OutputFeatures output_features;  // of the train task or mixture
  trainer::TrainLoopConfig loop;
  std::vector<DatasetConfig> eval_datasets;
  // Set when the memory plan (see ValidateTrainRun) does not fit this
  // machine: train refuses the run with it; config, which validates the
  // configuration and not the machine it may later run on, prints it as a
  // note.
  std::optional<std::string> memory_problem;
};

// Runs every check of a train configuration that needs no model and no
// data and throws one t5xx::Error naming every failure ("N errors in the
// train configuration:", one line each; a check that needs an earlier one,
// e.g. a task's vocabulary needs the task, is skipped when it failed):
//  * MODEL_DIR is not a file and holds no checkpoint (an empty one, or one
//    with unrelated files, is fine, as in t5x);
//  * the train and train-eval tasks or mixtures exist (the demo tasks'
//    missing corpus is named) and have the split, whose file patterns
//    match regular files (listed, not read);
//  * the model's vocabulary is the task's and its vocab_size covers the
//    task's ids (t5x's utils.verify_matching_vocabs);
//  * the task feature lengths have exactly the keys the model's converter
//    needs, each >= 1;
//  * the loop settings (trainer::CheckTrainLoopConfig: periods, actions);
//  * the memory plan, before any parameter is allocated: activations plus
//    parameters and gradients estimated from the network config (half the
//    forward matmul FLOPs of one token, models/flops.h: every weight that
//    a token's forward pass multiplies), so that an impossible size never
//    reaches the allocator; the verdict goes to memory_problem, not to the
//    error.
// Batch and microbatch divisibility are checked by ReadTrainSetup.
ValidatedTrainRun ValidateTrainRun(const LoadedTrainConfig& loaded, const std::string& data_dir);

}  // namespace t5xx::cli
