#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "t5xx/cli/commands.h"
#include "t5xx/cli/train_setup.h"
#include "t5xx/config/flags.h"
#include "t5xx/config/t5x_configurables.h"
#include "t5xx/data/corpus_builder.h"
#include "t5xx/data/demo_tasks.h"
#include "t5xx/data/feature_converters.h"
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

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

seqio::TaskPtr GetTask(const std::string& name,
                       const std::optional<std::string>& demo_problem) {
  if (name == seqio::kDemoTaskName && demo_problem) throw Error(*demo_problem);
  return seqio::TaskRegistry::Global().Get(name);
}

trainer::BatchFn MakeBatchFn(const DatasetConfig& d, int num_epochs, uint64_t seed) {
  auto converter = std::make_shared<seqio::EncDecFeatureConverter>(d.pack);
  seqio::FeatureLengths lengths(d.task_feature_lengths.begin(), d.task_feature_lengths.end());
  auto it = std::make_shared<seqio::BatchIterator>(seqio::GetDataset(
      d.mixture_or_task_name, lengths, *converter, d.split, d.shuffle, num_epochs, {},
      d.seed ? static_cast<uint64_t>(*d.seed) : seed, d.batch_size));
  return [it, converter]() -> std::optional<models::FeatureBatch> {
    auto b = it->Next();
    if (!b) return std::nullopt;
    return trainer::ToFeatureBatch(*b);
  };
}

}  // namespace

int TrainCommand(const std::vector<std::string>& all_args) {
  gin::Registry registry;
  gin::RegisterT5xConfigurables(registry);
  gin::Config config(&registry);
  std::vector<std::string> rest = gin::ParseGinFlags(all_args, config);
  auto flags = ParseFlags(rest, {"data_dir"}, "train");
  const std::string data_dir =
      flags.count("data_dir") ? flags["data_dir"] : seqio::DefaultDataDir();
  config.Finalize();
  TrainSetup s = ReadTrainSetup(config);
  std::vector<std::string> unused = config.UnusedBindings();
  Check(unused.empty(), "these gin bindings are never read by `t5xx train` (t5x would "
                        "ignore them silently): " + Join(unused, "; ") +
                        "; remove them or fix their names");

  // Tasks are registered explicitly at start-up.
  std::optional<std::string> demo_problem = seqio::RegisterDemoTasks(data_dir);
  seqio::TaskPtr task = GetTask(s.train_dataset.mixture_or_task_name, demo_problem);
  int64_t task_vocab = 0;
  for (const auto& [name, feature] : task->output_features()) {
    task_vocab = std::max<int64_t>(task_vocab, feature.vocabulary->vocab_size());
  }
  Check(task_vocab <= s.t5_config.vocab_size,
        "task '" + task->name() + "' uses a vocabulary of " + std::to_string(task_vocab) +
            " ids but network.T5Config.vocab_size = " + std::to_string(s.t5_config.vocab_size) +
            "; set vocab_size to at least " + std::to_string(task_vocab) +
            " (t5x rounds up to a multiple of 128)");

  {
    // The model's own vocabulary serves decoding (infer/eval, later); in
    // training the task's vocabulary is what the embedding must cover.
    const VocabularyConfig& v = s.output_vocabulary;
    std::string path = v.sentencepiece_model_file;
    if (!path.empty() && path[0] != '/' && path.find("://") == std::string::npos) {
      path = data_dir + "/" + path;
    }
    if (std::filesystem::exists(path)) {
      seqio::SentencePieceVocabulary model_vocab(path, static_cast<int32_t>(v.extra_ids));
      Check(model_vocab.vocab_size() <= s.t5_config.vocab_size,
            "models.EncoderDecoderModel.output_vocabulary (" + path + ") has " +
                std::to_string(model_vocab.vocab_size()) +
                " ids but network.T5Config.vocab_size = " +
                std::to_string(s.t5_config.vocab_size));
    } else {
      std::cout << "[setup] note: the model's vocabulary " << v.sentencepiece_model_file
                << " is not available here; it is only needed for decoding. Training "
                   "uses the task's vocabulary."
                << std::endl;
    }
  }
  std::filesystem::create_directories(s.model_dir);
  {
    std::ofstream out(s.model_dir + "/config.gin");
    Check(out.good(), "cannot write " + s.model_dir + "/config.gin; check MODEL_DIR");
    out << config.OperativeConfigString();
  }

  models::EncoderDecoderModel model(models::Transformer(s.t5_config), s.z_loss,
                                    s.label_smoothing, s.loss_normalizing_factor);
  partitioning::PjitPartitioner partitioner(s.num_partitions, s.logical_axis_rules);
  models::ParamStore params = model.module().InitParams(static_cast<uint64_t>(s.random_seed));
  std::cout << "[setup] T5.1.1 encoder-decoder, " << params.NumElements()
            << " parameters; mesh (data=" << partitioner.mesh().data
            << ", model=" << partitioner.mesh().model << "); task " << task->name()
            << "; batch " << s.train_dataset.batch_size << "; lengths";
  for (const auto& [k, v] : s.train_dataset.task_feature_lengths) std::cout << " " << k << "=" << v;
  std::cout << "; model_dir " << s.model_dir << std::endl;

  trainer::Trainer trainer(model, std::move(params), optim::Adafactor(s.adafactor),
                           optim::LearningRateSchedule(s.lr), partitioner,
                           s.num_microbatches);
  trainer::BatchFn train_batches =
      MakeBatchFn(s.train_dataset, /*num_epochs=*/-1, static_cast<uint64_t>(s.random_seed));
  std::function<trainer::BatchFn()> make_eval;
  std::string eval_name;
  if (s.train_eval_dataset) {
    const DatasetConfig eval_cfg = *s.train_eval_dataset;
    GetTask(eval_cfg.mixture_or_task_name, demo_problem);
    eval_name = eval_cfg.mixture_or_task_name;
    make_eval = [eval_cfg, seed = s.random_seed]() {
      return MakeBatchFn(eval_cfg, /*num_epochs=*/1, static_cast<uint64_t>(seed));
    };
  }
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
