#include "t5xx/trainer/trainer.h"

#include <ATen/core/grad_mode.h>

#include <stdexcept>

#include "t5xx/util/error.h"

namespace t5xx::trainer {
namespace {

StepMetrics ToMetrics(const models::LossOutput& out,
                      const models::FeatureBatch& batch) {
  StepMetrics m;
  m.loss = out.loss.item<double>();
  m.z_loss = out.z_loss.item<double>();
  m.cross_ent_loss = out.cross_ent_loss.item<double>();
  m.weight_sum = out.weight_sum.item<double>();
  m.correct = out.correct.item<double>();
  const at::Tensor& w = batch.count("decoder_loss_weights")
                            ? batch.at("decoder_loss_weights")
                            : batch.at("decoder_target_tokens").gt(0);
  m.loss_per_nonpadding_target_token =
      m.weight_sum > 0
          ? (out.per_token_loss * w.to(at::kFloat)).sum().item<double>() / m.weight_sum
          : 0.0;
  m.target_tokens = batch.at("decoder_target_tokens").numel();
  m.input_tokens = batch.at("encoder_input_tokens").numel();
  return m;
}

}  // namespace

Trainer::Trainer(const models::EncoderDecoderModel& model,
                 models::ParamStore params, optim::Adafactor optimizer,
                 optim::LearningRateSchedule schedule,
                 const partitioning::PjitPartitioner& partitioner,
                 std::optional<int64_t> num_microbatches)
    : Trainer(model, std::move(params), std::make_unique<optim::Adafactor>(std::move(optimizer)),
              std::move(schedule), partitioner, num_microbatches) {}

Trainer::Trainer(const models::EncoderDecoderModel& model,
                 models::ParamStore params, std::unique_ptr<optim::Optimizer> optimizer,
                 optim::LearningRateSchedule schedule,
                 const partitioning::PjitPartitioner& partitioner,
                 std::optional<int64_t> num_microbatches)
    : model_(model),
      params_(std::move(params)),
      optimizer_(std::move(optimizer)),
      schedule_(std::move(schedule)),
      partitioner_(partitioner) {
  Check(!num_microbatches || *num_microbatches == 1,
        "trainer.Trainer.num_microbatches = " +
            std::to_string(num_microbatches.value_or(0)) +
            " is not supported yet (gradient accumulation is planned); use "
            "None or 1");
  if (!optimizer_) throw std::logic_error("Trainer: null optimizer");
  params_.SetRequiresGrad(true);
  if (!optimizer_->initialized()) optimizer_->Init(params_);
}

StepMetrics Trainer::TrainStep(const models::FeatureBatch& global_batch) {
  models::FeatureBatch batch = partitioner_.ShardBatch(global_batch);
  params_.ZeroGrad();
  models::LossOutput out = model_.Loss(params_, batch, /*train=*/true);
  out.loss.backward();
  partitioner_.ReduceGradients(params_);
  const double lr = optimizer_->Apply(params_, schedule_(optimizer_->step()));
  params_.ZeroGrad();
  StepMetrics m = ToMetrics(out, batch);
  m.learning_rate = lr;
  return m;
}

StepMetrics Trainer::EvalStep(const models::FeatureBatch& global_batch) const {
  at::NoGradGuard no_grad;
  models::FeatureBatch batch = partitioner_.ShardBatch(global_batch);
  return ToMetrics(model_.Loss(params_, batch, /*train=*/false), batch);
}

}  // namespace t5xx::trainer
