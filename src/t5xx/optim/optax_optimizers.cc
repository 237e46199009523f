// The optax optimizers t5x exposes through its OptaxWrapper
// (t5x/optimizers.py) -- the implementation of optax_optimizers.h.
#include "t5xx/optim/optax_optimizers.h"

#include <ATen/core/grad_mode.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "t5xx/util/error.h"

namespace t5xx::optim {
namespace {

// 1 - decay^count in float32, as optax's bias_correction computes it.
float BiasCorrection(double decay, int64_t count) {
  return 1.0f - std::pow(static_cast<float>(decay), static_cast<float>(count));
}

// b * t for a Python float b and a JAX array t: computed in float32 and
// rounded to t's dtype (libtorch 1.13 would round b to bfloat16 first).
at::Tensor ScaleInDType(const at::Tensor& t, double b) {
  if (t.scalar_type() == at::kFloat) return t * b;
  return (t.to(at::kFloat) * b).to(t.scalar_type());
}

// optax's safe_increment on int32.
int64_t SafeIncrement(int64_t c) {
  return c < std::numeric_limits<int32_t>::max() ? c + 1 : c;
}

}  // namespace

void AdamWConfig::Validate(const std::string& g) const {
  T5XX_CHECK(b1 >= 0 && b1 < 1, g + ".b1 = " + SettingText(b1) + " must be in [0, 1) (optax: 0.9)");
  T5XX_CHECK(b2 >= 0 && b2 < 1, g + ".b2 = " + SettingText(b2) + " must be in [0, 1) (optax: 0.999)");
  T5XX_CHECK(eps >= 0, g + ".eps = " + SettingText(eps) + " must be >= 0 (optax: 1e-8)");
  T5XX_CHECK(eps_root >= 0, g + ".eps_root = " + SettingText(eps_root) + " must be >= 0 (optax: 0.0)");
  T5XX_CHECK(weight_decay >= 0,
        g + ".weight_decay = " + SettingText(weight_decay) + " must be >= 0 (optax: 1e-4)");
  T5XX_CHECK(!mu_dtype || *mu_dtype == at::kFloat || *mu_dtype == at::kBFloat16,
        g + ".mu_dtype must be None, 'float32' or 'bfloat16'");
  if (learning_rate_schedule) {
    LearningRateSchedule check(*learning_rate_schedule);  // throws with its own keys
  } else {
    T5XX_CHECK(learning_rate >= 0, g + ".learning_rate = " + SettingText(learning_rate) + " must be >= 0");
  }
}

OptaxOptimizer::OptaxOptimizer(OptaxConfig config) : config_(std::move(config)) {
  T5XX_CHECK(!config_.transforms.empty(),
        "optimizers.chain.transformations is empty; list e.g. "
        "[@optax.clip_by_global_norm(), @optax.adamw()]");
  if (!config_.chained) {
    T5XX_CHECK(config_.transforms.size() == 1 &&
              config_.transforms[0].kind == OptaxTransform::Kind::kAdamW,
          "an unchained optax optimizer must be exactly one adamw (use optimizers.chain)");
  }
  for (const OptaxTransform& t : config_.transforms) {
    switch (t.kind) {
      case OptaxTransform::Kind::kAdamW:
        t.adamw.Validate(t.gin_name);
        schedules_.emplace_back(t.adamw.learning_rate_schedule
                                    ? std::optional<LearningRateSchedule>(
                                          LearningRateSchedule(*t.adamw.learning_rate_schedule))
                                    : std::nullopt);
        break;
      case OptaxTransform::Kind::kClipByGlobalNorm:
        T5XX_CHECK(t.max_norm > 0, t.gin_name + ".max_norm = " + SettingText(t.max_norm) + " must be > 0");
        schedules_.emplace_back(std::nullopt);
        break;
      case OptaxTransform::Kind::kClip:
        T5XX_CHECK(t.max_delta >= 0,
              t.gin_name + ".max_delta = " + SettingText(t.max_delta) + " must be >= 0");
        schedules_.emplace_back(std::nullopt);
        break;
    }
  }
}

void OptaxOptimizer::Init(const models::ParamStore& params) {
  names_.clear();
  for (const auto& p : params.params()) names_.push_back(p.name);
  adam_.assign(config_.transforms.size(), AdamState{});
  for (size_t i = 0; i < config_.transforms.size(); ++i) {
    const OptaxTransform& t = config_.transforms[i];
    if (t.kind != OptaxTransform::Kind::kAdamW) continue;
    AdamState& s = adam_[i];
    s.count = at::zeros({}, at::kInt);
    s.schedule_count = at::zeros({}, at::kInt);
    for (const auto& p : params.params()) {
      const auto opts = p.value.options().dtype(at::kFloat);
      s.mu.push_back(at::zeros(p.value.sizes(), opts.dtype(t.adamw.mu_dtype.value_or(at::kFloat))));
      s.nu.push_back(at::zeros(p.value.sizes(), opts));
    }
  }
  step_ = 0;
  initialized_ = true;
}

double OptaxOptimizer::Apply(models::ParamStore& params, double /*learning_rate*/) {
  if (!initialized_) throw std::logic_error(gin_name() + ": Apply before Init");
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> updates;
  for (auto& p : params.params()) {
    const at::Tensor& g = p.value.grad();
    if (!g.defined()) {
      throw std::logic_error(gin_name() + ": parameter " + p.name + " has no gradient");
    }
    updates.push_back(g.to(at::kFloat));
  }
  double applied_lr = 0;
  for (size_t i = 0; i < config_.transforms.size(); ++i) {
    const OptaxTransform& t = config_.transforms[i];
    switch (t.kind) {
      case OptaxTransform::Kind::kClipByGlobalNorm: {
        const at::Tensor norm = ShardedGlobalNorm(updates, names_, *reducer_);
        const at::Tensor keep = norm < t.max_norm;
        for (auto& u : updates) u = at::where(keep, u, (u / norm) * t.max_norm);
        break;
      }
      case OptaxTransform::Kind::kClip:
        for (auto& u : updates) u = u.clamp(-t.max_delta, t.max_delta);
        break;
      case OptaxTransform::Kind::kAdamW: {
        const AdamWConfig& a = t.adamw;
        AdamState& s = adam_[i];
        const int64_t count = SafeIncrement(s.count.item<int32_t>());
        const float bc1 = BiasCorrection(a.b1, count);
        const float bc2 = BiasCorrection(a.b2, count);
        const float bc1_next = BiasCorrection(a.b1, SafeIncrement(count));
        double lr = a.learning_rate;
        if (schedules_[i]) lr = (*schedules_[i])(s.schedule_count.item<int32_t>());
        applied_lr = lr;
        for (size_t k = 0; k < updates.size(); ++k) {
          const at::Tensor& g = updates[k];
          const at::Tensor mu = g * (1.0 - a.b1) + ScaleInDType(s.mu[k], a.b1);
          const at::Tensor nu = g.square() * (1.0 - a.b2) + s.nu[k] * a.b2;
          const at::Tensor mu_hat =
              a.nesterov ? (mu / bc1_next) * a.b1 + (g / bc1) * (1.0 - a.b1) : mu / bc1;
          const at::Tensor nu_hat = nu / bc2;
          at::Tensor u = mu_hat / ((nu_hat + a.eps_root).sqrt() + a.eps);
          u = u + params.params()[k].value * a.weight_decay;
          updates[k] = u * static_cast<float>(-lr);
          s.mu[k].copy_(mu);
          s.nu[k].copy_(nu);
        }
        s.count.fill_(count);
        if (schedules_[i]) s.schedule_count.fill_(SafeIncrement(s.schedule_count.item<int32_t>()));
        break;
      }
    }
  }
  for (size_t k = 0; k < updates.size(); ++k) params.params()[k].value.add_(updates[k]);
  ++step_;
  return applied_lr;
}

std::vector<StateArray> OptaxOptimizer::StateArrays() const {
  std::vector<StateArray> out;
  for (size_t i = 0; i < config_.transforms.size(); ++i) {
    if (config_.transforms[i].kind != OptaxTransform::Kind::kAdamW) continue;
    const AdamState& s = adam_[i];
    const std::string base =
        "param_states." + (config_.chained ? std::to_string(i) + "." : std::string());
    out.push_back({base + "0.count", s.count, true});
    for (size_t k = 0; k < names_.size(); ++k) {
      out.push_back({base + "0.mu." + names_[k], s.mu[k], false});
    }
    for (size_t k = 0; k < names_.size(); ++k) {
      out.push_back({base + "0.nu." + names_[k], s.nu[k], false});
    }
    if (schedules_[i]) out.push_back({base + "2.count", s.schedule_count, true});
  }
  return out;
}

}  // namespace t5xx::optim
