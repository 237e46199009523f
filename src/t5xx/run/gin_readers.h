// t5x's configurables, by area, each declared (Register*) beside the code
// that reads it from a finalized gin::Config (Read*): the model and its
// network (gin_model.cc), the optimizer and learning-rate schedule
// (gin_optimizer.cc), utils.DatasetConfig (gin_dataset.cc), and train() with
// its trainer, partitioner, checkpoint config and actions (gin_train.cc).
// Every Read* queries each value the run uses (so the operative config lists
// it) and throws t5xx::Error naming the binding's file:line for a reference
// to the wrong configurable, a value out of range, or an option t5xx cannot
// honour yet (with what to set instead).
#pragma once

#include <string>

#include "t5xx/config/config.h"
#include "t5xx/config/registry.h"
#include "t5xx/run/train_config.h"

namespace t5xx::run {

// t5x.models.{EncoderDecoderModel, DecoderOnlyModel} and their networks'
// Transformer/T5Config and DecoderWrapper/TransformerConfig.
void RegisterModelConfigurables(gin::Registry& registry);
// Reads train.model (MODEL). `model_name`/`model_scope` receive the model's
// configurable and scope (the optimizer is read from them).
ModelConfig ReadModel(gin::Config& config, std::string* model_name, std::string* model_scope);

// t5x.adafactor.*, t5x.optimizers.{adamw, chain}, optax.{adamw,
// clip_by_global_norm, clip} and utils.create_learning_rate_scheduler.
void RegisterOptimizerConfigurables(gin::Registry& registry);
// Reads MODEL's optimizer_def.
optim::OptimizerConfig ReadOptimizer(gin::Config& config, const std::string& model_name,
                                     const std::string& model_scope);
// Reads utils.create_learning_rate_scheduler in `scope`.
optim::LearningRateSchedulerConfig ReadLearningRateScheduler(gin::Config& config,
                                                             const std::string& scope);
extern const char kLearningRateScheduler[];  // "t5x.utils.create_learning_rate_scheduler"

// t5x.utils.DatasetConfig.
void RegisterDatasetConfigurables(gin::Registry& registry);
DatasetConfig ReadDatasetConfig(gin::Config& config, const std::string& scope);
extern const char kDatasetConfig[];  // "t5x.utils.DatasetConfig"

// __main__.train, t5x.trainer.{Trainer, EarlyStoppingAction,
// TerminateOnNanAction}, t5x.partitioning.*, t5x.utils.{CheckpointConfig,
// SaveCheckpointConfig}, t5x.gin_utils.summarize_gin_config.
void RegisterTrainConfigurables(gin::Registry& registry);

}  // namespace t5xx::run
