// Preparing a validated train run for t5x's training loop (t5x/train.py's
// train() up to the loop): the model and its parameters, the partitioner,
// the trainer, the memory plan with the parameters' exact shapes, the first
// train batch and first eval batches read (so bad lengths, splits or files
// fail before anything is written), then MODEL_DIR with the operative
// config. The CLI prints and runs the loop; infer and eval will reuse the
// pieces.
#pragma once

#include <memory>
#include <ostream>

#include "t5xx/models/base_model.h"
#include "t5xx/partitioning/base_partitioner.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/run/validation.h"
#include "t5xx/trainer/train_loop.h"
#include "t5xx/trainer/trainer.h"

namespace t5xx::run {

struct PreparedTrainRun {
  std::unique_ptr<models::BaseTransformerModel> model;
  std::unique_ptr<partitioning::BasePartitioner> partitioner;
  std::unique_ptr<trainer::Trainer> trainer;  // refers to *model, *partitioner
  trainer::BatchFn train_batches;             // starts with the batch already read
  trainer::EvalDatasets eval_datasets;
  trainer::TrainLoopConfig loop;  // with the operative config and MFU inputs
};

// Builds everything `t5xx train` runs from a validated configuration,
// writing "[setup] ..." lines (memory plan, model size and mesh, the
// variable table, FLOPs and the measured peak) to `log`. Throws t5xx::Error
// when the memory plan does not fit, a parameter cannot be allocated, a
// dataset yields no full batch, or MODEL_DIR cannot be written; nothing is
// written before the last of those checks. `log` must outlive the run: the
// inference evaluation (infer_eval_dataset_cfg) prints to it.
PreparedTrainRun PrepareTrainRun(const LoadedTrainConfig& loaded, const ValidatedTrainRun& run,
                                 std::ostream& log);

}  // namespace t5xx::run
