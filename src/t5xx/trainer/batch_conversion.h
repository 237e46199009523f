// Bridges seqio batches (framework-free int32 vectors) to model tensors.
#pragma once

#include "t5xx/data/feature_converters.h"
#include "t5xx/models/network.h"

namespace t5xx::trainer {

// Copies every feature of `batch` into a tensor [batch_size, length]:
// decoder_loss_weights as float32, all other features as int64.
models::FeatureBatch ToFeatureBatch(const seqio::Batch& batch);

}  // namespace t5xx::trainer
