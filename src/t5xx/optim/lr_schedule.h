// t5x's create_learning_rate_scheduler (t5x/utils.py): the learning rate is
// the product of the factors named in a string such as
// "constant * linear_warmup * rsqrt_decay", floored at min_learning_rate.
// Framework-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t5xx::optim {

// gin: utils.create_learning_rate_scheduler, with t5x's defaults.
struct LearningRateSchedulerConfig {
  std::string factors = "constant * linear_warmup * rsqrt_decay";
  double base_learning_rate = 0.5;
  int64_t warmup_steps = 1000;
  double decay_factor = 0.5;
  int64_t steps_per_decay = 20000;
  int64_t steps_per_cycle = 100000;
  int64_t step_offset = 0;
  double min_learning_rate = 1e-8;
};

// lr(step) = max(min_learning_rate, product of the factors), with
// s = max(0, step - step_offset), w = warmup_steps, b = base_learning_rate:
//   constant                b
//   linear_warmup           min(1, s / w)
//   linear_decay            b * min(s / w, 1 + decay_factor * (w - s))
//                           (includes b and the warmup: t5x says not to
//                           combine it with constant or linear_warmup)
//   rsqrt_decay             1 / sqrt(max(s, w))
//   rsqrt_normalized_decay  sqrt(w) / sqrt(max(s, w))
//   decay_every             decay_factor ^ floor(s / steps_per_decay)
//   cosine_decay            max(0, 0.5 * (1 + cos(pi * (p mod 1)))) with
//                           p = max(0, (s - w) / steps_per_cycle)
// Computed in double (t5x returns float32; the two agree to float32
// precision).
class LearningRateSchedule {
 public:
  // Throws t5xx::Error naming the gin key (utils.create_learning_rate_
  // scheduler.<name>) for an unknown or missing factor, warmup_steps <= 0
  // with linear_warmup / linear_decay / rsqrt_decay /
  // rsqrt_normalized_decay, warmup_steps < 0, steps_per_decay <= 0 with
  // decay_every, or steps_per_cycle <= 0 with cosine_decay.
  explicit LearningRateSchedule(LearningRateSchedulerConfig config);
  double operator()(int64_t step) const;
  const LearningRateSchedulerConfig& config() const { return config_; }

  // The factor names t5x knows, in t5x's order.
  static const std::vector<std::string>& KnownFactors();

 private:
  LearningRateSchedulerConfig config_;
  std::vector<std::string> factors_;
};

}  // namespace t5xx::optim
