// See memory.h.
#include "t5xx/run/memory.h"

#include <algorithm>

#include "t5xx/models/flops.h"
#include "t5xx/run/device_setup.h"
#include "t5xx/util/error.h"

namespace t5xx::run {

models::MemoryPlan PlanMemory(const TrainSetup& s, const models::BaseTransformerModel& model,
                              const std::vector<std::vector<int64_t>>& shapes,
                              int64_t data_parallel) {
  models::OptimizerSlots slots;
  if (s.optimizer.kind == optim::OptimizerConfig::Kind::kAdafactor) {
    slots.factored = s.optimizer.adafactor.factored;
    slots.min_dim_size_to_factor = s.optimizer.adafactor.min_dim_size_to_factor;
    slots.momentum = s.optimizer.adafactor.beta1.has_value();
  } else {
    slots.kind = models::OptimizerSlots::Kind::kAdamW;
  }
  const int64_t batch =
      s.train_dataset.batch_size / std::max<int64_t>(1, data_parallel) / s.num_microbatches.value_or(1);
  const std::map<std::string, int64_t> lens =
      model.ModelFeatureLengths(s.train_dataset.task_feature_lengths);
  if (s.model.kind == ModelKind::kEncoderDecoder) {
    return models::PlanEncoderDecoder(s.model.t5_config, shapes, slots, batch,
                                      lens.at("encoder_input_tokens"),
                                      lens.at("decoder_target_tokens"));
  }
  return models::PlanDecoderOnly(s.model.decoder_only_config, shapes, slots, batch,
                                 lens.at("decoder_target_tokens"));
}

void CheckMemoryPlan(const models::MemoryPlan& plan, int64_t available, int64_t allocated) {
  T5XX_CHECK(available < 0 || plan.total() - allocated <= available,
             "the memory plan needs " + std::to_string(plan.total() / (1024 * 1024)) +
                 " MiB per process (" + plan.ToString() + ") but only " +
                 std::to_string(available / (1024 * 1024)) +
                 " MiB are available; lower train/utils.DatasetConfig.batch_size (BATCH_SIZE) or "
                 "the task_feature_lengths (TASK_FEATURE_LENGTHS), raise "
                 "trainer.Trainer.num_microbatches, set remat_policy = 'full' on the network "
                 "config (it helps most with many layers), or use a smaller model");
}

std::optional<std::string> MemoryProblemBeforeAllocation(
    const TrainSetup& s, const models::BaseTransformerModel& model, at::Device device) {
  try {
    models::MemoryPlan plan = PlanMemory(s, model, {});
    const double param_elements =
        (s.model.kind == ModelKind::kEncoderDecoder
             ? models::EncoderDecoderForwardFlops(s.model.t5_config, 1, 1)
             : models::DecoderOnlyForwardFlops(s.model.decoder_only_config, 1)) /
        2;
    plan.parameters = plan.gradients = models::SaturatingBytes(4 * param_elements);
    CheckMemoryPlan(plan, AvailableMemoryBytes(device), /*allocated=*/0);
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace t5xx::run
