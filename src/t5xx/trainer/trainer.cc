// t5x.trainer.Trainer -- the implementation of trainer.h.
#include "t5xx/trainer/trainer.h"

#include <ATen/core/grad_mode.h>

#include <stdexcept>

#include "t5xx/trainer/checkpoint_restore.h"  // SlotShapes
#include "t5xx/util/hash.h"  // HashSeed
#include "t5xx/util/error.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::trainer {
namespace {

// Purpose tag of the dropout generators (HashSeed's third argument).
constexpr uint64_t kDropoutPurpose = 0x64726f70;  // "drop"

StepMetrics ToMetrics(const models::LossOutput& out, const models::FeatureBatch& batch) {
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
  auto enc = batch.find("encoder_input_tokens");
  m.input_tokens = enc == batch.end() ? 0 : enc->second.numel();
  return m;
}

// Sums the additive fields of b into a (the ratios are recomputed by the
// caller from the sums).
void Accumulate(StepMetrics& a, const StepMetrics& b) {
  a.loss += b.loss;
  a.z_loss += b.z_loss;
  a.cross_ent_loss += b.cross_ent_loss;
  a.correct += b.correct;
  a.target_tokens += b.target_tokens;
  a.input_tokens += b.input_tokens;
  // loss_per_nonpadding_target_token is a weighted mean: keep its numerator.
  a.loss_per_nonpadding_target_token += b.loss_per_nonpadding_target_token * b.weight_sum;
  a.weight_sum += b.weight_sum;
}

// The global step's metrics from this replica's sums (with
// loss_per_nonpadding_target_token as its numerator): summed over the data
// replicas by the partitioner, then the ratio.
void FinishMetrics(StepMetrics& m, const partitioning::BasePartitioner& partitioner) {
  at::Tensor sums = at::tensor({m.loss, m.cross_ent_loss, m.z_loss, m.weight_sum, m.correct,
                                m.loss_per_nonpadding_target_token,
                                static_cast<double>(m.target_tokens),
                                static_cast<double>(m.input_tokens)},
                               at::kDouble);
  partitioner.ReduceMetrics(sums);
  const double* v = sums.data_ptr<double>();
  m.loss = v[0];
  m.cross_ent_loss = v[1];
  m.z_loss = v[2];
  m.weight_sum = v[3];
  m.correct = v[4];
  m.loss_per_nonpadding_target_token = m.weight_sum > 0 ? v[5] / m.weight_sum : 0.0;
  m.target_tokens = static_cast<int64_t>(v[6]);
  m.input_tokens = static_cast<int64_t>(v[7]);
}

}  // namespace

Trainer::Trainer(const models::BaseTransformerModel& model, models::ParamStore params,
                 optim::Adafactor optimizer, optim::LearningRateSchedule schedule,
                 const partitioning::BasePartitioner& partitioner,
                 std::optional<int64_t> num_microbatches, uint64_t random_seed)
    : Trainer(model, std::move(params), std::make_unique<optim::Adafactor>(std::move(optimizer)),
              std::move(schedule), partitioner, num_microbatches, random_seed) {}

Trainer::Trainer(const models::BaseTransformerModel& model, models::ParamStore params,
                 std::unique_ptr<optim::Optimizer> optimizer, optim::LearningRateSchedule schedule,
                 const partitioning::BasePartitioner& partitioner,
                 std::optional<int64_t> num_microbatches, uint64_t random_seed)
    : model_(model),
      params_(std::move(params)),
      optimizer_(std::move(optimizer)),
      schedule_(std::move(schedule)),
      partitioner_(partitioner),
      num_microbatches_(num_microbatches.value_or(1)),
      random_seed_(random_seed) {
  T5XX_CHECK(num_microbatches_ >= 1, "trainer.Trainer.num_microbatches must be None or >= 1, got " +
                                    std::to_string(num_microbatches_));
  if (!optimizer_) throw std::logic_error("Trainer: null optimizer");
  params_.SetRequiresGrad(true);
  // The optimizer's statistics go through the partitioner's reducer, which
  // knows how the parameters are split.
  optimizer_->set_reducer(partitioner_.reducer());
  if (!optimizer_->initialized()) optimizer_->Init(params_);
}

// The global batch's loss normalizing factor from this process's rows: the
// additive factors (token counts, per-sequence weight sums) summed over the
// data axis; a constant or None is the same everywhere.
static double GlobalNormalizingFactor(const models::BaseTransformerModel& model,
                               const models::FeatureBatch& local,
                               const partitioning::BasePartitioner& partitioner) {
  const models::NormalizedLossWeights w = model.LossWeights(local);
  const auto kind = model.loss_normalizing_factor().kind;
  using Kind = models::LossNormalizingFactor::Kind;
  if (kind == Kind::kNone || kind == Kind::kConstant) return w.factor;
  at::Tensor sum = at::tensor({w.factor}, at::kDouble);
  partitioner.ReduceMetrics(sum);
  return sum.item<double>();
}

StepMetrics Trainer::TrainStep(const models::FeatureBatch& global_batch) {
  return TrainStepOnLocalBatch(partitioner_.ShardBatch(global_batch));
}

StepMetrics Trainer::TrainStepOnLocalBatch(const models::FeatureBatch& batch) {
  const int64_t step = optimizer_->step();
  const int64_t k = num_microbatches_;
  const int64_t batch_size = batch.at("decoder_target_tokens").size(0);
  T5XX_CHECK(batch_size % k == 0, "trainer.Trainer.num_microbatches = " + std::to_string(k) +
                                 " does not divide the batch of " + std::to_string(batch_size) +
                                 " sequences (per process); choose a divisor of the batch size");
  // One normalizing factor for the whole global batch (see the header), so
  // that every data replica's loss and gradient are its share of the
  // global ones.
  const double factor = GlobalNormalizingFactor(model_, batch, partitioner_);
  params_.ZeroGrad();
  StepMetrics m;
  const int64_t mb = batch_size / k;
  for (int64_t i = 0; i < k; ++i) {
    models::FeatureBatch micro;
    if (k == 1) {
      micro = batch;
    } else {
      for (const auto& [name, t] : batch) micro[name] = t.narrow(0, i * mb, mb);
    }
    at::Generator rng = compat::MakeCpuGenerator(HashSeed(
        random_seed_, static_cast<uint64_t>(step) * static_cast<uint64_t>(k) + i,
        kDropoutPurpose));
    models::LossOutput out = model_.Loss(params_, micro, /*train=*/true, &rng, factor);
    partitioner_.BeforeBackward(params_, i == k - 1);
    out.loss.backward();  // accumulates into .grad across microbatches
    Accumulate(m, ToMetrics(out, micro));
  }
  FinishMetrics(m, partitioner_);
  partitioner_.ReduceGradients(params_);
  m.learning_rate = optimizer_->Apply(params_, schedule_(step));
  params_.ZeroGrad();
  return m;
}

std::vector<partitioning::VariableInfo> Trainer::DescribeVariables() const {
  return partitioner_.DescribeVariables(params_, SlotShapes(*optimizer_));
}

StepMetrics Trainer::EvalStep(const models::FeatureBatch& global_batch) const {
  return EvalStepOnLocalBatch(partitioner_.ShardBatch(global_batch));
}

StepMetrics Trainer::EvalStepOnLocalBatch(const models::FeatureBatch& batch) const {
  at::NoGradGuard no_grad;
  StepMetrics m = ToMetrics(
      model_.Loss(params_, batch, /*train=*/false, nullptr,
                  GlobalNormalizingFactor(model_, batch, partitioner_)),
      batch);
  m.loss_per_nonpadding_target_token *= m.weight_sum;  // back to its numerator
  FinishMetrics(m, partitioner_);
  return m;
}

}  // namespace t5xx::trainer
