// t5x's create_learning_rate_scheduler (t5x/utils.py) -- the implementation of
// lr_schedule.h.
#include "t5xx/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "t5xx/util/error.h"

namespace t5xx::optim {
namespace {

constexpr char kScheduleGin[] = "utils.create_learning_rate_scheduler.";

bool Uses(const std::vector<std::string>& factors, const char* name) {
  return std::find(factors.begin(), factors.end(), name) != factors.end();
}

}  // namespace

const std::vector<std::string>& LearningRateSchedule::KnownFactors() {
  static const std::vector<std::string> kKnown = {
      "constant",    "linear_warmup",          "linear_decay", "rsqrt_decay",
      "rsqrt_normalized_decay", "decay_every", "cosine_decay"};
  return kKnown;
}

LearningRateSchedule::LearningRateSchedule(LearningRateSchedulerConfig config)
    : config_(std::move(config)) {
  const auto& known = KnownFactors();
  std::string known_list;
  for (const auto& k : known) known_list += (known_list.empty() ? "" : ", ") + k;
  // Python's str.split('*'): n stars give n + 1 pieces, empty ones included.
  std::vector<std::string> pieces(1);
  for (char ch : config_.factors) {
    if (ch == '*') {
      pieces.emplace_back();
    } else {
      pieces.back() += ch;
    }
  }
  for (std::string tok : pieces) {
    tok.erase(0, tok.find_first_not_of(" \t\n"));
    tok.erase(tok.find_last_not_of(" \t\n") + 1);
    T5XX_CHECK(!tok.empty(), std::string(kScheduleGin) + "factors = '" + config_.factors +
                            "' has an empty factor; write factors joined by '*', e.g. "
                            "'constant * linear_warmup * rsqrt_decay'");
    T5XX_CHECK(std::find(known.begin(), known.end(), tok) != known.end(),
          std::string(kScheduleGin) + "factors: unknown factor '" + tok + "' in '" + config_.factors +
              "' (known: " + known_list + ")");
    factors_.push_back(tok);
  }
  const auto& c = config_;
  T5XX_CHECK(c.warmup_steps >= 0, std::string(kScheduleGin) + "warmup_steps must be >= 0, got " +
                                 std::to_string(c.warmup_steps));
  for (const char* f : {"linear_warmup", "linear_decay", "rsqrt_decay", "rsqrt_normalized_decay"}) {
    T5XX_CHECK(!Uses(factors_, f) || c.warmup_steps > 0,
          std::string(kScheduleGin) + "warmup_steps must be positive for '" + c.factors + "' (factor " +
              f + " divides by it), got " + std::to_string(c.warmup_steps));
  }
  T5XX_CHECK(!Uses(factors_, "decay_every") || c.steps_per_decay > 0,
        std::string(kScheduleGin) + "steps_per_decay must be positive for factor decay_every, got " +
            std::to_string(c.steps_per_decay));
  T5XX_CHECK(!Uses(factors_, "cosine_decay") || c.steps_per_cycle > 0,
        std::string(kScheduleGin) + "steps_per_cycle must be positive for factor cosine_decay, got " +
            std::to_string(c.steps_per_cycle));
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
    } else if (f == "linear_decay") {
      ret *= c.base_learning_rate * std::min(s / w, 1.0 + c.decay_factor * (w - s));
    } else if (f == "rsqrt_decay") {
      ret /= std::sqrt(std::max(s, w));
    } else if (f == "rsqrt_normalized_decay") {
      ret *= std::sqrt(w);
      ret /= std::sqrt(std::max(s, w));
    } else if (f == "decay_every") {
      // Integer floor division of the (non-negative) step, as t5x's `//`.
      const int64_t k = static_cast<int64_t>(s) / c.steps_per_decay;
      ret *= std::pow(c.decay_factor, static_cast<double>(k));
    } else if (f == "cosine_decay") {
      const double progress = std::max(0.0, (s - w) / static_cast<double>(c.steps_per_cycle));
      ret *= std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * std::fmod(progress, 1.0))));
    }
  }
  return std::max(ret, c.min_learning_rate);
}

}  // namespace t5xx::optim
