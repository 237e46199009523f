// Bridges seqio batches (framework-free int32 vectors) to model tensors -- the
// implementation of batch_conversion.h.
#include "t5xx/trainer/batch_conversion.h"

#include "t5xx/device/device.h"

namespace t5xx::trainer {

models::FeatureBatch ToFeatureBatch(const seqio::Batch& batch) {
  models::FeatureBatch out;
  for (const auto& [name, values] : batch.features) {
    const int64_t len = batch.lengths.at(name);
    at::Tensor t = at::from_blob(const_cast<int32_t*>(values.data()),
                                 {batch.batch_size, len}, at::kInt);
    out[name] = name == "decoder_loss_weights" ? t.to(at::kFloat)
                                               : t.to(at::kLong);
  }
  return out;
}

models::FeatureBatch ToDevice(const models::FeatureBatch& batch, at::Device device) {
  models::FeatureBatch out;
  for (const auto& [name, t] : batch) out[name] = device::ToDevice(t, device);
  return out;
}

}  // namespace t5xx::trainer
