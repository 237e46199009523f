// optax's learning-rate schedules -- the implementation of schedules.h (the
// formulas are optax 0.2.3's optax/schedules/_schedule.py and _join.py).
#include "t5xx/optim/optax/schedules.h"

#include <algorithm>
#include <cmath>

#include "t5xx/optim/optimizer.h"
#include "t5xx/util/error.h"

namespace t5xx::optim::optax {
namespace {

using SKind = ScheduleConfig::Kind;

const std::vector<std::pair<SKind, std::string>>& ScheduleNames() {
  static const std::vector<std::pair<SKind, std::string>> kNames = {
      {SKind::kConstant, "optax.constant_schedule"},
      {SKind::kLinear, "optax.linear_schedule"},
      {SKind::kCosineDecay, "optax.cosine_decay_schedule"},
      {SKind::kWarmupCosineDecay, "optax.warmup_cosine_decay_schedule"},
      {SKind::kExponentialDecay, "optax.exponential_decay"},
      {SKind::kPiecewiseConstant, "optax.piecewise_constant_schedule"},
      {SKind::kJoin, "optax.join_schedules"},
  };
  return kNames;
}

// polynomial_schedule with power 1 (linear_schedule).
double Linear(double init, double end, int64_t steps, int64_t begin, int64_t count) {
  if (steps <= 0) return init;
  begin = std::max<int64_t>(begin, 0);
  const double k = static_cast<double>(std::clamp<int64_t>(count - begin, 0, steps));
  return (init - end) * (1.0 - k / static_cast<double>(steps)) + end;
}

double Cosine(double init, int64_t decay_steps, double alpha, double exponent, int64_t count) {
  const double k = static_cast<double>(std::min(count, decay_steps));
  const double d = 0.5 * (1.0 + std::cos(M_PI * k / static_cast<double>(decay_steps)));
  return init * ((1.0 - alpha) * std::pow(d, exponent) + alpha);
}

void Validate(const ScheduleConfig& c) {
  const std::string& g = c.gin_name;
  switch (c.kind) {
    case SKind::kCosineDecay:
      T5XX_CHECK(c.decay_steps > 0, g + ".decay_steps = " + std::to_string(c.decay_steps) +
                                        ": expected > 0 (optax raises ValueError)");
      break;
    case SKind::kWarmupCosineDecay:
      T5XX_CHECK(c.decay_steps > c.warmup_steps,
                 g + ".decay_steps = " + std::to_string(c.decay_steps) + ": expected > " +
                     g + ".warmup_steps = " + std::to_string(c.warmup_steps) +
                     " (decay_steps counts the warmup; optax raises ValueError)");
      break;
    case SKind::kPiecewiseConstant:
      if (c.boundaries_and_scales) {
        for (const auto& [b, s] : *c.boundaries_and_scales) {
          T5XX_CHECK(s >= 0, g + ".boundaries_and_scales[" + std::to_string(b) + "] = " +
                                 SettingText(s) + ": expected a scale >= 0 (optax raises "
                                 "ValueError)");
        }
      }
      break;
    case SKind::kJoin:
      T5XX_CHECK(!c.schedules.empty(), g + ".schedules is empty; list the schedules to join");
      T5XX_CHECK(c.schedules.size() == c.boundaries.size() + 1,
                 g + ": " + std::to_string(c.schedules.size()) + " schedules need " +
                     std::to_string(c.schedules.size() - 1) + " boundaries, got " +
                     std::to_string(c.boundaries.size()) +
                     " (optax would silently drop the extra ones)");
      for (const ScheduleConfig& s : c.schedules) Validate(s);
      break;
    case SKind::kT5x: {
      LearningRateSchedule check(c.t5x);  // throws with its own gin keys
      break;
    }
    default:
      break;
  }
}

double Eval(const ScheduleConfig& c, int64_t count) {
  switch (c.kind) {
    case SKind::kConstant:
      return c.value;
    case SKind::kLinear:
      return Linear(c.init_value, c.end_value, c.transition_steps, c.transition_begin, count);
    case SKind::kCosineDecay:
      return Cosine(c.init_value, c.decay_steps, c.alpha, c.exponent, count);
    case SKind::kWarmupCosineDecay: {
      if (count < c.warmup_steps) {
        return Linear(c.init_value, c.peak_value, c.warmup_steps, 0, count);
      }
      const double alpha = c.peak_value == 0.0 ? 0.0 : c.end_value / c.peak_value;
      return Cosine(c.peak_value, c.decay_steps - c.warmup_steps, alpha, c.exponent,
                    count - c.warmup_steps);
    }
    case SKind::kExponentialDecay: {
      if (c.transition_steps <= 0 || c.decay_rate == 0) return c.init_value;
      const int64_t k = count - std::max<int64_t>(c.transition_begin, 0);
      double p = static_cast<double>(k) / static_cast<double>(c.transition_steps);
      if (c.staircase) p = std::floor(p);
      double v = k <= 0 ? c.init_value : c.init_value * std::pow(c.decay_rate, p);
      if (c.exponential_end_value) {
        v = c.decay_rate < 1.0 ? std::max(v, *c.exponential_end_value)
                               : std::min(v, *c.exponential_end_value);
      }
      return v;
    }
    case SKind::kPiecewiseConstant: {
      double v = c.init_value;
      if (c.boundaries_and_scales) {
        auto sorted = *c.boundaries_and_scales;
        std::sort(sorted.begin(), sorted.end());
        for (const auto& [boundary, scale] : sorted) {
          if (count >= boundary) v *= scale;
        }
      }
      return v;
    }
    case SKind::kJoin: {
      double v = Eval(c.schedules[0], count);
      for (size_t i = 0; i < c.boundaries.size(); ++i) {
        if (count >= c.boundaries[i]) v = Eval(c.schedules[i + 1], count - c.boundaries[i]);
      }
      return v;
    }
    case SKind::kT5x:
      return LearningRateSchedule(c.t5x)(count);
  }
  return 0;
}

}  // namespace

ScheduleConfig ScheduleConfig::Defaults(SKind kind) {
  ScheduleConfig c;
  c.kind = kind;
  for (const auto& [k, name] : ScheduleNames()) {
    if (k == kind) c.gin_name = name;
  }
  if (kind == SKind::kT5x) c.gin_name = "utils.create_learning_rate_scheduler";
  return c;
}

ScheduleConfig ScheduleConfig::T5x(LearningRateSchedulerConfig t5x) {
  ScheduleConfig c = Defaults(SKind::kT5x);
  c.t5x = std::move(t5x);
  return c;
}

const std::vector<std::string>& ScheduleGinNames() {
  static const std::vector<std::string> kGin = [] {
    std::vector<std::string> v;
    for (const auto& [k, name] : ScheduleNames()) v.push_back(name);
    return v;
  }();
  return kGin;
}

std::optional<ScheduleConfig::Kind> ScheduleKindOf(const std::string& gin_name) {
  for (const auto& [k, name] : ScheduleNames()) {
    if (name == gin_name) return k;
  }
  return std::nullopt;
}

Schedule::Schedule(ScheduleConfig config) : config_(std::move(config)) { Validate(config_); }

double Schedule::operator()(int64_t count) const {
  return Eval(config_, count);
}

}  // namespace t5xx::optim::optax
