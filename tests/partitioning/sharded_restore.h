// Saving and restoring the tiny models' train state (tiny_training.h) on a
// layout: train a few steps and save one checkpoint (every process writing
// its boxes), or restore a checkpoint saved on any layout into this one
// (every process reading its boxes) and evaluate. What sharded_restore_test
// runs in each worker process and, over a LocalCommunicator, in itself.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "partitioning/tiny_training.h"
#include "t5xx/checkpoints/async_checkpointer.h"
#include "t5xx/trainer/checkpoint_io.h"
#include "t5xx/trainer/checkpoint_restore.h"

namespace t5xx::testing {

// The fixed batch every layout evaluates on (never trained on: the training
// batches are seeds 0..steps-1).
inline constexpr int64_t kEvalSeed = 99;

inline optim::LearningRateSchedule TinySchedule() {
  optim::LearningRateSchedulerConfig lr;
  lr.factors = "constant";
  lr.base_learning_rate = 0.05;  // TrainTiny's
  return optim::LearningRateSchedule(lr);
}

// Adafactor with momentum (the checkpoint holds m, and the step after a
// restore depends on it). min_dim_size_to_factor 16 factors the tiny
// model's kernels (second largest dim 32): the checkpoint then holds
// v_row/v_col, whose factoring a sharded process decides from the global
// shapes; the default (128) factors none of them.
inline optim::AdafactorConfig TinyAdafactorConfig(int64_t min_dim_size_to_factor = 128) {
  optim::AdafactorConfig c;
  c.min_dim_size_to_factor = min_dim_size_to_factor;
  c.beta1 = 0.9;
  return c;
}

inline partitioning::LogicalAxisRules TinyRules(const TinyLayout& layout) {
  return partitioning::StandardLogicalAxisRules(layout.activation_partitioning_dims,
                                                layout.parameter_partitioning_dims);
}

// Eval losses of the fixed batch: of the saved (or restored) state, and
// after one more training step from it (on batch seed = the step), which
// also depends on the optimizer's state and step.
struct TinyEvals {
  int64_t checkpoint_step = 0;  // the restore report's (saves: the step saved)
  int64_t trainer_step = 0;     // the trainer's when saved / restored
  double eval_loss = 0;
  double next_eval_loss = 0;
};

inline double TrainOneMoreAndEval(trainer::Trainer& t, const std::string& model) {
  t.TrainStep(TinyLayoutBatch(model, t.step()));
  return t.EvalStep(TinyLayoutBatch(model, kEvalSeed)).loss;
}

// Trains `steps` steps on `layout` (as TrainTiny does, with `adafactor`), saves checkpoint_<steps>
// into `model_dir` (all processes of `comm` together; returns once this
// process's part is written, and on process 0 once the checkpoint is
// committed), then trains one step more.
inline TinyEvals TrainAndSave(std::shared_ptr<const partitioning::Communicator> comm,
                              const TinyLayout& layout, const optim::AdafactorConfig& adafactor,
                              int steps, const std::string& model_dir) {
  const std::unique_ptr<models::BaseTransformerModel> model = TinyLayoutModel(layout.model);
  partitioning::PjitPartitioner partitioner(layout.num_partitions, TinyRules(layout), comm);
  trainer::Trainer t(*model, partitioner.ShardParams(model->InitParams(0)),
                     optim::Adafactor(adafactor), TinySchedule(), partitioner);
  for (int i = 0; i < steps; ++i) t.TrainStep(TinyLayoutBatch(layout.model, i));
  TinyEvals r;
  r.checkpoint_step = r.trainer_step = t.step();
  r.eval_loss = t.EvalStep(TinyLayoutBatch(layout.model, kEvalSeed)).loss;
  checkpoints::PendingCheckpoint snapshot = trainer::SnapshotShardedTrainState(
      model_dir, t.params(), t.optimizer(), t.DescribeVariables(), *comm);
  checkpoints::AsyncCheckpointer checkpointer(model_dir, {}, {});
  checkpointer.Save(std::move(snapshot));
  checkpointer.Wait();
  r.next_eval_loss = TrainOneMoreAndEval(t, layout.model);
  return r;
}

// Restores `checkpoint_dir` into `layout` over `comm` (each process reading
// only its boxes), evaluates the fixed batch and trains one step more. The
// order matters: the parameters are sharded first, the optimizer reduces
// through the partitioner before Init (Adafactor factors by global shapes),
// the restore fills the boxes the partitioner's layout gives, and the
// Trainer takes the initialized optimizer as it is.
inline TinyEvals RestoreAndEval(std::shared_ptr<const partitioning::Communicator> comm,
                                const TinyLayout& layout, const optim::AdafactorConfig& adafactor,
                                const std::string& checkpoint_dir) {
  const std::unique_ptr<models::BaseTransformerModel> model = TinyLayoutModel(layout.model);
  partitioning::PjitPartitioner partitioner(layout.num_partitions, TinyRules(layout), comm);
  models::ParamStore params = partitioner.ShardParams(model->InitParams(0));
  auto optimizer = std::make_unique<optim::Adafactor>(adafactor);
  optimizer->set_reducer(partitioner.reducer());
  optimizer->Init(params);
  trainer::RestoreOptions options;
  options.owned_slice = trainer::OwnedSlices(
      partitioner.DescribeVariables(params, trainer::SlotShapes(*optimizer)));
  TinyEvals r;
  r.checkpoint_step = trainer::RestoreTrainState(checkpoint_dir, params, optimizer.get(), options,
                                                 comm->rank(), comm->size())
                          .step;
  trainer::Trainer t(*model, std::move(params), std::move(optimizer), TinySchedule(),
                     partitioner);
  r.trainer_step = t.step();
  r.eval_loss = t.EvalStep(TinyLayoutBatch(layout.model, kEvalSeed)).loss;
  r.next_eval_loss = TrainOneMoreAndEval(t, layout.model);
  return r;
}

}  // namespace t5xx::testing
