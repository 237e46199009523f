// See preflight.h.
#include "t5xx/run/preflight.h"

#include <optional>
#include <string>
#include <vector>

#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/partitioning/launch/process_environment.h"
#include "t5xx/run/datasets.h"
#include "t5xx/run/inference/evaluator.h"
#include "t5xx/run/model.h"
#include "t5xx/util/error.h"
#include "t5xx/util/error_list.h"

namespace t5xx::run {

void PreflightTrainRun(const LoadedTrainConfig& loaded, const ValidatedTrainRun& run) {
  const TrainSetup& s = loaded.setup;
  ErrorList errors;
  const std::optional<partitioning::ProcessEnvironment> env =
      partitioning::DetectProcessEnvironment();
  const int world = env ? env->world_size : 1;
  const int rank = env ? env->rank : 0;
  // The mesh and the batch splits need only the process count.
  seqio::ShardInfo shard{0, 1};
  const bool mesh_ok = errors.Attempt([&] {
    const partitioning::PjitPartitioner planned(s.num_partitions, s.logical_axis_rules, world);
    // t5x's get_dataset: each data replica reads batch_size / data-axis-size
    // examples of every global batch (train and train-eval alike).
    const int data = static_cast<int>(planned.mesh().data);
    shard = seqio::ShardInfo{rank / static_cast<int>(planned.mesh().model), data};
    CheckBatchSplits(s.train_dataset, "train", data);
    for (const DatasetConfig& cfg : run.eval_datasets) CheckBatchSplits(cfg, "train_eval", data);
  });
  if (s.model.scan_layout() && world > 1) {
    errors.Attempt([&] {
      throw Error("network.T5Config.scan_layers = True: t5xx saves and restores t5x's scanned "
                  "layout on one process only, and this run has " + std::to_string(world) +
                  " processes (mesh: num_partitions = " + std::to_string(s.num_partitions) +
                  "); bind network.T5Config.scan_layers = False (per-layer checkpoints, which "
                  "`t5xx convert_checkpoint --scan_layers=true` stacks afterwards) or train on "
                  "one process");
    });
  }
  // A run the memory plan refuses is not read from (a batch of 2^63
  // examples would never be collected): train refuses it with the plan's
  // verdict, config prints that as a note.
  if (!mesh_ok || run.output_features.empty() || run.memory_problem) {
    errors.ThrowIfAny("the train configuration");
    return;  // no task: ValidateTrainRun said so
  }
  const std::unique_ptr<models::BaseTransformerModel> model = CreateModel(s.model);
  const uint64_t seed = static_cast<uint64_t>(s.random_seed);
  errors.Attempt([&] {
    std::shared_ptr<BatchStream> train =
        GetBatchStream(s.train_dataset, "train", *model, /*num_epochs=*/-1, seed, shard,
                       /*read_ahead=*/0);
    T5XX_CHECK(train->HasNext(), Describe(s.train_dataset, "train") + " yields no full batch of " +
                                     std::to_string(s.train_dataset.batch_size) + " examples");
  });
  for (const DatasetConfig& cfg : run.eval_datasets) {
    errors.Attempt([&] {
      T5XX_CHECK(GetTrainingEvalBatches(cfg, *model, /*num_epochs=*/-1, seed, shard)().has_value(),
                 Describe(cfg, "train_eval") + " yields no full batch of " +
                     std::to_string(cfg.batch_size) +
                     " examples; lower train_eval/utils.DatasetConfig.batch_size or set "
                     "train.train_eval_dataset_cfg = None");
    });
  }
  if (s.infer_eval_dataset) {
    errors.Attempt([&] {
      InferenceEvaluator(*s.infer_eval_dataset, "infer_eval", s.evaluator,
                         s.model_dir + "/inference_eval", /*write_logs=*/false);
    });
  }
  errors.ThrowIfAny("the train configuration");
}

}  // namespace t5xx::run
