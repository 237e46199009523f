// t5x.trainer.Trainer: one optimisation step = forward, backward, gradient
// reduction through the partitioner, optimizer update (Adafactor or an optax
// optimizer, optim/optimizer.h) with the scheduled learning rate
// (t5x/trainer.py).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "t5xx/models/base_model.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/optim/lr_schedule.h"
#include "t5xx/optim/optimizer.h"
#include "t5xx/partitioning/base_partitioner.h"

namespace t5xx::trainer {

// Metrics of one train or eval step, named as t5x logs them.
struct StepMetrics {
  double loss = 0;            // summed loss / loss_normalizing_factor
  double cross_ent_loss = 0;  // loss - z_loss
  double z_loss = 0;
  double weight_sum = 0;      // non-padding target tokens
  double correct = 0;         // correctly predicted target tokens
  // The rate the optimizer applied (learning_rate_fn(step) for Adafactor,
  // the optax optimizer's own rate otherwise); 0 for eval steps.
  double learning_rate = 0;
  int64_t target_tokens = 0;  // decoder positions incl. padding
  int64_t input_tokens = 0;   // encoder positions incl. padding
  double accuracy() const { return weight_sum > 0 ? correct / weight_sum : 0; }
  // Cross-entropy + z-loss per non-padding target token, independent of the
  // normalizing factor (t5x's loss_per_nonpadding_target_token).
  double loss_per_nonpadding_target_token = 0;
  // Processes that had a stop signal (SIGTERM, SIGINT: util/system/
  // stop_signals.h) when this step's metrics were summed, counted over the
  // whole run (every data replica and model partition): every process sees
  // the same count for the same step, so all stop after the same one when
  // one of them is asked to (issue 50). 0 or 1 on one process.
  double stop_requests = 0;

  // A step on a GPU leaves its sums on the device, so that the host never
  // waits for a step to finish (t5x's metrics are likewise device arrays
  // until a summary fetches them): `pending` is then a float64 tensor
  // [8] on the device -- loss, cross_ent_loss, z_loss, weight_sum, correct,
  // the numerator of loss_per_nonpadding_target_token, target_tokens,
  // input_tokens and stop_requests ([9] in all), already summed over
  // microbatches and data replicas (stop_requests over every process) -- and
  // the double fields above (but learning_rate) are not final yet. Resolve()
  // copies them (one device-to-host copy) and clears `pending`;
  // MetricsAccumulator resolves all the steps of a summary with one copy.
  // Undefined for steps on the CPU, whose fields are set at once.
  at::Tensor pending;
  bool resolved() const { return !pending.defined(); }
  void Resolve();
  // Sets the fields from host values in `pending`'s order (`values` [9]).
  void SetFromSums(const double* values);
};

class StaticDeviceBatch;  // batch_conversion.h

class Trainer {
 public:
  // num_microbatches (t5x's Trainer.num_microbatches): None or 1 computes
  // the gradient of the whole batch at once; k > 1 splits the batch along
  // its first axis into k equal microbatches and sums their gradients before
  // the update (gradient accumulation, t5x/trainer.py
  // accumulate_grads_microbatched). The loss normalizing factor is computed
  // once over the whole batch and used for every microbatch, so the summed
  // gradient equals the whole batch's for every loss_normalizing_factor.
  // random_seed: every dropout mask of step s is a function of
  // HashSeed(random_seed, s), the dropout call and the element's position in
  // the global batch (kernels/dropout_mask.h): two runs with the same seed
  // compute bitwise-identical losses on the same machine and thread count,
  // and every layout of the run (data replicas, model partitions, ZeRO-3,
  // microbatches, process counts) draws one process's masks. The device is
  // the parameters' (device/device.h): batches
  // are given on the host and copied there (device::ToDevice, without
  // blocking the host), and on a
  // GPU the step's metrics stay there (StepMetrics::pending). The optimizer's statistics are reduced through
  // partitioner.reducer(). The optimizer is initialised for `params` unless it
  // already is (e.g. restored). Throws t5xx::Error for num_microbatches < 1
  // and from optimizer->Init.
  Trainer(const models::BaseTransformerModel& model, models::ParamStore params,
          std::unique_ptr<optim::Optimizer> optimizer, optim::LearningRateSchedule schedule,
          const partitioning::BasePartitioner& partitioner,
          std::optional<int64_t> num_microbatches = std::nullopt, uint64_t random_seed = 0);
  // The same with an Adafactor.
  Trainer(const models::BaseTransformerModel& model, models::ParamStore params,
          optim::Adafactor optimizer, optim::LearningRateSchedule schedule,
          const partitioning::BasePartitioner& partitioner,
          std::optional<int64_t> num_microbatches = std::nullopt, uint64_t random_seed = 0);

  // One training step on a global batch (every process passes the same
  // one; each keeps its data shard's rows, partitioner.ShardBatch); returns
  // the global step's metrics. Its forward, backward and optimizer parts run
  // inside the libtorch user scopes named in step_scopes.h. Throws
  // t5xx::Error when the batch size is not divisible by num_microbatches.
  StepMetrics TrainStep(const models::FeatureBatch& batch);
  // The same on this process's own rows of the global batch (its data
  // shard's batch, read with partitioner.data_shard_info(): global batch
  // size / mesh().data rows). The loss normalizing factor is the global
  // batch's: this process's share summed over the data axis.
  StepMetrics TrainStepOnLocalBatch(const models::FeatureBatch& local_batch);
  // Teacher-forced loss/accuracy without updating (train=false: no dropout),
  // on a global batch / on this process's rows of it.
  StepMetrics EvalStep(const models::FeatureBatch& batch) const;
  StepMetrics EvalStepOnLocalBatch(const models::FeatureBatch& local_batch) const;

  int64_t step() const { return optimizer_->step(); }
  const models::ParamStore& params() const { return params_; }
  const optim::Optimizer& optimizer() const { return *optimizer_; }
  int64_t num_microbatches() const { return num_microbatches_; }
  // Where the parameters, the optimizer state and the steps' work live.
  at::Device device() const { return device_; }
  // Whether steps return their metrics pending (StepMetrics::pending) rather
  // than read: true on a GPU, false on the CPU by default. Setting it on the
  // CPU runs the GPU's path (tests); the values are the same either way.
  bool defer_metrics() const { return defer_metrics_; }
  void set_defer_metrics(bool defer) { defer_metrics_ = defer; }
  // Every parameter and optimizer state array with its global shape, mesh
  // axes and the box this process holds (the partitioner's
  // DescribeVariables of the live train state).
  std::vector<partitioning::VariableInfo> DescribeVariables() const;

 private:
  const models::BaseTransformerModel& model_;
  models::ParamStore params_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  optim::LearningRateSchedule schedule_;
  const partitioning::BasePartitioner& partitioner_;
  int64_t num_microbatches_ = 1;
  uint64_t random_seed_ = 0;
  at::Device device_ = at::kCPU;
  bool defer_metrics_ = false;
  // A GPU's train batches (batch_conversion.h); none on the CPU, where the
  // host rows are used as they are.
  std::shared_ptr<StaticDeviceBatch> static_batch_;
};

}  // namespace t5xx::trainer
