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

}  // namespace t5xx::trainer
