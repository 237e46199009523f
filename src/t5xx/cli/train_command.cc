// `t5xx train`: t5x's train.py. Everything that can be checked is checked
// before MODEL_DIR is created or written: the gin config, the task and its
// vocabulary, the first train batch and the first eval batch (so lengths,
// splits and files are known to work), and that MODEL_DIR holds no earlier
// run (restoring comes with the checkpoint issue).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
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
#include "t5xx/models/decoder_only_model.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/models/memory_plan.h"
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

// The model's feature converter, as t5x's models choose it
// (FEATURE_CONVERTER_CLS): EncDecFeatureConverter for EncoderDecoderModel;
// for DecoderOnlyModel seqio's DecoderFeatureConverter, i.e. the prefix-LM
// converter when the task has 'inputs' lengths, else the LM converter.
std::shared_ptr<seqio::FeatureConverter> MakeConverter(ModelKind kind, const DatasetConfig& d) {
  if (kind == ModelKind::kEncoderDecoder) {
    return std::make_shared<seqio::EncDecFeatureConverter>(d.pack);
  }
  if (d.task_feature_lengths.count("inputs")) {
    return std::make_shared<seqio::PrefixLMFeatureConverter>(d.pack);
  }
  return std::make_shared<seqio::LMFeatureConverter>(d.pack);
}

// The model MODEL describes.
std::unique_ptr<models::BaseTransformerModel> MakeModel(const TrainSetup& s) {
  if (s.model_kind == ModelKind::kEncoderDecoder) {
    return std::make_unique<models::EncoderDecoderModel>(
        models::Transformer(s.t5_config), s.z_loss, s.label_smoothing, s.loss_normalizing_factor);
  }
  return std::make_unique<models::DecoderOnlyModel>(
      models::DecoderOnlyTransformer(s.decoder_only_config), s.inputs_bidirectional_attention,
      s.z_loss, s.label_smoothing, s.loss_normalizing_factor);
}

// Model-feature lengths of a batch (for FLOPs).
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

// models::MemoryPlan for the configured model, optimizer, per-process batch
// (divided by num_microbatches: one microbatch's activations are alive at a
// time) and lengths.
models::MemoryPlan PlanMemory(const TrainSetup& s, const models::ParamStore& params) {
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& p : params.params()) shapes.push_back(p.value.sizes().vec());
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

// Batches of `d` as model tensors; the stream's errors name `what`.
trainer::BatchFn MakeBatchFn(const DatasetConfig& d, ModelKind kind, int num_epochs,
                             uint64_t seed) {
  std::shared_ptr<seqio::FeatureConverter> converter = MakeConverter(kind, d);
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
  if (!fs::exists(model_dir)) return;
  T5XX_CHECK(fs::is_directory(model_dir),
        "MODEL_DIR '" + model_dir + "' exists and is not a directory; pass "
        "--gin.MODEL_DIR=<a new directory>");
  std::vector<int64_t> steps = checkpoints::ListCheckpointSteps(model_dir);
  T5XX_CHECK(steps.empty(),
        "MODEL_DIR '" + model_dir + "' already holds checkpoint_" + std::to_string(steps.back()) +
            "; t5xx cannot resume a run yet (restoring comes with the checkpoint work), so "
            "use a new MODEL_DIR or delete this one");
}

}  // namespace

int TrainCommand(const std::vector<std::string>& all_args) {
  LoadedTrainConfig loaded = LoadTrainConfig(all_args, "train", {"data_dir", "skip_bad_records"});
  gin::Config& config = *loaded.config;
  const TrainSetup& s = loaded.setup;
  const std::string data_dir = loaded.flags.count("data_dir") ? loaded.flags["data_dir"]
                                                              : seqio::DefaultDataDir();
  CheckModelDir(s.model_dir);

  const std::optional<std::string>& demo_problem = loaded.demo_problem;
  const std::string& task_name = s.train_dataset.mixture_or_task_name;
  CheckVocabularies(s, task_name, GetOutputFeatures(task_name, demo_problem), data_dir);

  std::unique_ptr<models::BaseTransformerModel> model = MakeModel(s);
  partitioning::PjitPartitioner partitioner(s.num_partitions, s.logical_axis_rules);
  trainer::Trainer trainer(*model, model->InitParams(static_cast<uint64_t>(s.random_seed)),
                           optim::MakeOptimizer(s.optimizer), optim::LearningRateSchedule(s.lr),
                           partitioner, s.num_microbatches, static_cast<uint64_t>(s.random_seed));

  // The memory plan: refuse a run that cannot fit before writing anything.
  {
    const models::MemoryPlan plan = PlanMemory(s, trainer.params());
    const int64_t available = models::AvailableHostMemoryBytes();
    std::cout << "[setup] memory plan per process: " << plan.ToString();
    if (available > 0) {
      std::cout << "; available " << static_cast<double>(available) / (1024.0 * 1024 * 1024)
                << " GiB";
    }
    std::cout << std::endl;
    // Parameters are already allocated, so compare what is still to come.
    const int64_t still_needed = plan.total() - plan.parameters;
    T5XX_CHECK(available < 0 || still_needed <= available,
          "the memory plan needs " + std::to_string(plan.total() / (1024 * 1024)) +
              " MiB per process (" + plan.ToString() + ") but only " +
              std::to_string(available / (1024 * 1024)) +
              " MiB are available; lower train/utils.DatasetConfig.batch_size (BATCH_SIZE) or "
              "the task_feature_lengths (TASK_FEATURE_LENGTHS), raise "
              "trainer.Trainer.num_microbatches, set remat_policy = 'full' on the network "
              "config (it helps most with many layers), or use a smaller model");
  }

  // Read the first batches now, so that bad lengths, splits or files fail
  // before anything is written.
  const std::string train_what = Describe(s.train_dataset, "train");
  trainer::BatchFn train_stream = Reading(train_what, [&] {
    return MakeBatchFn(s.train_dataset, s.model_kind, /*num_epochs=*/-1,
                       static_cast<uint64_t>(s.random_seed));
  });
  auto first = std::make_shared<std::optional<models::FeatureBatch>>(
      Reading(train_what, [&] { return train_stream(); }));
  T5XX_CHECK(first->has_value(), train_what + " yields no full batch of " +
                                std::to_string(s.train_dataset.batch_size) + " examples");
  trainer::BatchFn train_batches = [first, train_stream, train_what]() {
    if (first->has_value()) {
      std::optional<models::FeatureBatch> b = std::move(*first);
      first->reset();
      return b;
    }
    return Reading(train_what, [&] { return train_stream(); });
  };
  // t5x's utils.get_training_eval_datasets: for a mixture, each of its tasks
  // that has the split, then the mixture itself; for a task, the task. Each
  // stream restarts for every evaluation and repeats its data (at most
  // eval_steps * batch_size epochs, t5x's bound), so every evaluation reads
  // the same eval_steps batches.
  trainer::EvalDatasets eval_datasets;
  if (s.train_eval_dataset) {
    const DatasetConfig eval_cfg = *s.train_eval_dataset;
    GetOutputFeatures(eval_cfg.mixture_or_task_name, demo_problem);
    std::vector<std::string> names;
    if (seqio::MixtureRegistry::Global().Has(eval_cfg.mixture_or_task_name)) {
      for (const auto& task :
           seqio::MixtureRegistry::Global().Get(eval_cfg.mixture_or_task_name)->tasks()) {
        const std::vector<std::string> splits = task->splits();
        if (std::find(splits.begin(), splits.end(), eval_cfg.split) != splits.end()) {
          names.push_back(task->name());
        }
      }
    }
    names.push_back(eval_cfg.mixture_or_task_name);
    const int num_epochs = static_cast<int>(std::min<int64_t>(
        std::numeric_limits<int>::max(), s.eval_steps * eval_cfg.batch_size));
    for (const std::string& name : names) {
      DatasetConfig cfg = eval_cfg;
      cfg.mixture_or_task_name = name;
      const std::string eval_what = Describe(cfg, "train_eval");
      auto make_eval = [cfg, eval_what, num_epochs, seed = s.random_seed, kind = s.model_kind]() {
        trainer::BatchFn stream = Reading(eval_what, [&] {
          return MakeBatchFn(cfg, kind, num_epochs, static_cast<uint64_t>(seed));
        });
        return trainer::BatchFn([stream, eval_what]() {
          return Reading(eval_what, [&] { return stream(); });
        });
      };
      T5XX_CHECK(make_eval()().has_value(),
            eval_what + " yields no full batch of " + std::to_string(cfg.batch_size) +
                " examples; lower train_eval/utils.DatasetConfig.batch_size or set "
                "train.train_eval_dataset_cfg = None");
      eval_datasets.emplace_back(name, make_eval);
    }
  }

  // The loop's settings, checked before anything is written.
  trainer::TrainLoopConfig loop;
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
  loop.num_devices = partitioner.mesh().data * partitioner.mesh().model;
  {
    std::vector<std::string> eval_names;
    for (const auto& [name, make] : eval_datasets) eval_names.push_back(name);
    trainer::CheckTrainLoopConfig(loop, eval_names, trainer.step());
  }

  // Only now: MODEL_DIR and the operative config.
  std::error_code ec;
  fs::create_directories(s.model_dir, ec);
  T5XX_CHECK(!ec, "cannot create MODEL_DIR '" + s.model_dir + "': " + ec.message() +
                 "; pass --gin.MODEL_DIR=<a writable directory>");
  {
    std::ofstream out(s.model_dir + "/config.gin");
    out << config.OperativeConfigString();
    T5XX_CHECK(out.good(), "cannot write " + s.model_dir + "/config.gin; check MODEL_DIR");
  }
  std::cout << "[setup] " << model->name() << ", " << trainer.params().NumElements()
            << " parameters; mesh (data=" << partitioner.mesh().data
            << ", model=" << partitioner.mesh().model << "); task " << task_name
            << "; batch " << s.train_dataset.batch_size << "; lengths";
  for (const auto& [k, v] : s.train_dataset.task_feature_lengths) std::cout << " " << k << "=" << v;
  std::cout << "; model_dir " << s.model_dir << std::endl;
  if (s.relative_steps) {
    std::cout << "[setup] train.relative_steps = " << *s.relative_steps << ": training to step "
              << trainer.step() + *s.relative_steps << " (train.total_steps = " << s.total_steps
              << " is ignored, as in t5x)" << std::endl;
  }
  loop.operative_config = config.OperativeConfigString();
  loop.train_flops_per_step = model->TrainFlops(
      s.train_dataset.batch_size, ModelFeatureLengths(s.model_kind, s.train_dataset));
  // The MFU denominator: the best of five float32 1024x1024 matmuls here.
  loop.peak_flops_per_second = trainer::MeasureMatmulPeakFlops(1024, 5);
  std::cout << "[setup] model FLOPs per train step " << loop.train_flops_per_step
            << " (models/flops.h); measured float32 matmul peak "
            << loop.peak_flops_per_second / 1e9 << " GFLOP/s (timing/mfu = model FLOP/s / peak)"
            << std::endl;

  trainer::TrainResult r =
      trainer::RunTrainLoop(trainer, train_batches, eval_datasets, loop, std::cout);
  std::cout << "[done] " << r.steps << " steps in " << r.train_seconds
            << " s; loss per target token: first " << r.first_loss_per_token << ", last "
            << r.last_loss_per_token;
  for (const auto& [task, metrics] : r.eval) {
    std::cout << "; validation " << task << " " << metrics.at("loss_per_nonpadding_target_token")
              << " (accuracy " << metrics.at("accuracy") << ")";
  }
  if (r.stopped_early) std::cout << "; stopped early by an action";
  std::cout << "; checkpoint " << (r.checkpoint_dir.empty() ? "none" : r.checkpoint_dir)
            << std::endl;
  return 0;
}

}  // namespace t5xx::cli
