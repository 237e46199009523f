#include "t5xx/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "t5xx/util/error.h"

namespace t5xx::optim {

LearningRateSchedule::LearningRateSchedule(LearningRateSchedulerConfig config)
    : config_(std::move(config)) {
  static const char* kKnown[] = {"constant", "linear_warmup", "rsqrt_decay",
                                 "rsqrt_normalized_decay", "decay_every",
                                 "cosine_decay"};
  std::stringstream ss(config_.factors);
  std::string tok;
  while (std::getline(ss, tok, '*')) {
    tok.erase(0, tok.find_first_not_of(" \t"));
    tok.erase(tok.find_last_not_of(" \t") + 1);
    if (tok.empty()) continue;
    bool known = std::any_of(std::begin(kKnown), std::end(kKnown),
                             [&](const char* k) { return tok == k; });
    if (!known) {
      throw Error("utils.create_learning_rate_scheduler.factors: unknown factor '" +
                  tok + "' in '" + config_.factors +
                  "' (known: constant, linear_warmup, rsqrt_decay, "
                  "rsqrt_normalized_decay, decay_every, cosine_decay)");
    }
    factors_.push_back(tok);
  }
  Check(!factors_.empty(), "utils.create_learning_rate_scheduler.factors is empty");
  bool needs_warmup = std::any_of(factors_.begin(), factors_.end(), [](const std::string& f) {
    return f == "linear_warmup" || f == "rsqrt_decay" || f == "rsqrt_normalized_decay";
  });
  Check(!needs_warmup || config_.warmup_steps > 0,
        "utils.create_learning_rate_scheduler.warmup_steps must be positive for '" +
            config_.factors + "', got " + std::to_string(config_.warmup_steps));
}

double LearningRateSchedule::operator()(int64_t step_in) const {
  const auto& c = config_;
  const double s = static_cast<double>(std::max<int64_t>(0, step_in - c.step_offset));
  const double w = static_cast<double>(c.warmup_steps);
  double ret = 1.0;
  for (const auto& f : factors_) {
    if (f == "constant") {
      ret *= c.base_learning_rate;
    } else if (f == "linear_warmup") {
      ret *= std::min(1.0, s / w);
    } else if (f == "rsqrt_decay") {
      ret /= std::sqrt(std::max(s, w));
    } else if (f == "rsqrt_normalized_decay") {
      ret *= std::sqrt(w);
      ret /= std::sqrt(std::max(s, w));
    } else if (f == "decay_every") {
      ret *= std::pow(c.decay_factor, std::floor(s / c.steps_per_decay));
    } else if (f == "cosine_decay") {
      double progress = std::max(0.0, (s - w) / static_cast<double>(c.steps_per_cycle));
      ret *= std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * std::fmod(progress, 1.0))));
    }
  }
  return ret;
}

}  // namespace t5xx::optim
