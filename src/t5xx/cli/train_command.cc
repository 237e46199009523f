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
#include "t5xx/cli/train_validation.h"
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

// Batches of `d` as model tensors; the stream's errors name `what`.
trainer::BatchFn MakeBatchFn(const DatasetConfig& d, ModelKind kind, int num_epochs,
                             uint64_t seed) {
  std::shared_ptr<seqio::FeatureConverter> converter = MakeConverter(kind, d);
  seqio::FeatureLengths lengths(d.task_feature_lengths.begin(), d.task_feature_lengths.end());
  auto it = std::make_shared<seqio::BatchIterator>(seqio::GetMixtureOrTaskDataset(
      d.mixture_or_task_name, lengths, *converter, d.split, d.shuffle, num_epochs, {},
      d.seed ? static_cast<uint64_t>(*d.seed) : seed, d.batch_size,
      seqio::TaskRegistry::Global(), seqio::MixtureRegistry::Global(), d.trim_output_features));
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

}  // namespace

int TrainCommand(const std::vector<std::string>& all_args) {
  LoadedTrainConfig loaded = LoadTrainConfig(all_args, "train", {"data_dir", "skip_bad_records"});
  gin::Config& config = *loaded.config;
  const TrainSetup& s = loaded.setup;
  const std::string data_dir = loaded.flags.count("data_dir") ? loaded.flags["data_dir"]
                                                              : seqio::DefaultDataDir();
  // Everything `t5xx config` checks too.
  ValidatedTrainRun run = ValidateTrainRun(loaded, data_dir);
  if (run.memory_problem) throw Error(*run.memory_problem);
  const std::string& task_name = s.train_dataset.mixture_or_task_name;

  std::unique_ptr<models::BaseTransformerModel> model = MakeModel(s);
  partitioning::PjitPartitioner partitioner(s.num_partitions, s.logical_axis_rules);
  models::ParamStore params;
  try {
    params = model->InitParams(static_cast<uint64_t>(s.random_seed));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // e.g. libtorch's allocation failure
    std::string what = e.what();
    throw Error("cannot allocate the model's parameters (" + what.substr(0, what.find('\n')) +
                "); use a smaller model (network config sizes)");
  }
  trainer::Trainer trainer(*model, std::move(params), optim::MakeOptimizer(s.optimizer),
                           optim::LearningRateSchedule(s.lr), partitioner, s.num_microbatches,
                           static_cast<uint64_t>(s.random_seed));

  // The memory plan, now with the parameters' exact shapes: refuse a run
  // that cannot fit before writing anything.
  {
    std::vector<std::vector<int64_t>> shapes;
    for (const auto& p : trainer.params().params()) shapes.push_back(p.value.sizes().vec());
    const models::MemoryPlan plan = PlanMemory(s, shapes);
    const int64_t available = models::AvailableHostMemoryBytes();
    std::cout << "[setup] memory plan per process: " << plan.ToString();
    if (available > 0) {
      std::cout << "; available " << static_cast<double>(available) / (1024.0 * 1024 * 1024)
                << " GiB";
    }
    std::cout << std::endl;
    // Parameters are already allocated, so compare what is still to come.
    CheckMemoryPlan(plan, available, /*allocated=*/plan.parameters);
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
  // stream restarts for every evaluation and repeats its data for as long as
  // the evaluation reads (t5x: .unbatch().repeat().batch().take(eval_steps)),
  // so every evaluation reads the same eval_steps full batches, however
  // small the split. (t5x repeats packed rows, t5xx the task's examples, so
  // rows can differ where an epoch ends.) An empty split yields nothing.
  trainer::EvalDatasets eval_datasets;
  if (s.train_eval_dataset) {
    const int num_epochs = -1;
    for (const DatasetConfig& cfg : run.eval_datasets) {
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
      eval_datasets.emplace_back(cfg.mixture_or_task_name, make_eval);
    }
  }
  trainer::TrainLoopConfig loop = run.loop;
  loop.num_devices = partitioner.mesh().data * partitioner.mesh().model;

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
