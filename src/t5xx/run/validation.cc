// See validation.h.
#include "t5xx/run/validation.h"

#include <algorithm>
#include <filesystem>


#include "t5xx/data/dataset_providers/mixture.h"
#include "t5xx/data/vocabularies/byte_vocabulary.h"
#include "t5xx/data/vocabularies/sentencepiece_vocabulary.h"
#include "t5xx/partitioning/launch/process_environment.h"
#include "t5xx/run/datasets.h"
#include "t5xx/run/device_setup.h"
#include "t5xx/run/inference/inference.h"
#include "t5xx/run/memory.h"
#include "t5xx/run/model.h"
#include "t5xx/run/model_dir.h"
#include "t5xx/trainer/checkpoint_io.h"
#include "t5xx/util/error.h"
#include "t5xx/util/error_list.h"
#include "t5xx/storage/remote_copy.h"

namespace t5xx::run {

namespace fs = std::filesystem;


void CheckVocabularies(const ModelConfig& model, const std::string& task_name,
                       const seqio::OutputFeatures& output_features, const std::string& data_dir) {
  int64_t task_vocab = 0;
  for (const auto& [name, feature] : output_features) {
    task_vocab = std::max<int64_t>(task_vocab, feature.vocabulary->vocab_size());
  }
  T5XX_CHECK(task_vocab <= model.vocab_size(),
             "task '" + task_name + "' uses a vocabulary of " + std::to_string(task_vocab) +
                 " ids but " + model.vocab_size_key() + " = " +
                 std::to_string(model.vocab_size()) + "; set vocab_size to at least " +
                 std::to_string(task_vocab) + " (t5x rounds up to a multiple of 128)");
  auto it = output_features.find("targets");
  if (it == output_features.end()) return;
  const VocabularyConfig& v = model.output_vocabulary;
  if (v.byte) {
    const auto* task_bytes =
        dynamic_cast<const seqio::ByteVocabulary*>(it->second.vocabulary.get());
    if (task_bytes && task_bytes->extra_ids() == v.extra_ids) return;
    throw Error("the model's vocabulary (seqio.ByteVocabulary, extra_ids = " +
                std::to_string(v.extra_ids) + ") is not the vocabulary of task '" + task_name +
                "' (" +
                (task_bytes ? "seqio.ByteVocabulary, extra_ids = " +
                                  std::to_string(task_bytes->extra_ids())
                            : std::string("not a ByteVocabulary")) +
                "); t5x requires them to match: bind the model's vocabulary to the task's");
  }
  const auto* task_spm =
      dynamic_cast<const seqio::SentencePieceVocabulary*>(it->second.vocabulary.get());
  std::string path = v.sentencepiece_model_file;
  if (IsRemotePath(path) && task_spm) {
    // gs://...: its copy under --data_dir or the bucket's (storage/remote_copy.h).
    path = ReadableCopy(path, data_dir).value_or(path);
  } else if (IsRemotePath(path)) {
    // (Not a SentencePiece task vocabulary: they differ whatever the file holds.)
  } else if (!path.empty() && path[0] != '/') {
    path = data_dir + "/" + path;
  }
  const bool same_file = task_spm && fs::exists(path) &&
                         fs::weakly_canonical(path) == fs::weakly_canonical(task_spm->model_file());
  if (task_spm && same_file && task_spm->extra_ids() == v.extra_ids) return;
  // Two files may hold one vocabulary: t5's catalog tokenizes with
  // cc_all.32000 plus 100 extra ids, t5x's model gins name
  // cc_all.32000.100extra, whose model holds those ids as pieces. seqio
  // compares the models with their extra ids added; t5xx compares every
  // id's piece.
  if (task_spm && !same_file && fs::exists(path)) {
    // seqio adds extra id n as the piece "▁<extra_id_n>"; t5xx names an
    // extra id "<extra_id_n>".
    auto piece = [](const seqio::SentencePieceVocabulary& vocab, int32_t id) {
      std::string p = vocab.IdToPiece(id);
      if (p.rfind("\xE2\x96\x81<extra_id_", 0) == 0) p = p.substr(3);
      return p;
    };
    const seqio::SentencePieceVocabulary model_vocab(path, static_cast<int32_t>(v.extra_ids));
    bool same = model_vocab.vocab_size() == task_spm->vocab_size();
    for (int32_t id = 0; same && id < model_vocab.vocab_size(); ++id) {
      same = piece(model_vocab, id) == piece(*task_spm, id);
    }
    if (same) return;
  }
  throw Error(
      "the model's vocabulary (seqio.SentencePieceVocabulary.sentencepiece_model_file = '" +
      v.sentencepiece_model_file + "', extra_ids = " + std::to_string(v.extra_ids) +
      ") is not the vocabulary of task '" + task_name + "' (" +
      (task_spm ? "'" + task_spm->model_file() + "', extra_ids = " +
                      std::to_string(task_spm->extra_ids())
                : std::string("not a SentencePieceVocabulary")) +
      "); t5x requires them to match: bind the model's vocabulary to the task's "
      "(a relative path is looked up under --data_dir)");
}

ValidatedTrainRun ValidateTrainRun(const LoadedTrainConfig& loaded) {
  const TrainSetup& s = loaded.setup;
  const std::unique_ptr<models::BaseTransformerModel> model = CreateModel(s.model);
  ValidatedTrainRun run;
  // Independent checks all run; their errors are reported together.
  ErrorList errors;
  errors.Attempt([&] { CheckModelDir(s.model_dir); });
  errors.Attempt([&] { run.restore = PlanRestore(s, &run.restore_notes); });
  const std::string& task_name = s.train_dataset.mixture_or_task_name;
  if (errors.Attempt(
          [&] { run.output_features = GetOutputFeatures(task_name, loaded.demo_problem); })) {
    errors.Attempt([&] {
      CheckVocabularies(s.model, task_name, run.output_features, loaded.options.data_dir);
    });
    errors.Attempt([&] { CheckDataset(s.train_dataset, "train", *model); });
  }
  if (s.train_eval_dataset) {
    const DatasetConfig& eval_cfg = *s.train_eval_dataset;
    if (errors.Attempt(
            [&] { GetOutputFeatures(eval_cfg.mixture_or_task_name, loaded.demo_problem); }) &&
        errors.Attempt([&] { CheckDataset(eval_cfg, "train_eval", *model); })) {
      run.eval_datasets = TrainingEvalDatasetConfigs(eval_cfg);
    }
  }
  // The inference evaluation's caches (its other checks come with the
  // evaluator, which reads its examples before training).
  if (s.infer_eval_dataset &&
      (seqio::TaskRegistry::Global().Has(s.infer_eval_dataset->mixture_or_task_name) ||
       seqio::MixtureRegistry::Global().Has(s.infer_eval_dataset->mixture_or_task_name))) {
    errors.Attempt([&] { CheckCachedTasks(*s.infer_eval_dataset, "infer_eval"); });
  }
  {
    const std::optional<partitioning::ProcessEnvironment> env =
        partitioning::DetectProcessEnvironment();
    run.memory_problem = MemoryProblemBeforeAllocation(s, *model, RunDevice(loaded.options),
                                                       env ? env->world_size : 1);
  }

  trainer::TrainLoopConfig& loop = run.loop;
  loop.model_dir = s.model_dir;
  loop.total_steps = s.total_steps;
  loop.relative_steps = s.relative_steps;
  loop.stats_period = s.stats_period;
  loop.save_checkpoints = s.save_checkpoints;
  loop.checkpoint_period = s.checkpoint_period;
  loop.keep = s.checkpoint_keep;
  loop.keep_dataset_checkpoints = s.keep_dataset_checkpoints;
  loop.force_keep_period = s.force_keep_period;
  loop.save_best = s.save_best;
  // prompt-tuning refuses packed inputs (PromptEncoderDecoder.encode): say
  // so before step 1, naming the dataset.
  T5XX_CHECK(s.model.t5_config.prompt_length == 0 ||
                 (!s.train_dataset.pack && !(s.train_eval_dataset && s.train_eval_dataset->pack)),
             "prompt tuning (network.Transformer.prompt) does not support packed inputs, as "
             "prompt-tuning's PromptEncoderDecoder; set train/utils.DatasetConfig.pack = False "
             "(and train_eval/'s)");
  if (!s.numpy_save_paths.empty()) {
    loop.before_save = trainer::NumpyCheckpointHook(s.model_dir, s.numpy_save_paths);
  }
  loop.checkpoint_steps = s.checkpoint_steps;
  loop.save_dtype = s.save_dtype;
  loop.scan_layout = s.model.scan_layout();
  loop.eval_steps = s.eval_steps;
  loop.eval_period = s.eval_period;
  loop.run_eval_before_training = s.run_eval_before_training;
  loop.use_orbax = s.use_orbax;
  loop.train_actions = s.train_actions;
  loop.train_eval_actions = s.train_eval_actions;
  loop.infer_eval_actions = s.infer_eval_actions;
  loop.stop_on_nan = !(s.optimizer.kind == optim::OptimizerConfig::Kind::kAdafactor &&
                       s.optimizer.adafactor.skip_nan_updates);
  loop.num_devices = s.num_partitions;
  std::vector<std::string> eval_names;
  for (const DatasetConfig& d : run.eval_datasets) eval_names.push_back(d.mixture_or_task_name);
  // A train-eval dataset that failed its own checks still has the periods
  // checked against it, so that every error is reported at once.
  if (eval_names.empty() && s.train_eval_dataset) {
    eval_names.push_back(s.train_eval_dataset->mixture_or_task_name);
  }
  const int64_t start_step = run.restore ? run.restore->step : 0;
  errors.Attempt([&] { trainer::CheckTrainLoopConfig(loop, eval_names, start_step); });
  errors.ThrowIfAny("the train configuration");
  return run;
}

namespace {

// infer's and eval's processes (inference/replicas.h): num_partitions, the
// 'model' axis, divides their number (1 without a launcher).
void CheckInferenceMesh(const std::string& command, int64_t num_partitions) {
  const std::optional<partitioning::ProcessEnvironment> env =
      partitioning::DetectProcessEnvironment();
  const int64_t processes = env ? env->world_size : 1;
  T5XX_CHECK(processes % num_partitions == 0,
             "t5xx " + command + ": partitioning.PjitPartitioner.num_partitions = " +
                 std::to_string(num_partitions) + " does not divide the run's process count, " +
                 std::to_string(processes) + "; launch a multiple of it (t5xx launch --nproc_per_node=" +
                 std::to_string(num_partitions) + ") or set num_partitions to a divisor");
}

}  // namespace

std::vector<std::string> ValidateInferRun(const LoadedTrainConfig& loaded) {
  const InferSetup& s = loaded.infer;
  ErrorList errors;
  std::vector<std::string> dirs;
  errors.Attempt([&] { CheckInferenceMesh("infer", s.num_partitions); });
  errors.Attempt([&] { ParseInferMode(s.mode); });
  if (errors.Attempt(
          [&] { GetOutputFeatures(s.dataset.mixture_or_task_name, loaded.demo_problem); })) {
    errors.Attempt([&] { CheckDataset(s.dataset, "infer", *CreateModel(s.model)); });
  }
  errors.Attempt([&] { dirs = CheckpointsToRestore(s.restore); });
  errors.ThrowIfAny("the infer configuration");
  return dirs;
}

std::vector<std::string> ValidateEvalRun(const LoadedTrainConfig& loaded) {
  const EvalSetup& s = loaded.eval;
  ErrorList errors;
  std::vector<std::string> dirs;
  errors.Attempt([&] { CheckInferenceMesh("eval", s.num_partitions); });
  if (errors.Attempt(
          [&] { GetOutputFeatures(s.dataset.mixture_or_task_name, loaded.demo_problem); })) {
    errors.Attempt([&] { CheckCachedTasks(s.dataset, "eval"); });
  }
  errors.Attempt([&] { dirs = CheckpointsToRestore(s.restore); });
  errors.ThrowIfAny("the eval configuration");
  return dirs;
}

}  // namespace t5xx::run
