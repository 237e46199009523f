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

#include "t5xx/decoding/decoding.h"
#include "t5xx/models/networks/decoder_only_network.h"
#include "t5xx/models/losses.h"
#include "t5xx/models/networks/t5_config.h"
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
  // t5x DatasetConfig.use_cached (USE_CACHED_TASKS): read each task's
  // offline cache (`t5xx cache_tasks`, found in the --cache_dir /
  // --seqio_additional_cache_dirs directories) instead of its pre-cache steps.
  bool use_cached = false;
  // task_feature_lengths = None (t5x's eval.gin and infer_eval configs): the
  // evaluator uses each feature's longest example (seqio.Evaluator).
  bool lengths_from_data = false;
};

// The model's vocabulary as bound: seqio.SentencePieceVocabulary or (ByT5's)
// seqio.ByteVocabulary (used for decoding; training checks it against the
// task's).
struct VocabularyConfig {
  bool byte = false;                     // seqio.ByteVocabulary
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
  // decode_fn with its gin arguments (EncoderDecoderModel's default
  // decoding.beam_search, DecoderOnlyModel's decoding.temperature_sample),
  // and default_decoder_params (models.DecoderParams: num_decodes,
  // return_all_decodes), as predict_batch_with_aux takes them.
  decoding::DecodeFnConfig decode_fn;
  int64_t num_decodes = 1;
  bool return_all_decodes = false;
  // scalable_t5 with scan_layers = True: t5x's scanned checkpoint layout
  // (checkpoints/t5x/scanned_layers.h) for saves and restores; else nullopt.
  std::optional<checkpoints::ScanLayout> scan_layout() const {
    if (kind != ModelKind::kEncoderDecoder || !t5_config.scan_layers) return std::nullopt;
    return checkpoints::ScanLayout{t5_config.num_heads, t5_config.param_scan_axis};
  }
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

// seqio.Evaluator's options and loggers (t5x's runs/eval.gin and
// finetune.gin bind them).
struct EvaluatorConfig {
  std::optional<int64_t> num_examples;  // None: every example of the split
  bool json_logger = true;              // seqio.JSONLogger in logger_cls
  bool tensorboard_logger = true;       // seqio.TensorBoardLogger
  bool console_logger = true;           // seqio.PyLoggingLogger
  std::optional<int64_t> json_write_n_results;  // JSONLogger.write_n_results
};

struct TrainSetup {
  std::string model_dir;
  ModelConfig model;
  optim::OptimizerConfig optimizer;  // MakeOptimizer builds it
  optim::LearningRateSchedulerConfig lr;
  std::optional<int64_t> num_microbatches;
  int64_t num_partitions = 1;
  partitioning::LogicalAxisRules logical_axis_rules;
  // partitioning.PjitPartitioner.reshard_after_forward (t5xx only, FSDP's
  // name): free a ZeRO-3 weight gathered for the forward pass and gather it
  // again for the backward pass (true), or keep it until then (false:
  // one all-gather less per weight, every layer's whole weights held).
  bool reshard_after_forward = true;
  DatasetConfig train_dataset;
  // train.data_order (t5xx only): false ('per_shard', seqio's and t5x's):
  // each data replica reads its own seqio shard of the data, and the data
  // position carries over only to a run with the same data-axis size. true
  // ('global'): every replica reads the one-shard stream batched by the
  // global batch and keeps its rows, so the global batches, and the saved
  // position, are the same for every data-axis size (run/datasets.h).
  bool global_data_order = false;
  std::optional<DatasetConfig> train_eval_dataset;
  // train.infer_eval_dataset_cfg: seqio.Evaluator's dataset (decoding and
  // the tasks' metric_fns) every eval_period, and its options.
  std::optional<DatasetConfig> infer_eval_dataset;
  EvaluatorConfig evaluator;
  // utils.CheckpointConfig.save: set (save_checkpoints) or None; its period
  // and keep.
  bool save_checkpoints = true;
  std::optional<int64_t> checkpoint_period;
  std::optional<int64_t> checkpoint_keep;
  std::optional<int64_t> keep_dataset_checkpoints;
  std::vector<int64_t> checkpoint_steps;
  std::optional<int64_t> force_keep_period;  // checkpoints.Checkpointer
  // utils.SaveCheckpointConfig.checkpointer_cls = @checkpoints.SaveBestCheckpointer
  std::optional<checkpoints::SaveBestConfig> save_best;
  // checkpointer_cls = @prompt_utils.Checkpointer: the save_paths regexes of
  // the parameters also saved as numpy files with each checkpoint
  // (checkpoints/npy.h SaveNumpyCheckpoint); empty: none.
  std::vector<std::string> numpy_save_paths;
  trainer::SaveDType save_dtype = trainer::SaveDType::kFloat32;
  // train.use_orbax: write Orbax's layout (OCDBT + zarr) instead of t5x's
  // legacy one. Reading takes either, whatever this says.
  bool use_orbax = false;
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
  std::vector<trainer::ActionConfig> infer_eval_actions;
  int64_t random_seed = 0;
};

// What `t5xx infer` runs (t5x/infer.py's infer()).
struct InferSetup {
  std::string mode;  // 'predict', 'score' or 'predict_with_aux'
  // infer.fallback_init_rng: the seed of the parameters the checkpoint
  // lacks (then restore.options.fallback_to_scratch); unset: 0, all needed.
  std::optional<int64_t> fallback_init_rng;
  ModelConfig model;
  std::string output_dir;
  DatasetConfig dataset;
  RestoreCheckpointConfig restore;
  // partitioning.PjitPartitioner's: the 'model' axis of the processes'
  // mesh, and the rules (their parameter placements on 'data' dropped:
  // inference/replicas.h).
  int64_t num_partitions = 1;
  partitioning::LogicalAxisRules logical_axis_rules;
  int64_t checkpoint_period = 100;  // batches per chunk
  int64_t shard_id = 0;
  int64_t num_shards = 1;
  bool merge_chunked_results = true;
  bool output_ids = false;  // write_inferences_to_file's output_ids
  std::string file_extension = "jsonl";
};

// What `t5xx eval` runs (t5x/eval.py's evaluate()).
struct EvalSetup {
  ModelConfig model;
  std::optional<int64_t> fallback_init_rng;  // as InferSetup's
  DatasetConfig dataset;
  RestoreCheckpointConfig restore;  // mode 'specific', 'latest' or 'all'
  int64_t num_partitions = 1;  // and the rules, as InferSetup's
  partitioning::LogicalAxisRules logical_axis_rules;
  std::string output_dir;
  EvaluatorConfig evaluator;
};

}  // namespace t5xx::run
