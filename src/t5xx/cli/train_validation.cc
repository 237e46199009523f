// See train_validation.h.
#include "t5xx/cli/train_validation.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <limits>

#include "t5xx/checkpoints/checkpoints.h"
#include "t5xx/data/demo_tasks.h"
#include "t5xx/data/mixture.h"
#include "t5xx/data/preprocessor_registry.h"
#include "t5xx/data/sentencepiece_vocabulary.h"
#include "t5xx/data/task.h"
#include "t5xx/models/flops.h"
#include "t5xx/util/error.h"
#include "t5xx/util/file_kind.h"

namespace t5xx::cli {

namespace fs = std::filesystem;

namespace {

// The output features of the task or mixture `name` (seqio's
// get_mixture_or_task: a mixture wins when both registries hold the name).
// Throws t5xx::Error for an unknown name ("did you mean" over both
// registries) or a demo task whose corpus is missing.
seqio::OutputFeatures GetOutputFeatures(const std::string& name,
                                        const std::optional<std::string>& demo_problem) {
  if ((name == seqio::kDemoTaskName || name == seqio::kDemoLmTaskName) && demo_problem) throw Error(*demo_problem);
  if (seqio::MixtureRegistry::Global().Has(name)) {
    return seqio::MixtureRegistry::Global().Get(name)->output_features();
  }
  if (!seqio::TaskRegistry::Global().Has(name)) {
    std::vector<std::string> names = seqio::TaskRegistry::Global().Names();
    for (const auto& m : seqio::MixtureRegistry::Global().Names()) names.push_back(m);
    const std::string suggestion = seqio::ClosestName(name, names);
    throw Error("no task or mixture named '" + name + "'" +
                (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
                "; define it in gin (seqio.Task / seqio.Mixture in t5xx.seqio.register) or "
                "use " + seqio::kDemoTaskName);
  }
  return seqio::TaskRegistry::Global().Get(name)->output_features();
}

// t5x's train() requires the task's output vocabulary to equal the model's
// (utils.verify_matching_vocabs); relative model paths are under data_dir.
void CheckVocabularies(const TrainSetup& s, const std::string& task_name,
                       const seqio::OutputFeatures& output_features,
                       const std::string& data_dir) {
  int64_t task_vocab = 0;
  for (const auto& [name, feature] : output_features) {
    task_vocab = std::max<int64_t>(task_vocab, feature.vocabulary->vocab_size());
  }
  const int64_t model_vocab = s.model_kind == ModelKind::kEncoderDecoder
                                  ? s.t5_config.vocab_size
                                  : s.decoder_only_config.vocab_size;
  const std::string vocab_key = s.model_kind == ModelKind::kEncoderDecoder
                                    ? "network.T5Config.vocab_size"
                                    : "network.TransformerConfig.vocab_size";
  T5XX_CHECK(task_vocab <= model_vocab,
        "task '" + task_name + "' uses a vocabulary of " + std::to_string(task_vocab) +
            " ids but " + vocab_key + " = " + std::to_string(model_vocab) +
            "; set vocab_size to at least " + std::to_string(task_vocab) +
            " (t5x rounds up to a multiple of 128)");
  auto it = output_features.find("targets");
  if (it == output_features.end()) return;
  const auto* task_spm =
      dynamic_cast<const seqio::SentencePieceVocabulary*>(it->second.vocabulary.get());
  const VocabularyConfig& v = s.output_vocabulary;
  std::string path = v.sentencepiece_model_file;
  if (!path.empty() && path[0] != '/' && path.find("://") == std::string::npos) {
    path = data_dir + "/" + path;
  }
  const bool same_file = task_spm && fs::exists(path) &&
                         fs::weakly_canonical(path) == fs::weakly_canonical(task_spm->model_file());
  if (task_spm && same_file && task_spm->extra_ids() == v.extra_ids) return;
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

// MODEL_DIR must be new or hold no earlier run: t5xx cannot resume yet.
void CheckModelDir(const std::string& model_dir) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(model_dir, ec))) {
    // train will create it: its nearest existing ancestor must be a
    // writable directory (what create_directories would find out).
    fs::path p = fs::absolute(model_dir, ec).parent_path();
    while (!p.empty() && !fs::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
    const std::string why = NotARegularFile(p.string());
    T5XX_CHECK(why == "is a directory",
               "MODEL_DIR '" + model_dir + "' cannot be created: '" + p.string() + "' " +
                   (why.empty() ? std::string("is a file") : why) +
                   "; pass --gin.MODEL_DIR=<a path under a writable directory>");
    T5XX_CHECK(::access(p.c_str(), W_OK | X_OK) == 0,
               "MODEL_DIR '" + model_dir + "' cannot be created: '" + p.string() +
                   "' is not writable; pass --gin.MODEL_DIR=<a path under a writable directory>");
    return;
  }
  T5XX_CHECK(fs::is_directory(model_dir),
        "MODEL_DIR '" + model_dir + "' exists and is not a directory; pass "
        "--gin.MODEL_DIR=<a new directory>");
  std::vector<int64_t> steps = checkpoints::ListCheckpointSteps(model_dir);
  T5XX_CHECK(steps.empty(),
        "MODEL_DIR '" + model_dir + "' already holds checkpoint_" + std::to_string(steps.back()) +
            "; t5xx cannot resume a run yet (restoring comes with the checkpoint work), so "
            "use a new MODEL_DIR or delete this one");
}

// The tasks of `name` (the task itself, or a mixture's leaf tasks).
std::vector<seqio::TaskPtr> TasksOf(const std::string& name) {
  if (seqio::MixtureRegistry::Global().Has(name)) {
    return seqio::MixtureRegistry::Global().Get(name)->tasks();
  }
  return {seqio::TaskRegistry::Global().Get(name)};
}

bool HasSplit(const seqio::Task& task, const std::string& split) {
  const std::vector<std::string> splits = task.splits();
  return std::find(splits.begin(), splits.end(), split) != splits.end();
}

// Every task of `d` has its split; its lengths suit the model's converter.
void CheckDataset(const DatasetConfig& d, ModelKind kind, const std::string& scope) {
  const std::string what = Describe(d, scope);
  const std::vector<seqio::TaskPtr> tasks = TasksOf(d.mixture_or_task_name);
  std::vector<seqio::TaskPtr> with_split;
  for (const seqio::TaskPtr& task : tasks) {
    if (HasSplit(*task, d.split)) with_split.push_back(task);
  }
  // A task needs the split; a mixture skips its tasks that lack it (seqio)
  // but needs one that has it.
  const bool mixture = seqio::MixtureRegistry::Global().Has(d.mixture_or_task_name);
  if (with_split.empty() || (!mixture && with_split.size() != tasks.size())) {
    for (const seqio::TaskPtr& task : tasks) {
      if (HasSplit(*task, d.split)) continue;
      std::string known;
      for (const auto& s : task->splits()) known += (known.empty() ? "'" : ", '") + s + "'";
      throw Error(what + ": task '" + task->name() + "' has no split '" + d.split +
                  "' (its splits: " + known + "); set " + scope +
                  "/utils.DatasetConfig.split to one of them");
    }
  }
  // The split's files: a pattern that matches nothing, or matches a
  // directory, is found now (making a source's dataset only lists its files;
  // nothing is read).
  for (const seqio::TaskPtr& task : with_split) {
    try {
      task->source()->GetDataset(d.split, /*shuffle=*/false, /*seed=*/0, seqio::ShardInfo{});
    } catch (const Error& e) {
      throw Error(what + ": task '" + task->name() + "': " + e.what());
    }
  }
  for (const seqio::TaskPtr& task : tasks) {
    T5XX_CHECK(!d.shuffle || task->shuffle_buffer_size() > 0,
               what + ": task '" + task->name() +
                   "' forbids shuffling (seqio.Task.shuffle_buffer_size = None) but " + scope +
                   "/utils.DatasetConfig.shuffle = True; set shuffle = False or give the task a "
                   "shuffle_buffer_size");
  }
  for (const auto& [k, L] : d.task_feature_lengths) {
    // Positions and segment ids are int32, as in seqio's converters.
    T5XX_CHECK(L <= 2147483647, what + ": task feature length of '" + k + "' is " +
                                    std::to_string(L) + ", more than 2^31 - 1 (" + scope +
                                    "/utils.DatasetConfig.task_feature_lengths)");
  }
  seqio::FeatureLengths lengths(d.task_feature_lengths.begin(), d.task_feature_lengths.end());
  try {
    MakeConverter(kind, d)->GetModelFeatureLengths(lengths);
  } catch (const Error& e) {
    throw Error(what + ": " + e.what() + " (" + scope +
                "/utils.DatasetConfig.task_feature_lengths, usually TASK_FEATURE_LENGTHS)");
  }
}

}  // namespace

std::shared_ptr<seqio::FeatureConverter> MakeConverter(ModelKind kind, const DatasetConfig& d) {
  if (kind == ModelKind::kEncoderDecoder) {
    return std::make_shared<seqio::EncDecFeatureConverter>(d.pack);
  }
  if (d.task_feature_lengths.count("inputs")) {
    return std::make_shared<seqio::PrefixLMFeatureConverter>(d.pack);
  }
  return std::make_shared<seqio::LMFeatureConverter>(d.pack);
}


std::map<std::string, int64_t> ModelFeatureLengths(ModelKind kind, const DatasetConfig& d) {
  auto len = [&](const char* k) {
    auto it = d.task_feature_lengths.find(k);
    return it == d.task_feature_lengths.end() ? int64_t{0} : it->second;
  };
  if (kind == ModelKind::kEncoderDecoder) {
    return {{"encoder_input_tokens", len("inputs")}, {"decoder_target_tokens", len("targets")}};
  }
  // The prefix-LM converter concatenates inputs and targets.
  return {{"decoder_target_tokens", len("inputs") + len("targets")}};
}


std::string Describe(const DatasetConfig& d, const std::string& scope) {
  return "the " + scope + " dataset (" + scope + "/utils.DatasetConfig: task '" +
         d.mixture_or_task_name + "', split '" + d.split + "')";
}

models::MemoryPlan PlanMemory(const TrainSetup& s,
                              const std::vector<std::vector<int64_t>>& shapes) {
  models::OptimizerSlots slots;
  if (s.optimizer.kind == optim::OptimizerConfig::Kind::kAdafactor) {
    slots.factored = s.optimizer.adafactor.factored;
    slots.min_dim_size_to_factor = s.optimizer.adafactor.min_dim_size_to_factor;
    slots.momentum = s.optimizer.adafactor.beta1.has_value();
  } else {
    slots.kind = models::OptimizerSlots::Kind::kAdamW;
  }
  const int64_t batch = s.train_dataset.batch_size / s.num_microbatches.value_or(1);
  const std::map<std::string, int64_t> lens = ModelFeatureLengths(s.model_kind, s.train_dataset);
  if (s.model_kind == ModelKind::kEncoderDecoder) {
    return models::PlanEncoderDecoder(s.t5_config, shapes, slots, batch,
                                      lens.at("encoder_input_tokens"),
                                      lens.at("decoder_target_tokens"));
  }
  return models::PlanDecoderOnly(s.decoder_only_config, shapes, slots, batch,
                                 lens.at("decoder_target_tokens"));
}

void CheckMemoryPlan(const models::MemoryPlan& plan, int64_t available, int64_t allocated) {
  T5XX_CHECK(available < 0 || plan.total() - allocated <= available,
             "the memory plan needs " + std::to_string(plan.total() / (1024 * 1024)) +
                 " MiB per process (" + plan.ToString() + ") but only " +
                 std::to_string(available / (1024 * 1024)) +
                 " MiB are available; lower train/utils.DatasetConfig.batch_size (BATCH_SIZE) or "
                 "the task_feature_lengths (TASK_FEATURE_LENGTHS), raise "
                 "trainer.Trainer.num_microbatches, set remat_policy = 'full' on the network "
                 "config (it helps most with many layers), or use a smaller model");
}

ValidatedTrainRun ValidateTrainRun(const LoadedTrainConfig& loaded, const std::string& data_dir) {
  const TrainSetup& s = loaded.setup;
  ValidatedTrainRun run;
  // Independent checks all run; their errors are reported together.
  std::vector<std::string> errors;
  auto attempt = [&errors](const auto& check) {
    try {
      check();
      return true;
    } catch (const Error& e) {
      errors.push_back(e.what());
      return false;
    }
  };
  attempt([&] { CheckModelDir(s.model_dir); });
  const std::string& task_name = s.train_dataset.mixture_or_task_name;
  if (attempt([&] { run.output_features = GetOutputFeatures(task_name, loaded.demo_problem); })) {
    attempt([&] { CheckVocabularies(s, task_name, run.output_features, data_dir); });
    attempt([&] { CheckDataset(s.train_dataset, s.model_kind, "train"); });
  }
  if (s.train_eval_dataset) {
    const DatasetConfig& eval_cfg = *s.train_eval_dataset;
    if (attempt([&] { GetOutputFeatures(eval_cfg.mixture_or_task_name, loaded.demo_problem); }) &&
        attempt([&] { CheckDataset(eval_cfg, s.model_kind, "train_eval"); })) {
      // For a mixture, each of its tasks that has the split, then the mixture.
      if (seqio::MixtureRegistry::Global().Has(eval_cfg.mixture_or_task_name)) {
        for (const auto& task :
             seqio::MixtureRegistry::Global().Get(eval_cfg.mixture_or_task_name)->tasks()) {
          if (!HasSplit(*task, eval_cfg.split)) continue;
          DatasetConfig cfg = eval_cfg;
          cfg.mixture_or_task_name = task->name();
          run.eval_datasets.push_back(cfg);
        }
      }
      run.eval_datasets.push_back(eval_cfg);
    }
  }

  try {
    models::MemoryPlan plan = PlanMemory(s, {});
    const double param_elements =
        (s.model_kind == ModelKind::kEncoderDecoder
             ? models::EncoderDecoderForwardFlops(s.t5_config, 1, 1)
             : models::DecoderOnlyForwardFlops(s.decoder_only_config, 1)) /
        2;
    plan.parameters = plan.gradients = models::SaturatingBytes(4 * param_elements);
    CheckMemoryPlan(plan, models::AvailableHostMemoryBytes(), /*allocated=*/0);
  } catch (const Error& e) {
    run.memory_problem = e.what();
  }

  trainer::TrainLoopConfig& loop = run.loop;
  loop.model_dir = s.model_dir;
  loop.total_steps = s.total_steps;
  loop.relative_steps = s.relative_steps;
  loop.stats_period = s.stats_period;
  loop.save_checkpoints = s.save_checkpoints;
  loop.checkpoint_period = s.checkpoint_period;
  loop.keep = s.checkpoint_keep;
  loop.eval_steps = s.eval_steps;
  loop.eval_period = s.eval_period;
  loop.run_eval_before_training = s.run_eval_before_training;
  loop.train_actions = s.train_actions;
  loop.train_eval_actions = s.train_eval_actions;
  loop.stop_on_nan = !(s.optimizer.kind == optim::OptimizerConfig::Kind::kAdafactor &&
                       s.optimizer.adafactor.skip_nan_updates);
  loop.num_devices = s.num_partitions;
  std::vector<std::string> eval_names;
  for (const DatasetConfig& d : run.eval_datasets) eval_names.push_back(d.mixture_or_task_name);
  // t5xx cannot restore yet: every run starts at step 0.
  attempt([&] { trainer::CheckTrainLoopConfig(loop, eval_names, /*start_step=*/0); });
  if (errors.size() == 1) throw Error(errors[0]);
  if (!errors.empty()) {
    std::string msg = std::to_string(errors.size()) + " errors in the train configuration:";
    for (const std::string& e : errors) msg += "\n  " + e;
    throw Error(msg);
  }
  return run;
}

}  // namespace t5xx::cli
