// The optax calls t5x configs name -- the implementation of aliases.h
// (signatures, defaults and chains of optax 0.2.3's alias.py).
#include "t5xx/optim/optax/aliases.h"

#include "t5xx/optim/optimizer.h"
#include "t5xx/util/error.h"

namespace t5xx::optim::optax {
namespace {

using TKind = OptaxTransform::Kind;
using PKind = Primitive::Kind;

const std::vector<std::pair<TKind, std::string>>& TransformNames() {
  static const std::vector<std::pair<TKind, std::string>> kNames = {
      {TKind::kAdam, "adam"},
      {TKind::kAdamW, "adamw"},
      {TKind::kLion, "lion"},
      {TKind::kSgd, "sgd"},
      {TKind::kRmsprop, "rmsprop"},
      {TKind::kAdagrad, "adagrad"},
      {TKind::kLamb, "lamb"},
      {TKind::kClip, "clip"},
      {TKind::kClipByGlobalNorm, "clip_by_global_norm"},
      {TKind::kAddDecayedWeights, "add_decayed_weights"},
      {TKind::kScaleBySchedule, "scale_by_schedule"},
      {TKind::kScale, "scale"},
  };
  return kNames;
}

Primitive Prim(PKind kind) {
  Primitive p;
  p.kind = kind;
  return p;
}

Primitive LearningRatePrim(const LearningRate& lr) {
  Primitive p = Prim(PKind::kScaleByLearningRate);
  p.learning_rate = lr;
  return p;
}

Primitive Trace(double decay, bool nesterov, std::optional<at::ScalarType> dtype) {
  Primitive p = Prim(PKind::kTrace);
  p.decay = decay;
  p.nesterov = nesterov;
  p.mu_dtype = dtype;
  return p;
}

Primitive Adam(const OptaxTransform& t) {
  Primitive p = Prim(PKind::kScaleByAdam);
  p.b1 = t.b1;
  p.b2 = t.b2;
  p.eps = t.eps;
  p.eps_root = t.eps_root;
  p.mu_dtype = t.mu_dtype;
  p.nesterov = t.nesterov;
  return p;
}

Primitive Decay(double weight_decay) {
  Primitive p = Prim(PKind::kAddDecayedWeights);
  p.weight_decay = weight_decay;
  return p;
}

}  // namespace

std::string OptaxName(TKind kind) {
  for (const auto& [k, name] : TransformNames()) {
    if (k == kind) return name;
  }
  return "?";
}

std::optional<TKind> OptaxKindOf(const std::string& name) {
  for (const auto& [k, n] : TransformNames()) {
    if (n == name) return k;
  }
  return std::nullopt;
}

std::string SupportedOptaxNames(bool optimizers_only) {
  std::string out;
  for (const auto& [k, n] : TransformNames()) {
    OptaxTransform t;
    t.kind = k;
    if (optimizers_only && !t.is_chain()) continue;
    out += (out.empty() ? "" : ", ") + n;
  }
  return out;
}

OptaxTransform OptaxTransform::Defaults(TKind kind, std::string gin_name) {
  OptaxTransform t;
  t.kind = kind;
  t.gin_name = gin_name.empty() ? "optax." + OptaxName(kind) : std::move(gin_name);
  switch (kind) {
    case TKind::kAdamW:
      break;
    case TKind::kLion:
      t.b2 = 0.99;
      t.weight_decay = 1e-3;
      break;
    case TKind::kAdagrad:
      t.eps = 1e-7;
      break;
    case TKind::kLamb:
      t.eps = 1e-6;
      break;
    default:
      break;
  }
  if (kind != TKind::kAdamW && kind != TKind::kLion) t.weight_decay = 0;  // lamb, add_decayed_weights
  return t;
}

bool OptaxTransform::is_chain() const {
  switch (kind) {
    case TKind::kClip:
    case TKind::kClipByGlobalNorm:
    case TKind::kAddDecayedWeights:
    case TKind::kScaleBySchedule:
    case TKind::kScale:
      return false;
    default:
      return true;
  }
}

void OptaxTransform::Validate() const {
  const std::string& g = gin_name;
  auto unit = [&](const char* key, double v, const char* optax_default) {
    T5XX_CHECK(v >= 0 && v < 1, g + "." + key + " = " + SettingText(v) +
                                    " must be in [0, 1) (optax: " + optax_default + ")");
  };
  auto non_negative = [&](const char* key, double v, const char* optax_default) {
    T5XX_CHECK(v >= 0, g + "." + key + " = " + SettingText(v) + " must be >= 0 (optax: " +
                           optax_default + ")");
  };
  auto dtype = [&](const char* key) {
    T5XX_CHECK(!mu_dtype || *mu_dtype == at::kFloat || *mu_dtype == at::kBFloat16,
               g + "." + key + " must be None, 'float32' or 'bfloat16'");
  };
  auto rate = [&] {
    if (learning_rate.schedule) {
      Schedule check(*learning_rate.schedule);  // throws with the schedule's keys
    } else {
      T5XX_CHECK(learning_rate.value >= 0, g + ".learning_rate = " +
                                               SettingText(learning_rate.value) + " must be >= 0");
    }
  };
  switch (kind) {
    case TKind::kAdam:
    case TKind::kAdamW:
    case TKind::kLamb:
      rate();
      unit("b1", b1, "0.9");
      unit("b2", b2, "0.999");
      non_negative("eps", eps, kind == TKind::kLamb ? "1e-6" : "1e-8");
      non_negative("eps_root", eps_root, "0.0");
      if (kind == TKind::kAdamW) non_negative("weight_decay", weight_decay, "1e-4");
      if (kind == TKind::kLamb) non_negative("weight_decay", weight_decay, "0.0");
      dtype("mu_dtype");
      break;
    case TKind::kLion:
      rate();
      unit("b1", b1, "0.9");
      unit("b2", b2, "0.99");
      non_negative("weight_decay", weight_decay, "1e-3");
      dtype("mu_dtype");
      break;
    case TKind::kSgd:
      rate();
      if (momentum) unit("momentum", *momentum, "None");
      T5XX_CHECK(momentum || !nesterov,
                 g + ".nesterov = True needs a momentum (optax applies no trace without one)");
      dtype("accumulator_dtype");
      break;
    case TKind::kRmsprop:
      rate();
      unit("decay", decay, "0.9");
      non_negative("eps", eps, "1e-8");
      non_negative("initial_scale", initial_scale, "0.0");
      if (momentum) unit("momentum", *momentum, "None");
      T5XX_CHECK(momentum || !nesterov,
                 g + ".nesterov = True needs a momentum (optax applies no trace without one)");
      break;
    case TKind::kAdagrad:
      rate();
      non_negative("initial_accumulator_value", initial_accumulator_value, "0.1");
      non_negative("eps", eps, "1e-7");
      break;
    case TKind::kClip:
      non_negative("max_delta", max_delta, "required");
      break;
    case TKind::kClipByGlobalNorm:
      T5XX_CHECK(max_norm > 0, g + ".max_norm = " + SettingText(max_norm) + " must be > 0");
      break;
    case TKind::kAddDecayedWeights:
      non_negative("weight_decay", weight_decay, "0.0");
      break;
    case TKind::kScaleBySchedule:
      T5XX_CHECK(learning_rate.schedule.has_value(),
                 g + ".step_size_fn must be a schedule, e.g. @optax.linear_schedule()");
      rate();
      break;
    case TKind::kScale:
      break;
  }
}

std::vector<Primitive> OptaxTransform::Expand() const {
  const LearningRate& lr = learning_rate;
  switch (kind) {
    case TKind::kAdam:
      return {Adam(*this), LearningRatePrim(lr)};
    case TKind::kAdamW:
      return {Adam(*this), Decay(weight_decay), LearningRatePrim(lr)};
    case TKind::kLion: {
      Primitive p = Prim(PKind::kScaleByLion);
      p.b1 = b1;
      p.b2 = b2;
      p.mu_dtype = mu_dtype;
      return {p, Decay(weight_decay), LearningRatePrim(lr)};
    }
    case TKind::kSgd:
      return {momentum ? Trace(*momentum, nesterov, mu_dtype) : Prim(PKind::kIdentity),
              LearningRatePrim(lr)};
    case TKind::kRmsprop: {
      Primitive p = Prim(centered ? PKind::kScaleByStddev : PKind::kScaleByRms);
      p.decay = decay;
      p.eps = eps;
      p.initial_scale = initial_scale;
      return {p, LearningRatePrim(lr),
              momentum ? Trace(*momentum, nesterov, std::nullopt) : Prim(PKind::kIdentity)};
    }
    case TKind::kAdagrad: {
      Primitive p = Prim(PKind::kScaleByRss);
      p.initial_scale = initial_accumulator_value;
      p.eps = eps;
      return {p, LearningRatePrim(lr)};
    }
    case TKind::kLamb: {
      OptaxTransform adam = *this;
      adam.mu_dtype.reset();
      adam.nesterov = false;
      return {Adam(adam), Decay(weight_decay), Prim(PKind::kScaleByTrustRatio),
              LearningRatePrim(lr)};
    }
    case TKind::kClip: {
      Primitive p = Prim(PKind::kClip);
      p.max_delta = max_delta;
      return {p};
    }
    case TKind::kClipByGlobalNorm: {
      Primitive p = Prim(PKind::kClipByGlobalNorm);
      p.max_norm = max_norm;
      return {p};
    }
    case TKind::kAddDecayedWeights:
      return {Decay(weight_decay)};
    case TKind::kScaleBySchedule: {
      Primitive p = Prim(PKind::kScaleBySchedule);
      p.learning_rate = lr;
      return {p};
    }
    case TKind::kScale: {
      Primitive p = Prim(PKind::kScale);
      p.step_size = step_size;
      return {p};
    }
  }
  return {};
}

}  // namespace t5xx::optim::optax
