// The t5x / seqio configurables that t5xx understands, with t5x's full Python
// names, parameter types and defaults (t5x at the commit noted in
// shared/reference/t5x.md). Only parameters t5xx implements are registered;
// binding any other parameter is an error with a "did you mean" hint.
//
// Registered: t5x.models.EncoderDecoderModel, t5x.examples.t5.network.{Transformer,
// T5Config}, seqio.SentencePieceVocabulary, t5x.adafactor.{Adafactor,
// standard_logical_factor_rules}, t5x.partitioning.{PjitPartitioner,
// standard_logical_axis_rules}, t5x.utils.{DatasetConfig, CheckpointConfig,
// SaveCheckpointConfig, create_learning_rate_scheduler}, t5x.trainer.Trainer,
// t5x.gin_utils.summarize_gin_config, __main__.train.
#pragma once

#include "t5xx/config/registry.h"

namespace t5xx::gin {

// Adds the configurables above. Throws t5xx::Error if any is already present.
void RegisterT5xConfigurables(Registry& registry);

}  // namespace t5xx::gin
