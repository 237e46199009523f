// What MODEL/models.EncoderDecoderModel.optimizer_def configures, and the
// optimizer built from it (read from gin by src/t5xx/run/configurables/gin_optimizer.cc).
#pragma once

#include <memory>
#include <vector>

#include "t5xx/optim/adafactor.h"
#include "t5xx/optim/multi_optimizer.h"
#include "t5xx/optim/optax_optimizers.h"
#include "t5xx/optim/optimizer.h"

namespace t5xx::optim {

struct MultiOptimizerPart;

struct OptimizerConfig {
  enum class Kind {
    kAdafactor,  // @adafactor.Adafactor()
    kOptax,      // @optimizers.adamw() or @optimizers.chain()
    kMulti,      // @optimizers.MultiOptimizer()
  };
  Kind kind = Kind::kAdafactor;
  AdafactorConfig adafactor;  // kAdafactor
  OptaxConfig optax;          // kOptax
  // kMulti: traversals_and_optimizers (each an Adafactor or optax config).
  std::vector<MultiOptimizerPart> multi;
};

struct MultiOptimizerPart {
  ParamTraversal traversal;
  OptimizerConfig optimizer;
};

// Throws t5xx::Error for bad option values (see AdafactorConfig::Validate,
// OptaxOptimizer).
std::unique_ptr<Optimizer> MakeOptimizer(const OptimizerConfig& config);

}  // namespace t5xx::optim
