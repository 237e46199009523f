// Building the model a run configures (t5x's train(): model =
// gin-configured MODEL) and its parameters.
#pragma once

#include <cstdint>
#include <memory>

#include "t5xx/models/base_model.h"
#include "t5xx/partitioning/base_partitioner.h"
#include "t5xx/run/train_config.h"

namespace t5xx::run {

// models::EncoderDecoderModel(network.Transformer(T5Config)) or
// DecoderOnlyModel(DecoderWrapper(TransformerConfig)) with the loss options
// and decode_fn (the EOS id stays 1 until the caller sets the vocabulary's).
// Cheap: no parameters are allocated. Throws t5xx::Error for an invalid
// network config.
std::unique_ptr<models::BaseTransformerModel> CreateModel(const ModelConfig& config);

// model.InitParams(seed) (float32, t5x's initialisers), or with a
// partitioner only this process's pieces of it (partitioning::
// InitPlacedParams: never more than one whole parameter at a time); an
// allocation failure is a t5xx::Error that says to use a smaller model.
// uninitialized: allocated, values left unset (for a checkpoint to fill:
// models::UninitializedPlacement).
models::ParamStore InitParams(const models::BaseTransformerModel& model, uint64_t seed,
                              partitioning::BasePartitioner* partitioner = nullptr,
                              bool uninitialized = false);

}  // namespace t5xx::run
