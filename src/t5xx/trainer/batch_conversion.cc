// Bridges seqio batches (framework-free int32 vectors) to model tensors -- the
// implementation of batch_conversion.h.
#include "t5xx/trainer/batch_conversion.h"

#include <iterator>

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

const models::FeatureBatch& StaticDeviceBatch::Fill(const models::FeatureBatch& host) {
  for (auto it = buffers_.begin(); it != buffers_.end();) {  // features no longer given
    it = host.count(it->first) ? std::next(it) : buffers_.erase(it);
  }
  for (const auto& [name, t] : host) {
    at::Tensor& buffer = buffers_[name];
    if (!buffer.defined() || buffer.sizes() != t.sizes() || buffer.scalar_type() != t.scalar_type()) {
      buffer = at::empty(t.sizes(), t.options().device(device_));
      ++allocations_;
    }
    if (t.is_cpu() && device_.is_cuda()) {
      buffer.copy_(t.is_pinned() ? t : t.contiguous().pin_memory(), /*non_blocking=*/true);
    } else {
      buffer.copy_(t);
    }
  }
  return buffers_;
}

}  // namespace t5xx::trainer
