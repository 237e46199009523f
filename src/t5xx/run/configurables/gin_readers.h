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

// The configurable t5x's run files give as summarize_config_fn.
inline constexpr char kSummarizeGinConfig[] = "t5x.gin_utils.summarize_gin_config";

// t5x.models.{EncoderDecoderModel, DecoderOnlyModel} and their networks'
// Transformer/T5Config and DecoderWrapper/TransformerConfig.
void RegisterModelConfigurables(gin::Registry& registry);
// Reads <root>.model (MODEL; root "__main__.train", "__main__.infer" or
// "__main__.evaluate"). `model_name`/`model_scope` receive the model's
// configurable and scope (the optimizer is read from them).
ModelConfig ReadModel(gin::Config& config, const std::string& root, std::string* model_name,
                      std::string* model_scope);
// The same for a model value already read (e.g. the macro MODEL, which
// `t5xx export` reads from a model gin file alone).
ModelConfig ReadModelValue(gin::Config& config, const gin::Value& model, std::string* model_name,
                           std::string* model_scope);

// t5x.decoding.{temperature_sample, beam_search} and models.DecoderParams
// (gin_decoding.cc).
void RegisterDecodingConfigurables(gin::Registry& registry);
// Reads the model's decode_fn and default_decoder_params into `m`.
void ReadDecodeFn(gin::Config& config, const std::string& model_name,
                  const std::string& model_scope, ModelConfig& m);
extern const char kDefaultEncoderDecoderDecodeFn[];  // "t5x.decoding.beam_search"
extern const char kDefaultDecoderOnlyDecodeFn[];     // "t5x.decoding.temperature_sample"

// t5x.adafactor.*, t5x.optimizers.<name> and .chain, optax's optimizers,
// transformations and schedules (gin_optax.h) and
// utils.create_learning_rate_scheduler.
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
// allow_none_lengths: task_feature_lengths = None is accepted (eval and
// infer_eval: the evaluator measures the longest examples); otherwise a
// dict is required.
DatasetConfig ReadDatasetConfig(gin::Config& config, const std::string& scope,
                                bool allow_none_lengths = false);
extern const char kDatasetConfig[];  // "t5x.utils.DatasetConfig"

// __main__.train, t5x.trainer.{Trainer, EarlyStoppingAction,
// TerminateOnNanAction}, t5x.partitioning.*, t5x.utils.{CheckpointConfig,
// SaveCheckpointConfig}, t5x.gin_utils.summarize_gin_config.
void RegisterTrainConfigurables(gin::Registry& registry);

// <root>.partitioner (partitioning.PjitPartitioner): num_partitions, the
// logical axis rules and (when asked) reshard_after_forward.
void ReadPartitioner(gin::Config& config, const std::string& root, int64_t* num_partitions,
                     partitioning::LogicalAxisRules* rules,
                     bool* reshard_after_forward = nullptr);
// utils.RestoreCheckpointConfig in scope `scope`; mode 'all' is accepted
// only when allow_all (eval); an empty list as `path` (no paths returned)
// only when allow_no_path (train, where t5x then restores nothing).
RestoreCheckpointConfig ReadRestoreConfig(gin::Config& config, const std::string& scope,
                                          bool allow_all, bool allow_no_path = false);
extern const char kRestoreConfig[];  // "t5x.utils.RestoreCheckpointConfig"

// __main__.infer, __main__.evaluate, seqio.Evaluator and its loggers
// (gin_infer_eval.cc).
void RegisterInferEvalConfigurables(gin::Registry& registry);
// seqio.Evaluator as <root>.inference_evaluator_cls references it.
EvaluatorConfig ReadEvaluatorConfig(gin::Config& config, const gin::Value& evaluator_cls);
InferSetup ReadInferSetup(gin::Config& config);
EvalSetup ReadEvalSetup(gin::Config& config);

}  // namespace t5xx::run
