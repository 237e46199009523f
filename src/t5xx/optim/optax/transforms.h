// optax's gradient transformations that t5xx's optax optimizers are chains
// of (optax 0.2.3: optax/_src/transform.py and clipping.py), run on every
// parameter's float32 update with ATen ops (element-wise, in place where
// the state is float32; per-parameter and global norms through the
// Reducer so sharded parameters get the norm of the whole parameter).
//
// Per parameter, with incoming update g, parameter p, and python floats
// rounded to float32 where they meet a float32 array (as JAX does):
//   scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov)
//       state ScaleByAdamState(count int32 0-d, mu [mu_dtype], nu f32)
//       mu = (1-b1) g + b1 mu, nu = (1-b2) g^2 + b2 nu, c' = c + 1
//       mu_hat = mu / (1 - b1^c')  (nesterov: b1 mu / (1 - b1^(c'+1)) +
//       (1-b1) g / (1 - b1^c')), u = mu_hat / (sqrt(nu / (1 - b2^c') +
//       eps_root) + eps); mu is stored as mu_dtype after use.
//   scale_by_lion(b1, b2, mu_dtype)   state (count, mu)
//       u = sign((1-b1) g + b1 mu), mu = (1-b2) g + b2 mu
//   trace(decay, nesterov, accumulator_dtype)   state TraceState(trace)
//       t = g + decay t, u = nesterov ? g + decay t : t
//   scale_by_rms(decay, eps, initial_scale)     state (nu), nu0 = initial_scale
//       nu = (1-decay) g^2 + decay nu, u = g rsqrt(nu + eps)
//   scale_by_stddev(decay, eps, initial_scale)  state (mu, nu)
//       mu = (1-decay) g + decay mu, nu as scale_by_rms,
//       u = g rsqrt(nu - mu^2 + eps)
//   scale_by_rss(initial_accumulator_value, eps)  state (sum_of_squares)
//       s = g^2 + s, u = (s > 0 ? rsqrt(s + eps) : 0) g
//   scale_by_trust_ratio(min_norm=0, trust_coefficient=1, eps=0)
//       u *= coef ||p|| / (||u|| + eps), or 1 when ||p|| or ||u|| is 0
//       (norms of the whole parameter: safe_norm with min_norm 0)
//   add_decayed_weights(weight_decay)   u = u + weight_decay p
//   scale_by_learning_rate(lr, flip_sign=True)   u = -lr u; a schedule is
//       scale_by_schedule(-lr(count)) with its own ScaleByScheduleState
//   scale_by_schedule(f)   state (count); u = f(count) u, count + 1
//   scale(step_size)       u = step_size u
//   clip(max_delta)        u = clamp(u, -max_delta, max_delta)
//   clip_by_global_norm(max_norm)  u = u / ||all u|| * max_norm when
//       ||all u|| >= max_norm
//   identity               u
// Counts use optax's safe_int32_increment (they stop at 2^31 - 1).
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "t5xx/models/param_store.h"
#include "t5xx/optim/optax/schedules.h"
#include "t5xx/optim/sharded_statistics.h"

namespace t5xx::optim::optax {

// An optax learning_rate: a float or a schedule.
struct LearningRate {
  double value = 0;
  std::optional<ScheduleConfig> schedule;
};

// One primitive optax transformation with its options (optax's names).
struct Primitive {
  enum class Kind {
    kScaleByAdam,
    kScaleByLion,
    kTrace,
    kScaleByRms,
    kScaleByStddev,
    kScaleByRss,
    kScaleByTrustRatio,
    kAddDecayedWeights,
    kScaleByLearningRate,
    kScaleBySchedule,
    kScale,
    kClip,
    kClipByGlobalNorm,
    kIdentity,
  };
  Kind kind = Kind::kIdentity;
  double b1 = 0, b2 = 0, eps = 0, eps_root = 0;  // adam, lion; eps: rms, stddev, rss, trust
  std::optional<at::ScalarType> mu_dtype;        // adam, lion; trace's accumulator_dtype
  bool nesterov = false;                         // adam, trace
  double decay = 0;                              // trace, rms, stddev
  double initial_scale = 0;                      // rms, stddev; rss's initial_accumulator_value
  double min_norm = 0, trust_coefficient = 1;    // trust_ratio
  double weight_decay = 0;                       // add_decayed_weights
  double step_size = 0;                          // scale
  double max_delta = 0, max_norm = 0;            // clip, clip_by_global_norm
  LearningRate learning_rate;  // scale_by_learning_rate; scale_by_schedule's schedule
  bool flip_sign = true;       // scale_by_learning_rate
};

// The state of one primitive, in optax's NamedTuple field order.
struct PrimitiveState {
  at::Tensor count;  // int32 0-d; undefined for a state without count
  // (field name, one tensor per parameter), e.g. ("mu", {...}).
  std::vector<std::pair<std::string, std::vector<at::Tensor>>> slots;
  std::optional<Schedule> schedule;  // scale_by_learning_rate / scale_by_schedule
};

// Zero state for `params` (empty for stateless primitives).
PrimitiveState InitPrimitive(const Primitive& p, const models::ParamStore& params);

// Applies `p` to `updates` (float32, one per parameter, in place or
// replaced) and advances `state`. `names` are the parameter paths (for the
// Reducer). Returns the learning rate a scale_by_learning_rate applied
// (positive, as gin wrote it), or nullopt for any other primitive.
std::optional<double> ApplyPrimitive(const Primitive& p, PrimitiveState& state,
                                     std::vector<at::Tensor>& updates,
                                     const models::ParamStore& params,
                                     const std::vector<std::string>& names,
                                     const Reducer& reducer);

}  // namespace t5xx::optim::optax
