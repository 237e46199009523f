// What the train benchmarks share: the learning-rate schedules of their
// steps (t5x's pretraining schedule, utils.create_learning_rate_scheduler
// with factors 'constant * rsqrt_decay', base 1.0, warmup 10000 steps: the
// rate is 1/sqrt(max(step, 10000)), so every benchmarked step runs at 0.01).
#pragma once

#include "t5xx/optim/lr_schedule.h"

namespace t5xx::bench {

inline optim::LearningRateSchedule PretrainSchedule() {
  optim::LearningRateSchedulerConfig lr;
  lr.factors = "constant * rsqrt_decay";
  lr.base_learning_rate = 1.0;
  lr.warmup_steps = 10000;
  return optim::LearningRateSchedule(lr);
}

// A constant learning rate (factors 'constant'), for the multi-process
// benchmarks that compare layouts at one rate.
inline optim::LearningRateSchedule ConstantSchedule(double rate) {
  optim::LearningRateSchedulerConfig lr;
  lr.factors = "constant";
  lr.base_learning_rate = rate;
  return optim::LearningRateSchedule(lr);
}

}  // namespace t5xx::bench
