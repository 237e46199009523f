// `t5xx train`: t5x's train.py. Everything that can be checked is checked
// before MODEL_DIR is created or written: the gin config, the task and its
// vocabulary, the first train batch and the first eval batch (so lengths,
// splits and files are known to work), and that MODEL_DIR holds no earlier
// run (restoring comes with the checkpoint issue).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "t5xx/cli/commands.h"
#include "t5xx/cli/train_setup.h"
#include "t5xx/checkpoints/checkpoints.h"
#include "t5xx/data/corpus_builder.h"
#include "t5xx/data/demo_tasks.h"
#include "t5xx/data/feature_converters.h"
#include "t5xx/data/mixture.h"
#include "t5xx/data/preprocessor_registry.h"
#include "t5xx/data/sentencepiece_vocabulary.h"
#include "t5xx/data/task.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/models/flops.h"
#include "t5xx/partitioning/partitioner.h"
#include "t5xx/trainer/batch_conversion.h"
#include "t5xx/trainer/train_loop.h"
#include "t5xx/trainer/trainer.h"
#include "t5xx/util/error.h"

namespace t5xx::cli {
namespace {

namespace fs = std::filesystem;

// The output features of the task or mixture `name` (seqio's
// get_mixture_or_task: a mixture wins when both registries hold the name).
// Throws t5xx::Error for an unknown name ("did you mean" over both
// registries) or a demo task whose corpus is missing.
seqio::OutputFeatures GetOutputFeatures(const std::string& name,
                                        const std::optional<std::string>& demo_problem) {
  if (name == seqio::kDemoTaskName && demo_problem) throw Error(*demo_problem);
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

// Batches of `d` as model tensors; the stream's errors name `what`.
trainer::BatchFn MakeBatchFn(const DatasetConfig& d, int num_epochs, uint64_t seed) {
  auto converter = std::make_shared<seqio::EncDecFeatureConverter>(d.pack);
  seqio::FeatureLengths lengths(d.task_feature_lengths.begin(), d.task_feature_lengths.end());
  auto it = std::make_shared<seqio::BatchIterator>(seqio::GetMixtureOrTaskDataset(
      d.mixture_or_task_name, lengths, *converter, d.split, d.shuffle, num_epochs, {},
      d.seed ? static_cast<uint64_t>(*d.seed) : seed, d.batch_size));
  return [it, converter]() -> std::optional<models::FeatureBatch> {
    auto b = it->Next();
    if (!b) return std::nullopt;
    return trainer::ToFeatureBatch(*b);
  };
}

// Prefixes errors raised while reading a dataset with which one it is.
template <typename F>
auto Reading(const std::string& what, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    throw Error("while reading " + what + ": " + e.what());
  }
}

std::string Describe(const DatasetConfig& d, const std::string& scope) {
  return "the " + scope + " dataset (" + scope + "/utils.DatasetConfig: task '" +
         d.mixture_or_task_name + "', split '" + d.split + "')";
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
  Check(task_vocab <= s.t5_config.vocab_size,
        "task '" + task_name + "' uses a vocabulary of " + std::to_string(task_vocab) +
            " ids but network.T5Config.vocab_size = " + std::to_string(s.t5_config.vocab_size) +
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
  if (!fs::exists(model_dir)) return;
  Check(fs::is_directory(model_dir),
        "MODEL_DIR '" + model_dir + "' exists and is not a directory; pass "
        "--gin.MODEL_DIR=<a new directory>");
  std::vector<int64_t> steps = checkpoints::ListCheckpointSteps(model_dir);
  Check(steps.empty(),
        "MODEL_DIR '" + model_dir + "' already holds checkpoint_" + std::to_string(steps.back()) +
            "; t5xx cannot resume a run yet (restoring comes with the checkpoint work), so "
            "use a new MODEL_DIR or delete this one");
}

}  // namespace

int TrainCommand(const std::vector<std::string>& all_args) {
  LoadedTrainConfig loaded = LoadTrainConfig(all_args, "train", {"data_dir"});
  gin::Config& config = *loaded.config;
  const TrainSetup& s = loaded.setup;
  const std::string data_dir = loaded.flags.count("data_dir") ? loaded.flags["data_dir"]
                                                              : seqio::DefaultDataDir();
  CheckModelDir(s.model_dir);

  const std::optional<std::string>& demo_problem = loaded.demo_problem;
  const std::string& task_name = s.train_dataset.mixture_or_task_name;
  CheckVocabularies(s, task_name, GetOutputFeatures(task_name, demo_problem), data_dir);

  models::EncoderDecoderModel model(models::Transformer(s.t5_config), s.z_loss,
                                    s.label_smoothing, s.loss_normalizing_factor);
  partitioning::PjitPartitioner partitioner(s.num_partitions, s.logical_axis_rules);
  trainer::Trainer trainer(model, model.module().InitParams(static_cast<uint64_t>(s.random_seed)),
                           optim::MakeOptimizer(s.optimizer), optim::LearningRateSchedule(s.lr),
                           partitioner, s.num_microbatches);

  // Read the first batches now, so that bad lengths, splits or files fail
  // before anything is written.
  const std::string train_what = Describe(s.train_dataset, "train");
  trainer::BatchFn train_stream = Reading(train_what, [&] {
    return MakeBatchFn(s.train_dataset, /*num_epochs=*/-1, static_cast<uint64_t>(s.random_seed));
  });
  auto first = std::make_shared<std::optional<models::FeatureBatch>>(
      Reading(train_what, [&] { return train_stream(); }));
  Check(first->has_value(), train_what + " yields no full batch of " +
                                std::to_string(s.train_dataset.batch_size) + " examples");
  trainer::BatchFn train_batches = [first, train_stream, train_what]() {
    if (first->has_value()) {
      std::optional<models::FeatureBatch> b = std::move(*first);
      first->reset();
      return b;
    }
    return Reading(train_what, [&] { return train_stream(); });
  };
  std::function<trainer::BatchFn()> make_eval;
  std::string eval_name;
  if (s.train_eval_dataset) {
    const DatasetConfig eval_cfg = *s.train_eval_dataset;
    GetOutputFeatures(eval_cfg.mixture_or_task_name, demo_problem);
    eval_name = eval_cfg.mixture_or_task_name;
    const std::string eval_what = Describe(eval_cfg, "train_eval");
    make_eval = [eval_cfg, eval_what, seed = s.random_seed]() {
      trainer::BatchFn stream = Reading(eval_what, [&] {
        return MakeBatchFn(eval_cfg, /*num_epochs=*/1, static_cast<uint64_t>(seed));
      });
      return trainer::BatchFn([stream, eval_what]() {
        return Reading(eval_what, [&] { return stream(); });
      });
    };
    Check(make_eval()().has_value(),
          eval_what + " yields no full batch of " + std::to_string(eval_cfg.batch_size) +
              " examples; lower train_eval/utils.DatasetConfig.batch_size or set "
              "train.train_eval_dataset_cfg = None");
  }

  // Only now: MODEL_DIR and the operative config.
  std::error_code ec;
  fs::create_directories(s.model_dir, ec);
  Check(!ec, "cannot create MODEL_DIR '" + s.model_dir + "': " + ec.message() +
                 "; pass --gin.MODEL_DIR=<a writable directory>");
  {
    std::ofstream out(s.model_dir + "/config.gin");
    out << config.OperativeConfigString();
    Check(out.good(), "cannot write " + s.model_dir + "/config.gin; check MODEL_DIR");
  }
  std::cout << "[setup] T5.1.1 encoder-decoder, " << trainer.params().NumElements()
            << " parameters; mesh (data=" << partitioner.mesh().data
            << ", model=" << partitioner.mesh().model << "); task " << task_name
            << "; batch " << s.train_dataset.batch_size << "; lengths";
  for (const auto& [k, v] : s.train_dataset.task_feature_lengths) std::cout << " " << k << "=" << v;
  std::cout << "; model_dir " << s.model_dir << std::endl;

  trainer::TrainLoopConfig loop;
  loop.model_dir = s.model_dir;
  loop.total_steps = s.total_steps;
  loop.stats_period = s.stats_period;
  loop.checkpoint_period = s.checkpoint_period;
  loop.eval_steps = s.eval_steps;
  loop.eval_period = s.eval_period;
  loop.eval_task_name = eval_name;
  const auto& lens = s.train_dataset.task_feature_lengths;
  loop.train_flops_per_step = models::EncoderDecoderTrainFlops(
      s.t5_config, s.train_dataset.batch_size, lens.count("inputs") ? lens.at("inputs") : 0,
      lens.count("targets") ? lens.at("targets") : 0);
  trainer::TrainResult r =
      trainer::RunTrainLoop(trainer, train_batches, make_eval, loop, std::cout);
  std::cout << "[done] " << r.steps << " steps in " << r.train_seconds
            << " s; loss per target token: first " << r.first_loss_per_token << ", last "
            << r.last_loss_per_token;
  if (r.eval) {
    std::cout << "; validation " << r.eval->loss_per_nonpadding_target_token
              << " (accuracy " << r.eval->accuracy() << ")";
  }
  std::cout << "; checkpoint " << r.checkpoint_dir << std::endl;
  return 0;
}

}  // namespace t5xx::cli
