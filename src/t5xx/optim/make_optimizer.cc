// The optimizer built from what MODEL's optimizer_def configures -- the
// implementation of make_optimizer.h.
#include "t5xx/optim/make_optimizer.h"

namespace t5xx::optim {

std::unique_ptr<Optimizer> MakeOptimizer(const OptimizerConfig& config) {
  if (config.kind == OptimizerConfig::Kind::kMulti) {
    std::vector<std::pair<ParamTraversal, std::unique_ptr<Optimizer>>> parts;
    for (const MultiOptimizerPart& part : config.multi) {
      parts.emplace_back(part.traversal, MakeOptimizer(part.optimizer));
    }
    return std::make_unique<MultiOptimizer>(std::move(parts));
  }
  if (config.kind == OptimizerConfig::Kind::kOptax) {
    return std::make_unique<OptaxOptimizer>(config.optax);
  }
  return std::make_unique<Adafactor>(config.adafactor);
}

}  // namespace t5xx::optim
