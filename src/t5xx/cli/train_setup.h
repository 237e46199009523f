// Reads everything `t5xx train` needs from a finalized gin Config, the way
// t5x's train() receives it: MODEL = @models.EncoderDecoderModel() with its
// network.Transformer/T5Config, or @models.DecoderOnlyModel() with the
// decoder-only network.DecoderWrapper/TransformerConfig, the optimizer (adafactor.Adafactor,
// optimizers.adamw or optimizers.chain of optax transformations), the train/ and
// train_eval/ utils.DatasetConfig, utils.CheckpointConfig, PjitPartitioner,
// trainer.Trainer and utils.create_learning_rate_scheduler.
//
// Every value the run uses is queried here (so the operative config lists
// it); a bound value t5xx cannot honour yet is a t5xx::Error naming the
// binding and what to set instead.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "t5xx/config/config.h"
#include "t5xx/config/registry.h"
#include "t5xx/models/decoder_only_network.h"
#include "t5xx/models/losses.h"
#include "t5xx/models/t5_config.h"
#include "t5xx/optim/make_optimizer.h"
#include "t5xx/optim/lr_schedule.h"
#include "t5xx/partitioning/logical_axis_rules.h"
#include "t5xx/trainer/train_loop.h"

namespace t5xx::cli {

// t5x.utils.DatasetConfig.
struct DatasetConfig {
  std::string mixture_or_task_name;
  std::map<std::string, int64_t> task_feature_lengths;
  std::string split;
  int64_t batch_size = 0;
  bool shuffle = false;
  std::optional<int64_t> seed;
  bool pack = false;
  bool trim_output_features = true;
};

// seqio.SentencePieceVocabulary as bound for the model (used for decoding;
// training checks it against the embedding when the file is available).
struct VocabularyConfig {
  std::string sentencepiece_model_file;  // as bound; relative = under data_dir
  int64_t extra_ids = 0;
};

// Which t5x model class MODEL builds.
enum class ModelKind { kEncoderDecoder, kDecoderOnly };

struct TrainSetup {
  std::string model_dir;
  ModelKind model_kind = ModelKind::kEncoderDecoder;
  models::T5Config t5_config;                    // kEncoderDecoder
  models::DecoderOnlyConfig decoder_only_config;  // kDecoderOnly
  bool inputs_bidirectional_attention = false;    // kDecoderOnly
  double z_loss = 0;
  double label_smoothing = 0;
  models::LossNormalizingFactor loss_normalizing_factor;
  VocabularyConfig output_vocabulary;
  optim::OptimizerConfig optimizer;  // MakeOptimizer builds it
  optim::LearningRateSchedulerConfig lr;
  std::optional<int64_t> num_microbatches;
  int64_t num_partitions = 1;
  partitioning::LogicalAxisRules logical_axis_rules;
  DatasetConfig train_dataset;
  std::optional<DatasetConfig> train_eval_dataset;
  // utils.CheckpointConfig.save: set (save_checkpoints) or None; its period
  // and keep.
  bool save_checkpoints = true;
  std::optional<int64_t> checkpoint_period;
  std::optional<int64_t> checkpoint_keep;
  int64_t total_steps = 0;
  std::optional<int64_t> relative_steps;
  int64_t eval_steps = 10;
  std::optional<int64_t> eval_period;
  std::optional<int64_t> stats_period;  // None: once per t5x "epoch"
  bool run_eval_before_training = false;
  // train.actions['TRAIN'] and ['TRAIN_EVAL'].
  std::vector<trainer::ActionConfig> train_actions;
  std::vector<trainer::ActionConfig> train_eval_actions;
  int64_t random_seed = 0;
};

// Throws t5xx::Error for a reference to the wrong configurable, a value of
// the wrong type, or an option that is not implemented yet.
TrainSetup ReadTrainSetup(gin::Config& config);

// A parsed, finalized and fully read train configuration.
struct LoadedTrainConfig {
  std::unique_ptr<gin::Registry> registry;
  std::unique_ptr<gin::Config> config;  // points into *registry
  TrainSetup setup;
  std::map<std::string, std::string> flags;  // the command's own flags
  // Why the demo task is not registered (its corpus is missing), else empty.
  std::optional<std::string> demo_problem;
};

// What `t5xx train` and `t5xx config` share: requires at least one
// --gin_file, consumes the gin flags (gin::ParseGinFlags), parses the
// command's own `known_flags` (ParseFlags), finalizes, reads the train setup
// and refuses bindings (and command-line macros) that nothing read.
// Throws t5xx::Error.
LoadedTrainConfig LoadTrainConfig(const std::vector<std::string>& args,
                                  const std::string& command,
                                  const std::vector<std::string>& known_flags);

}  // namespace t5xx::cli
