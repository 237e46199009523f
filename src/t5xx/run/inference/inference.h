// Running a model's inference on task examples -- what t5x's infer(),
// evaluate() and train()'s inference evaluation share (t5x/utils.py
// get_infer_fn; the model's predict_batch / predict_batch_with_aux /
// score_batch): a model with parameters restored from a checkpoint, task
// examples converted by the model's feature converter (no packing), run in
// batches of the dataset's batch size (the last one padded with empty rows,
// whose outputs are dropped), one output per example in order.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/example.h"
#include "t5xx/data/pipeline/utils.h"
#include "t5xx/data/vocabularies/vocabulary.h"
#include "t5xx/models/base_model.h"
#include "t5xx/models/networks/int8_weights.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/run/inference/replicas.h"
#include "t5xx/run/train_config.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/trainer/checkpoint_restore.h"

namespace t5xx::run {

// t5x's infer modes.
enum class InferMode { kPredict, kScore, kPredictWithAux };
// 'predict', 'score', 'predict_with_aux' -> the mode (t5xx::Error otherwise).
InferMode ParseInferMode(const std::string& mode);

// One example's output.
struct ExampleInference {
  // predict / predict_with_aux: the best decode [decode length] (int32, 0
  // after EOS), or with return_all_decodes every decode, ascending by score
  // (best last), in all_decodes.
  std::vector<int32_t> tokens;
  std::vector<std::vector<int32_t>> all_decodes;
  // predict_with_aux: the decode's score (log-probability; beam search's
  // with the brevity penalty), or each decode's with return_all_decodes.
  // score: one value, the sum of the targets' token log-likelihoods.
  std::vector<double> scores;
};

// The model of `config` (CreateModel, with its decode_fn, decoder params and
// the output vocabulary's EOS id `eos_id`) and its parameters from
// checkpoint_dir: parameters only (t5x restores them with strict=False,
// dropping the optimizer state), rounded to options.dtype when set.
// Writes one "[restore] ..." line to `log`. Throws t5xx::Error naming the
// checkpoint and the parameters that do not match the model.
struct InferenceModel {
  std::unique_ptr<models::BaseTransformerModel> model;
  models::ParamStore params;
  int64_t step = 0;  // the checkpoint's step
  std::string checkpoint_dir;
};
// The parameters live on `device` (run/device_setup.h), restored there.
// With a `partitioner` of several processes, each process makes and reads
// only its pieces of the parameters (its boxes on that mesh, whatever mesh
// wrote the checkpoint) and computes through the partitioner's hooks.
// decode_batch_size: the rows of the batches the run decodes, 0 when it
// also scores or does not decode (infer.mode 'score', a task with
// score_metric_fns): when batch x config.num_decodes is at most
// kSkinnyMatmulMaxRows, an encoder-decoder model's decode-step kernels are
// stored transposed on the CPU (models::DecodeStepKernel), which only the
// few-row products read (the same bits in either layout).
InferenceModel LoadInferenceModel(const ModelConfig& config, int32_t eos_id,
                                  const std::string& checkpoint_dir,
                                  trainer::RestoreOptions options, std::ostream& log,
                                  at::Device device = at::kCPU,
                                  partitioning::PjitPartitioner* partitioner = nullptr,
                                  uint64_t init_seed = 0, int64_t decode_batch_size = 0);

// --int8_weights (RunOptions::int8_weights): the int8 copies MatmulIn uses
// for m's parameters while an Int8WeightsScope holds them
// (models/networks/int8_weights.h), with a "[restore] ..." line to `log`;
// nullptr without the flag. Throws t5xx::Error when the parameters are not
// float32 on the CPU or config's network dtype is not float32 (the int8
// kernels replace float32 CPU matmuls only: the flag would do nothing).
std::unique_ptr<models::Int8Weights> Int8WeightsFor(const RunOptions& options,
                                                    const ModelConfig& config,
                                                    const InferenceModel& m, std::ostream& log);

// "[<scope>] --int8_weights: N kernels multiplied in int8 (M MiB)" to `log`
// (nothing when int8 is null).
void LogInt8Weights(const models::Int8Weights* int8, const std::string& scope, std::ostream& log);

// Runs `mode` on `examples` (task examples holding the features `lengths`
// names; lengths as the feature converter takes them) in batches of
// batch_size rows, on the parameters' device (batches copied there,
// results read back once per batch). Batch b of the call decodes with a
// generator of that device seeded with HashSeed(seed, b) (t5x passes
// PRNGKey(0), or one folded with the chunk number, to its infer_fn, which
// gives each batch its own key), so a batch decodes the same wherever it
// runs. With `replicas` (replicas.h), this process decodes its share of the
// batches and every process returns every output, in order. Throws
// t5xx::Error when an example lacks a feature or is longer than its length
// (the converter's message).
std::vector<ExampleInference> InferExamples(const models::BaseTransformerModel& model,
                                            const models::ParamStore& params,
                                            const ModelConfig& config,
                                            const std::vector<seqio::Example>& examples,
                                            const seqio::FeatureLengths& lengths,
                                            int64_t batch_size, InferMode mode, uint64_t seed,
                                            const InferenceReplicas& replicas = {});

// The checkpoint directories a RestoreCheckpointConfig names, in t5x's
// order (t5x/utils.py get_first_valid_restore_config_and_paths, eval.py):
// 'specific': each path (which must hold a checkpoint); 'latest': the
// latest checkpoint_<N> of the first path that has one; 'all': every
// checkpoint_<N> of every path, ascending by step. Throws t5xx::Error
// naming r.where when there is nothing to restore.
std::vector<std::string> CheckpointsToRestore(const RestoreCheckpointConfig& r);

// The vocabulary of `provider`'s 'targets' feature (what predictions are
// decoded with, as t5x's infer and seqio's Evaluator do). Throws
// t5xx::Error naming the task or mixture when it has no 'targets'.
seqio::VocabularyPtr TargetsVocabulary(const std::string& mixture_or_task_name);

// Creates `dir` (and its parents) if missing; throws t5xx::Error naming
// `what` (e.g. "infer.output_dir (INFER_OUTPUT_DIR)"), the path and the
// system's reason when it cannot be created or written.
void CreateOutputDir(const std::string& dir, const std::string& what);

// What CreateOutputDir would refuse, checked without creating anything (for
// `t5xx config` and before a checkpoint is read): `dir` or its nearest
// existing ancestor is not a directory, or that ancestor is not writable.
// Throws t5xx::Error starting "<what> = '<dir>' ".
void CheckOutputDirUsable(const std::string& dir, const std::string& what);

// seqio's Evaluator rule for task_feature_lengths = None: each of `features`
// (e.g. inputs, targets) at the length of its longest example (at least 1).
seqio::FeatureLengths LongestLengths(const std::vector<seqio::Example>& examples,
                                     const std::vector<std::string>& features);

}  // namespace t5xx::run
