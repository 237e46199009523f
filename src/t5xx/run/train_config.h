// What `t5xx train` runs, as read from a finalized gin config: the values of
// t5x's train() arguments and of the configurables they reference
// (gin_train.cc reads them; gin is the source of truth for every default, so
// these structs hold what was read, and their own initial values are only
// placeholders). Shared by train, config, and (later) infer and eval.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/models/decoder_only_network.h"
#include "t5xx/models/losses.h"
#include "t5xx/models/t5_config.h"
#include "t5xx/optim/lr_schedule.h"
#include "t5xx/optim/make_optimizer.h"
#include "t5xx/partitioning/logical_axis_rules.h"
#include "t5xx/trainer/checkpoint_restore.h"
#include "t5xx/trainer/train_loop.h"

namespace t5xx::run {

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
// training checks it against the task's).
struct VocabularyConfig {
  std::string sentencepiece_model_file;  // as bound; relative = under data_dir
  int64_t extra_ids = 0;
};

// Which t5x model class MODEL builds.
enum class ModelKind { kEncoderDecoder, kDecoderOnly };

// MODEL: t5x.models.EncoderDecoderModel (network.Transformer/T5Config) or
// DecoderOnlyModel (decoder_only network.DecoderWrapper/TransformerConfig),
// with its loss options and output vocabulary.
struct ModelConfig {
  ModelKind kind = ModelKind::kEncoderDecoder;
  models::T5Config t5_config;                    // kEncoderDecoder
  models::DecoderOnlyConfig decoder_only_config;  // kDecoderOnly
  bool inputs_bidirectional_attention = false;    // kDecoderOnly
  double z_loss = 0;
  double label_smoothing = 0;
  models::LossNormalizingFactor loss_normalizing_factor;
  VocabularyConfig output_vocabulary;
  int64_t vocab_size() const {
    return kind == ModelKind::kEncoderDecoder ? t5_config.vocab_size
                                              : decoder_only_config.vocab_size;
  }
  // "network.T5Config.vocab_size" or "network.TransformerConfig.vocab_size".
  std::string vocab_size_key() const {
    return kind == ModelKind::kEncoderDecoder ? "network.T5Config.vocab_size"
                                              : "network.TransformerConfig.vocab_size";
  }
};

// t5x.utils.RestoreCheckpointConfig: where to start from when MODEL_DIR
// holds no checkpoint of its own (t5x's runs/finetune.gin pattern).
struct RestoreCheckpointConfig {
  std::vector<std::string> paths;  // path: a str or a list of them
  std::string mode = "latest";     // 'specific' or 'latest' ('all' is eval's)
  bool restore_dataset = false;    // the data position too (must exist)
  trainer::RestoreOptions options;  // assignment_map, strict, fallback, dtype
  std::string where;               // the gin location, for messages
};

struct TrainSetup {
  std::string model_dir;
  ModelConfig model;
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
  std::optional<int64_t> keep_dataset_checkpoints;
  std::vector<int64_t> checkpoint_steps;
  std::optional<int64_t> force_keep_period;  // checkpoints.Checkpointer
  trainer::SaveDType save_dtype = trainer::SaveDType::kFloat32;
  // utils.CheckpointConfig.restore (None: start from scratch unless
  // MODEL_DIR holds a checkpoint to resume from).
  std::optional<RestoreCheckpointConfig> restore;
  int64_t total_steps = 0;
  std::optional<int64_t> relative_steps;
  int64_t eval_steps = 0;
  std::optional<int64_t> eval_period;
  std::optional<int64_t> stats_period;  // None: once per t5x "epoch"
  bool run_eval_before_training = false;
  // train.actions['TRAIN'] and ['TRAIN_EVAL'].
  std::vector<trainer::ActionConfig> train_actions;
  std::vector<trainer::ActionConfig> train_eval_actions;
  int64_t random_seed = 0;
};

}  // namespace t5xx::run
