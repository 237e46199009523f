// The optax optimizers t5x exposes through its OptaxWrapper
// (t5x/optimizers.py): t5x configs write
//
//   optimizer_def = @optimizers.adamw()            # optax.adamw, wrapped
//   optimizers.adamw.learning_rate = 1e-4          # a float or a schedule
//
// or a chain of optax transformations:
//
//   optimizer_def = @optimizers.chain()
//   optimizers.chain.transformations = [@optax.clip(), @optax.lion()]
//   optax.lion.learning_rate = @optax.warmup_cosine_decay_schedule()
//
// Supported: the optimizers adam, adamw, lion, sgd, rmsprop, adagrad, lamb
// (wrapped as optimizers.<name> or in a chain as optax.<name>) and the
// transformations clip, clip_by_global_norm, add_decayed_weights,
// scale_by_schedule, scale (in a chain); learning rates are floats, optax
// schedules or utils.create_learning_rate_scheduler (optax/schedules.h).
// Their math and defaults: optax/aliases.h and optax/transforms.h.
//
// The learning rate is the optimizer's own, evaluated at the count of its
// scale_by_learning_rate state (which starts at 0, as step() does unless the
// chain restarts it); the trainer's learning_rate_fn is ignored, as in t5x's
// OptaxWrapper. Apply returns the rate the last scale_by_learning_rate used
// (0 when there is none), and the trainer logs that.
//
// Checkpoint layout is flax's state dict of the optax state, empty states
// dropped (OptaxWrapper.state_dict). For a wrapped optimizer the state is
// optax's chain tuple, so the j-th primitive's fields sit at
//   param_states.<j>.<field>[.<param path>]
// e.g. adamw: param_states.0.count (int32 0-d, inline), param_states.0.mu.*
// (mu_dtype), param_states.0.nu.* (float32), param_states.2.count (only with
// a schedule); sgd with momentum: param_states.0.trace.*; rmsprop:
// param_states.0.nu.* (centered: also .mu.*), param_states.2.trace.* with
// momentum; adagrad: param_states.0.sum_of_squares.*. For
// @optimizers.chain() the same under param_states.<i>. for the i-th
// transformation, and a single transformation's fields directly under
// param_states.<i>. (scale_by_schedule: param_states.<i>.count).
//
// Shardable: global and per-parameter norms go through the Reducer
// (partitioning/collectives/reducer.h); the rest is element-wise.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "t5xx/optim/optax/aliases.h"
#include "t5xx/optim/optimizer.h"

namespace t5xx::optim {

using optax::OptaxTransform;

struct OptaxConfig {
  // false: @optimizers.<name>() (one optimizer, state at param_states.*);
  // true: @optimizers.chain(transformations=[...]) (param_states.<i>.*).
  bool chained = false;
  std::vector<OptaxTransform> transforms;
};

class OptaxOptimizer : public Optimizer {
 public:
  // Throws t5xx::Error for an empty chain, a non-chained config that is not
  // exactly one optimizer, or a bad option value (named by its gin key).
  explicit OptaxOptimizer(OptaxConfig config);

  std::string gin_name() const override;
  void Init(const models::ParamStore& params) override;
  double Apply(models::ParamStore& params, double learning_rate) override;
  std::vector<StateArray> StateArrays() const override;

  const OptaxConfig& config() const { return config_; }

 private:
  struct Stage {
    std::string path;  // state path prefix, e.g. "param_states.1.0."
    optax::Primitive primitive;
    optax::PrimitiveState state;
  };
  OptaxConfig config_;
  std::vector<Stage> stages_;       // every primitive, in order
  std::vector<std::string> names_;  // parameter paths
};

}  // namespace t5xx::optim
