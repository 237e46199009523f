// optax's learning-rate schedules (optax/schedules/_schedule.py and
// _join.py in optax 0.2.3), as gin passes them to an optax optimizer:
//
//   optax.lion.learning_rate = @optax.warmup_cosine_decay_schedule()
//
// plus t5x's utils.create_learning_rate_scheduler (lr_schedule.h) as one
// more kind, so every optax `learning_rate` is a float or a Schedule.
//
// A schedule maps the int32 count of the transformation that calls it
// (scale_by_learning_rate / scale_by_schedule: 0 on the first update) to a
// float32 rate. With c the count (int), each formula as optax writes it:
//   constant_schedule(value)                       value
//   linear_schedule(init_value, end_value, transition_steps,
//                   transition_begin=0)
//       k = clip(c - transition_begin, 0, transition_steps)
//       (init_value - end_value) * (1 - k / transition_steps) + end_value
//       (transition_steps <= 0: init_value; transition_begin < 0: 0)
//   cosine_decay_schedule(init_value, decay_steps, alpha=0.0, exponent=1.0)
//       k = min(c, decay_steps), d = 0.5 * (1 + cos(pi * k / decay_steps))
//       init_value * ((1 - alpha) * d^exponent + alpha)   (decay_steps > 0)
//   warmup_cosine_decay_schedule(init_value, peak_value, warmup_steps,
//                                decay_steps, end_value=0.0, exponent=1.0)
//       join_schedules([linear_schedule(init_value, peak_value,
//                       warmup_steps), cosine_decay_schedule(peak_value,
//                       decay_steps - warmup_steps, end_value / peak_value
//                       (0 when peak_value == 0), exponent)], [warmup_steps])
//   exponential_decay(init_value, transition_steps, decay_rate,
//                     transition_begin=0, staircase=False, end_value=None)
//       k = c - transition_begin, p = k / transition_steps (floor(p) with
//       staircase); k <= 0: init_value, else init_value * decay_rate^p;
//       end_value bounds it (a floor when decay_rate < 1, else a ceiling).
//       transition_steps <= 0 or decay_rate == 0: init_value.
//   piecewise_constant_schedule(init_value, boundaries_and_scales=None)
//       init_value times every scale whose boundary is <= c (scales >= 0)
//   join_schedules(schedules, boundaries)
//       schedules[i](c - boundaries[i-1]) for the last boundary <= c
//
// optax computes in float32 from the int32 count; t5xx computes in double
// (within a few float32 ulps of optax) and the transformation that applies
// the rate rounds it to float32, as optax's jnp.array(step_size, float32).
// Framework-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "t5xx/optim/lr_schedule.h"

namespace t5xx::optim::optax {

struct ScheduleConfig {
  enum class Kind {
    kConstant,           // optax.constant_schedule
    kLinear,             // optax.linear_schedule
    kCosineDecay,        // optax.cosine_decay_schedule
    kWarmupCosineDecay,  // optax.warmup_cosine_decay_schedule
    kExponentialDecay,   // optax.exponential_decay
    kPiecewiseConstant,  // optax.piecewise_constant_schedule
    kJoin,               // optax.join_schedules
    kT5x,                // utils.create_learning_rate_scheduler
  };
  Kind kind = Kind::kConstant;
  // The gin name for messages ("optax.linear_schedule"); Defaults sets it.
  std::string gin_name;

  // optax's parameter names; only those of `kind` are used.
  double value = 0;       // constant_schedule
  double init_value = 0;  // all but constant, join
  double end_value = 0;   // linear, warmup_cosine
  double peak_value = 0;  // warmup_cosine
  int64_t transition_steps = 0, transition_begin = 0;  // linear, exponential
  int64_t decay_steps = 0, warmup_steps = 0;           // cosine, warmup_cosine
  double alpha = 0;                                    // cosine
  double exponent = 1;                                 // cosine, warmup_cosine
  double decay_rate = 0;                               // exponential
  bool staircase = false;                              // exponential
  std::optional<double> exponential_end_value;         // exponential's end_value
  // piecewise_constant: nullopt = None; (boundary, scale) pairs.
  std::optional<std::vector<std::pair<int64_t, double>>> boundaries_and_scales;
  std::vector<ScheduleConfig> schedules;  // join
  std::vector<int64_t> boundaries;        // join
  LearningRateSchedulerConfig t5x;        // kT5x

  // A config of `kind` with optax's defaults and its gin name.
  static ScheduleConfig Defaults(Kind kind);
  static ScheduleConfig T5x(LearningRateSchedulerConfig c);
};

// The gin names of the optax schedules, e.g. "optax.linear_schedule".
const std::vector<std::string>& ScheduleGinNames();
// "optax.<name>" -> kind; nullopt for another name.
std::optional<ScheduleConfig::Kind> ScheduleKindOf(const std::string& gin_name);

class Schedule {
 public:
  // Throws t5xx::Error naming the gin key where optax raises
  // (cosine_decay_schedule.decay_steps <= 0; warmup_cosine_decay_schedule's
  // decay_steps <= warmup_steps; a negative piecewise scale) and where t5xx
  // refuses what optax would silently ignore (join_schedules with
  // len(schedules) != len(boundaries) + 1).
  explicit Schedule(ScheduleConfig config);
  // The rate at `count` (double).
  double operator()(int64_t count) const;
  const ScheduleConfig& config() const { return config_; }

 private:
  ScheduleConfig config_;
};

}  // namespace t5xx::optim::optax
