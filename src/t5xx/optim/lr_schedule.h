// t5x's create_learning_rate_scheduler (t5x/utils.py): the learning rate is
// the product of the factors named in a string such as
// "constant * linear_warmup * rsqrt_decay". Framework-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t5xx::optim {

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

// Factors (step s = max(0, step - step_offset), w = warmup_steps):
//   constant                base_learning_rate
//   linear_warmup           min(1, s / w)
//   rsqrt_decay             1 / sqrt(max(s, w))
//   rsqrt_normalized_decay  sqrt(w) / sqrt(max(s, w))
//   decay_every             decay_factor ^ floor(s / steps_per_decay)
//   cosine_decay            max(0, 0.5 * (1 + cos(pi * (p mod 1)))) with
//                           p = max(0, (s - w) / steps_per_cycle)
class LearningRateSchedule {
 public:
  // Throws t5xx::Error naming an unknown factor and listing the known ones.
  explicit LearningRateSchedule(LearningRateSchedulerConfig config);
  double operator()(int64_t step) const;
  const LearningRateSchedulerConfig& config() const { return config_; }

 private:
  LearningRateSchedulerConfig config_;
  std::vector<std::string> factors_;
};

}  // namespace t5xx::optim
