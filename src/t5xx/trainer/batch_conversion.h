// Bridges seqio batches (framework-free int32 vectors) to model tensors on
// the run's device.
#pragma once

#include "t5xx/data/feature_converters/feature_converters.h"
#include "t5xx/models/networks/network.h"

namespace t5xx::trainer {

// Copies every feature of `batch` into a tensor [batch_size, length]:
// decoder_loss_weights as float32, all other features as int64.
models::FeatureBatch ToFeatureBatch(const seqio::Batch& batch);

// Every feature of `batch` on `device` (device::ToDevice: host rows bound
// for a GPU go through pinned memory without blocking the host); the batch
// itself when it is there already.
models::FeatureBatch ToDevice(const models::FeatureBatch& batch, at::Device device);

// Device buffers that keep their addresses from step to step, as a captured
// CUDA graph needs its inputs: Fill copies each feature of a host batch into
// its buffer on `device` -- allocated for the first batch, and again only
// when a feature's shape or dtype changes -- without blocking the host on a
// GPU (pinned staging, as device::ToDevice), and returns the buffers. Work
// queued later on the same stream sees the new values; work queued earlier
// (the previous step) has read the old ones first.
class StaticDeviceBatch {
 public:
  explicit StaticDeviceBatch(at::Device device) : device_(device) {}
  const models::FeatureBatch& Fill(const models::FeatureBatch& host);
  // Buffers allocated so far (one per feature, more when shapes changed).
  int64_t allocations() const { return allocations_; }

 private:
  at::Device device_;
  models::FeatureBatch buffers_;
  int64_t allocations_ = 0;
};

}  // namespace t5xx::trainer
