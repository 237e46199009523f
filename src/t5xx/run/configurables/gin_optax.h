// optax's configurables as t5x configs reach them (gin_optax.cc): the
// optimizers t5x.optimizers.<name> (OptaxWrapper) and optax.<name>, the
// transformations for optimizers.chain, and optax's schedules -- each with
// optax 0.2.3's parameter names and defaults. Used by gin_optimizer.cc.
#pragma once

#include <string>
#include <vector>

#include "t5xx/config/config.h"
#include "t5xx/config/registry.h"
#include "t5xx/optim/optax_optimizers.h"

namespace t5xx::run {

void RegisterOptaxConfigurables(gin::Registry& registry);

// The optax optimizer optimizer_def names: `name` is t5x.optimizers.<x>
// (wrapped) or t5x.optimizers.chain, called in `scope`. nullopt when `name`
// is neither (e.g. adafactor.Adafactor). Throws t5xx::Error naming the gin
// binding for an unsupported transformation (listing the supported ones),
// a refused option (mask, optax.adafactor) or a value optax would reject.
std::optional<optim::OptaxConfig> ReadOptaxOptimizer(gin::Config& config, const std::string& name,
                                                     const std::string& scope);

}  // namespace t5xx::run
