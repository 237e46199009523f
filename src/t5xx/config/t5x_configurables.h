// The t5x / seqio configurables that t5xx understands, with t5x's full Python
// names, parameter types and defaults (t5x at the commit noted in
// shared/reference/t5x.md). Only parameters t5xx implements are registered;
// binding any other parameter is an error with a "did you mean" hint.
//
// Registered (see t5x_configurables.cc for the full list and each
// parameter): the models (t5x.models.EncoderDecoderModel, DecoderOnlyModel)
// and their networks and configs; the optimizers (t5x.adafactor.*,
// t5x.optimizers.{adamw, chain}, optax.*) and
// t5x.utils.create_learning_rate_scheduler; t5x.partitioning.*;
// t5x.utils.{DatasetConfig, CheckpointConfig, SaveCheckpointConfig};
// t5x.trainer.{Trainer, EarlyStoppingAction, TerminateOnNanAction};
// __main__.train and t5x.gin_utils.summarize_gin_config; and for tasks
// defined in gin, seqio.{Task, Mixture, Feature, vocabularies, sources},
// tf.data.Dataset.sample_from_datasets, t5's postprocessors and metrics,
// and t5xx.seqio.register. Preprocessors are registered from the seqio
// PreprocessorRegistry by cli/gin_tasks.cc.
#pragma once

#include "t5xx/config/registry.h"

namespace t5xx::gin {

// Adds the configurables above. Throws t5xx::Error if any is already present.
void RegisterT5xConfigurables(Registry& registry);

}  // namespace t5xx::gin
