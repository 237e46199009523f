// The optax optimizers t5x exposes through its OptaxWrapper
// (t5x/optimizers.py) -- the implementation of optax_optimizers.h.
#include "t5xx/optim/optax_optimizers.h"

#include <ATen/core/grad_mode.h>

#include <stdexcept>

#include "t5xx/util/error.h"

namespace t5xx::optim {

OptaxOptimizer::OptaxOptimizer(OptaxConfig config) : config_(std::move(config)) {
  T5XX_CHECK(!config_.transforms.empty(),
             "optimizers.chain.transformations is empty; list e.g. "
             "[@optax.clip_by_global_norm(), @optax.adamw()]");
  if (!config_.chained) {
    T5XX_CHECK(config_.transforms.size() == 1 && config_.transforms[0].is_chain(),
               "an unchained optax optimizer must be exactly one of " +
                   optax::SupportedOptaxNames(true) + " (use optimizers.chain)");
  }
  for (size_t i = 0; i < config_.transforms.size(); ++i) {
    const OptaxTransform& t = config_.transforms[i];
    t.Validate();
    const std::string base =
        "param_states." + (config_.chained ? std::to_string(i) + "." : std::string());
    const std::vector<optax::Primitive> prims = t.Expand();
    for (size_t j = 0; j < prims.size(); ++j) {
      stages_.push_back({t.is_chain() ? base + std::to_string(j) + "." : base, prims[j], {}});
    }
  }
}

std::string OptaxOptimizer::gin_name() const {
  return config_.chained ? "optimizers.chain"
                         : "optimizers." + optax::OptaxName(config_.transforms[0].kind);
}

void OptaxOptimizer::Init(const models::ParamStore& params) {
  names_.clear();
  for (const auto& p : params.params()) names_.push_back(p.name);
  for (Stage& s : stages_) s.state = optax::InitPrimitive(s.primitive, params);
  step_ = 0;
  initialized_ = true;
}

double OptaxOptimizer::Apply(models::ParamStore& params, double /*learning_rate*/) {
  if (!initialized_) throw std::logic_error(gin_name() + ": Apply before Init");
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> updates;
  for (auto& p : params.params()) {
    const at::Tensor& g = p.value.grad();
    if (!g.defined()) {
      throw std::logic_error(gin_name() + ": parameter " + p.name + " has no gradient");
    }
    updates.push_back(g.to(at::kFloat));
  }
  double applied_lr = 0;
  for (Stage& s : stages_) {
    const std::optional<double> lr =
        optax::ApplyPrimitive(s.primitive, s.state, updates, params, names_, *reducer_);
    if (lr) applied_lr = *lr;
  }
  for (size_t k = 0; k < updates.size(); ++k) params.params()[k].value.add_(updates[k]);
  ++step_;
  return applied_lr;
}

std::vector<StateArray> OptaxOptimizer::StateArrays() const {
  std::vector<StateArray> out;
  for (const Stage& s : stages_) {
    if (s.state.count.defined()) out.push_back({s.path + "count", s.state.count, true});
    for (const auto& [field, tensors] : s.state.slots) {
      for (size_t k = 0; k < names_.size(); ++k) {
        out.push_back({s.path + field + "." + names_[k], tensors[k], false});
      }
    }
  }
  return out;
}

}  // namespace t5xx::optim
