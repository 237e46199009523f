// t5x.trainer.Trainer -- the implementation of trainer.h.
#include "t5xx/trainer/trainer.h"

#include <ATen/core/grad_mode.h>
#include <ATen/record_function.h>

#include <stdexcept>
#include <vector>

#include "t5xx/device/device.h"
#include "t5xx/kernels/dropout_mask.h"
#include "t5xx/trainer/batch_conversion.h"
#include "t5xx/trainer/checkpoint_restore.h"  // SlotShapes
#include "t5xx/trainer/step_scopes.h"
#include "t5xx/util/hash.h"  // HashSeed
#include "t5xx/util/torch_compat.h"
#include "t5xx/util/error.h"
#include "t5xx/util/system/stop_signals.h"

namespace t5xx::trainer {
namespace {

// Purpose tag of the dropout generators (HashSeed's third argument).
constexpr uint64_t kDropoutPurpose = 0x64726f70;  // "drop"

// The additive sums of one forward pass on its device, float64 [6]: loss,
// cross_ent_loss, z_loss, weight_sum, correct, and the numerator of
// loss_per_nonpadding_target_token (cross-entropy + z-loss summed over
// non-padding target tokens, independent of the normalizing factor). No
// host synchronisation.
at::Tensor StepSums(const models::LossOutput& out, const models::FeatureBatch& batch) {
  const at::Tensor& w = batch.count("decoder_loss_weights")
                            ? batch.at("decoder_loss_weights")
                            : batch.at("decoder_target_tokens").gt(0);
  const at::Tensor per_token = (out.per_token_loss.detach() * w.to(at::kFloat)).sum();
  std::vector<at::Tensor> parts;
  for (const at::Tensor& t : {out.loss, out.cross_ent_loss, out.z_loss, out.weight_sum,
                              out.correct, per_token}) {
    parts.push_back(t.detach().to(at::kDouble).reshape({1}));
  }
  return at::cat(parts);
}

// The global step's metrics from this replica's sums [6] and token counts:
// summed over the data replicas by the partitioner (on the sums' device),
// then read at once, or with `defer` left pending (StepMetrics).
StepMetrics FinishMetrics(const at::Tensor& sums, int64_t target_tokens, int64_t input_tokens,
                          const partitioning::BasePartitioner& partitioner, bool defer,
                          bool stop_requested) {
  const at::Tensor counts =
      at::tensor({static_cast<double>(target_tokens), static_cast<double>(input_tokens),
                  stop_requested ? 1.0 : 0.0},
                 at::kDouble);
  at::Tensor all = at::cat({sums, device::ToDevice(counts, sums.device())});
  partitioner.ReduceMetrics(all);  // over the data replicas
  if (partitioner.mesh().model > 1) {
    // The stop request over the model partitions too (their metrics are
    // the same; only this count is summed).
    at::Tensor stop = all.narrow(0, 8, 1).clone();
    partitioner.ReduceOverModel(stop);
    all.narrow(0, 8, 1).copy_(stop);
  }
  StepMetrics m;
  m.target_tokens = target_tokens;  // (the global values once resolved)
  m.input_tokens = input_tokens;
  m.pending = all;
  if (!defer) m.Resolve();
  return m;
}

int64_t InputTokens(const models::FeatureBatch& batch) {
  auto enc = batch.find("encoder_input_tokens");
  return enc == batch.end() ? 0 : enc->second.numel();
}

}  // namespace

void StepMetrics::SetFromSums(const double* v) {
  loss = v[0];
  cross_ent_loss = v[1];
  z_loss = v[2];
  weight_sum = v[3];
  correct = v[4];
  loss_per_nonpadding_target_token = weight_sum > 0 ? v[5] / weight_sum : 0.0;
  target_tokens = static_cast<int64_t>(v[6]);
  input_tokens = static_cast<int64_t>(v[7]);
  stop_requests = v[8];
}

void StepMetrics::Resolve() {
  if (!pending.defined()) return;
  const at::Tensor host = pending.to(at::kCPU).contiguous();
  SetFromSums(host.data_ptr<double>());
  pending = at::Tensor();
}

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
  if (!params_.params().empty()) device_ = params_.params().front().value.device();
  defer_metrics_ = !device_.is_cpu();
  if (!device_.is_cpu()) static_batch_ = std::make_shared<StaticDeviceBatch>(device_);
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
  // The rows go to the device now (without blocking the host), into
  // buffers that keep their addresses from step to step (StaticDeviceBatch);
  // the host's copy gave the normalizing factor above.
  const models::FeatureBatch on_device =
      static_batch_ ? static_batch_->Fill(batch) : ToDevice(batch, device_);
  params_.ZeroGrad();
  at::Tensor sums;
  const int64_t mb = batch_size / k;
  for (int64_t i = 0; i < k; ++i) {
    models::FeatureBatch micro;
    if (k == 1) {
      micro = on_device;
    } else {
      for (const auto& [name, t] : on_device) micro[name] = t.narrow(0, i * mb, mb);
    }
    // Dropout masks are a function of position (kernels/dropout_mask.h): one
    // CPU generator per step hands each dropout call its key, the same for
    // every microbatch and process, and each example's row in the global
    // batch (this data replica's rows, this microbatch's within them) picks
    // its mask -- so every layout draws one process's masks.
    at::Generator rng = compat::MakeCpuGenerator(
        HashSeed(random_seed_, static_cast<uint64_t>(step), kDropoutPurpose));
    const kernels::DropoutRowScope rows(partitioner_.data_shard_info().index * batch_size +
                                        i * mb);
    models::LossOutput out;
    {
      RECORD_USER_SCOPE(kForwardScope);
      out = model_.Loss(params_, micro, /*train=*/true, &rng, factor);
    }
    {
      RECORD_USER_SCOPE(kBackwardScope);
      partitioner_.BeforeBackward(params_, i == k - 1);
      out.loss.backward();  // accumulates into .grad across microbatches
    }
    const at::Tensor s = StepSums(out, micro);
    sums = sums.defined() ? sums + s : s;
  }
  // A stop signal that reached this process, summed with the step's metrics
  // so that every process learns of it at this step (StepMetrics).
  StepMetrics m = FinishMetrics(sums, batch.at("decoder_target_tokens").numel(),
                                InputTokens(batch), partitioner_, defer_metrics_,
                                StopSignalReceived() != 0);
  {
    RECORD_USER_SCOPE(kOptimizerScope);
    partitioner_.ReduceGradients(params_);
    m.learning_rate = optimizer_->Apply(params_, schedule_(step));
  }
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
  const double factor = GlobalNormalizingFactor(model_, batch, partitioner_);
  const models::FeatureBatch on_device = ToDevice(batch, device_);
  const models::LossOutput out =
      model_.Loss(params_, on_device, /*train=*/false, nullptr, factor);
  return FinishMetrics(StepSums(out, on_device), batch.at("decoder_target_tokens").numel(),
                       InputTokens(batch), partitioner_, defer_metrics_, false);
}

}  // namespace t5xx::trainer
