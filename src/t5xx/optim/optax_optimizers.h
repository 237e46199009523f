// The optax optimizers t5x exposes through its OptaxWrapper
// (t5x/optimizers.py): t5x configs write
//
//   optimizer_def = @optimizers.adamw()            # optax.adamw, wrapped
//   optimizers.adamw.learning_rate = 1e-4          # or @utils.create_learning_rate_scheduler()
//
// or a chain of optax transformations:
//
//   optimizer_def = @optimizers.chain()
//   optimizers.chain.transformations = [@optax.clip_by_global_norm(), @optax.adamw()]
//   optax.clip_by_global_norm.max_norm = 1.0
//
// Supported transformations: optax.adamw, optax.clip_by_global_norm,
// optax.clip (t5x's stock AdamW configs use these).
//
// optax.adamw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0,
// mu_dtype=None, weight_decay=1e-4, mask=None, nesterov=False) is
// chain(scale_by_adam, add_decayed_weights, scale_by_learning_rate); per
// parameter p with incoming update g and count c (0-based step):
//   mu = (1-b1)*g + b1*mu,   nu = (1-b2)*g^2 + b2*nu,   c' = c + 1
//   mu_hat = mu / (1 - b1^c')
//            (nesterov: b1*mu/(1 - b1^(c'+1)) + (1-b1)*g/(1 - b1^c'))
//   u = mu_hat / (sqrt(nu / (1 - b2^c') + eps_root) + eps) + weight_decay*p
//   p -= lr(c) * u
// clip_by_global_norm(max_norm): g *= max_norm / ||g||_2 when ||g||_2 >=
// max_norm (norm over all parameters). clip(max_delta): g = clamp(g, +-max).
//
// The learning rate is adamw's own (a float or a create_learning_rate_
// scheduler evaluated at the schedule's count, which equals step()); the
// trainer's learning_rate_fn is ignored, as in t5x's OptaxWrapper. Apply
// returns the rate used, and the trainer logs that.
//
// Checkpoint layout is flax's state dict of the optax state, empty states
// dropped (OptaxWrapper.state_dict): for @optimizers.adamw()
//   param_states.0.count                 int32 0-d, inline
//   param_states.0.mu.<param path>       mu_dtype (float32 unless bfloat16)
//   param_states.0.nu.<param path>       float32
//   param_states.2.count                 int32, only with a schedule
// and for @optimizers.chain() the same under param_states.<i>. for the i-th
// transformation (clip_by_global_norm and clip have no state).
//
// Shardable: the global norm goes through the Reducer (partitioning/reducer.h); the rest
// is element-wise.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "t5xx/optim/lr_schedule.h"
#include "t5xx/optim/optimizer.h"

namespace t5xx::optim {

struct AdamWConfig {
  // learning_rate: a float, or @utils.create_learning_rate_scheduler().
  double learning_rate = 0;
  std::optional<LearningRateSchedulerConfig> learning_rate_schedule;
  double b1 = 0.9;
  double b2 = 0.999;
  double eps = 1e-8;
  double eps_root = 0.0;
  std::optional<at::ScalarType> mu_dtype;  // None (= float32), float32 or bfloat16
  double weight_decay = 1e-4;
  bool nesterov = false;

  // Throws t5xx::Error naming `gin_prefix` + the key ("optax.adamw.b1"):
  // b1, b2 in [0, 1), eps, eps_root, weight_decay >= 0, learning_rate >= 0,
  // mu_dtype float32/bfloat16, and the schedule's own checks.
  void Validate(const std::string& gin_prefix) const;
};

// One optax GradientTransformation.
struct OptaxTransform {
  enum class Kind { kAdamW, kClipByGlobalNorm, kClip };
  Kind kind = Kind::kAdamW;
  AdamWConfig adamw;      // kAdamW
  double max_norm = 0;    // kClipByGlobalNorm, > 0
  double max_delta = 0;   // kClip, >= 0
  // Gin name for messages: "optax.adamw", "optimizers.adamw", ...
  std::string gin_name;
};

struct OptaxConfig {
  // false: @optimizers.adamw() (one kAdamW transform, state at
  // param_states.*); true: @optimizers.chain(transformations=[...]) (state at
  // param_states.<i>.*).
  bool chained = false;
  std::vector<OptaxTransform> transforms;
};

class OptaxOptimizer : public Optimizer {
 public:
  // Throws t5xx::Error for an empty chain, a non-chained config that is not
  // exactly one adamw, or a bad option value (named by its gin key).
  explicit OptaxOptimizer(OptaxConfig config);

  std::string gin_name() const override {
    return config_.chained ? "optimizers.chain" : "optimizers.adamw";
  }
  void Init(const models::ParamStore& params) override;
  double Apply(models::ParamStore& params, double learning_rate) override;
  std::vector<StateArray> StateArrays() const override;

  const OptaxConfig& config() const { return config_; }

 private:
  struct AdamState {
    at::Tensor count;            // int32 0-d
    at::Tensor schedule_count;   // int32 0-d (only used with a schedule)
    std::vector<at::Tensor> mu, nu;
  };
  OptaxConfig config_;
  std::vector<std::optional<LearningRateSchedule>> schedules_;  // per transform
  std::vector<AdamState> adam_;                                 // per transform
  std::vector<std::string> names_;                              // parameter paths
};

}  // namespace t5xx::optim
