// optax's primitive gradient transformations -- the implementation of
// transforms.h (the math of optax 0.2.3's transform.py and clipping.py).
//
// Updates are values: a primitive replaces updates[k] and never writes into
// it (it may alias a gradient or a state slot). State slots are updated in
// place.
#include "t5xx/optim/optax/transforms.h"

#include <cmath>
#include <limits>

namespace t5xx::optim::optax {
namespace {

using PKind = Primitive::Kind;

int64_t SafeIncrement(int64_t c) {
  return c < std::numeric_limits<int32_t>::max() ? c + 1 : c;
}

// 1 - decay^count in float32, as optax's tree_bias_correction.
float BiasCorrection(double decay, int64_t count) {
  return 1.0f - std::pow(static_cast<float>(decay), static_cast<float>(count));
}

// b * t for a Python float b and an array t of t's dtype: float32 math,
// rounded to t's dtype (JAX's weak typing keeps bfloat16 * float bfloat16).
at::Tensor ScaleInDType(const at::Tensor& t, double b) {
  if (t.scalar_type() == at::kFloat) return t * b;
  return (t.to(at::kFloat) * b).to(t.scalar_type());
}

// optax's tree_update_moment: slot = (1-d) x + d slot, then cast to the
// slot's dtype. Returns the float32 moment before that cast (the slot
// itself when it is float32).
at::Tensor UpdateMoment(at::Tensor& slot, const at::Tensor& x, double d) {
  if (slot.scalar_type() == at::kFloat) {
    slot.mul_(d).add_(x * (1.0 - d));
    return slot;
  }
  at::Tensor m = x * (1.0 - d) + ScaleInDType(slot, d);
  slot.copy_(m);
  return m;
}

std::vector<at::Tensor> Full(const models::ParamStore& params, double v,
                             std::optional<at::ScalarType> dtype) {
  std::vector<at::Tensor> out;
  for (const auto& p : params.params()) {
    out.push_back(at::full(p.value.sizes(), v,
                           p.value.options().dtype(dtype.value_or(at::kFloat))));
  }
  return out;
}

int64_t Count(const PrimitiveState& s) { return s.count.item<int32_t>(); }

}  // namespace

PrimitiveState InitPrimitive(const Primitive& p, const models::ParamStore& params) {
  PrimitiveState s;
  auto count = [&] { s.count = at::zeros({}, at::kInt); };
  switch (p.kind) {
    case PKind::kScaleByAdam:
      count();
      s.slots = {{"mu", Full(params, 0, p.mu_dtype)}, {"nu", Full(params, 0, at::kFloat)}};
      break;
    case PKind::kScaleByLion:
      count();
      s.slots = {{"mu", Full(params, 0, p.mu_dtype)}};
      break;
    case PKind::kTrace:
      s.slots = {{"trace", Full(params, 0, p.mu_dtype)}};
      break;
    case PKind::kScaleByRms:
      s.slots = {{"nu", Full(params, p.initial_scale, at::kFloat)}};
      break;
    case PKind::kScaleByStddev:
      s.slots = {{"mu", Full(params, 0, at::kFloat)},
                 {"nu", Full(params, p.initial_scale, at::kFloat)}};
      break;
    case PKind::kScaleByRss:
      s.slots = {{"sum_of_squares", Full(params, p.initial_scale, at::kFloat)}};
      break;
    case PKind::kScaleByLearningRate:
      if (p.learning_rate.schedule) {
        count();
        s.schedule.emplace(*p.learning_rate.schedule);
      }
      break;
    case PKind::kScaleBySchedule:
      count();
      s.schedule.emplace(*p.learning_rate.schedule);
      break;
    default:
      break;
  }
  return s;
}

std::optional<double> ApplyPrimitive(const Primitive& p, PrimitiveState& s,
                                     std::vector<at::Tensor>& u,
                                     const models::ParamStore& params,
                                     const std::vector<std::string>& names,
                                     const Reducer& reducer) {
  const size_t n = u.size();
  auto slot = [&](size_t i, size_t k) -> at::Tensor& { return s.slots[i].second[k]; };
  switch (p.kind) {
    case PKind::kScaleByAdam: {
      const int64_t c = SafeIncrement(Count(s));
      const float bc1 = BiasCorrection(p.b1, c), bc2 = BiasCorrection(p.b2, c);
      const float bc1_next = BiasCorrection(p.b1, SafeIncrement(c));
      for (size_t k = 0; k < n; ++k) {
        const at::Tensor g = u[k];
        const at::Tensor mu = UpdateMoment(slot(0, k), g, p.b1);
        const at::Tensor nu = UpdateMoment(slot(1, k), g.square(), p.b2);
        const at::Tensor mu_hat =
            p.nesterov ? (mu / bc1_next) * p.b1 + (g / bc1) * (1.0 - p.b1) : mu / bc1;
        u[k] = mu_hat / ((nu / bc2 + p.eps_root).sqrt() + p.eps);
      }
      s.count.fill_(c);
      return std::nullopt;
    }
    case PKind::kScaleByLion:
      for (size_t k = 0; k < n; ++k) {
        const at::Tensor g = u[k];
        u[k] = (g * (1.0 - p.b1) + ScaleInDType(slot(0, k), p.b1)).sign();
        UpdateMoment(slot(0, k), g, p.b2);
      }
      s.count.fill_(SafeIncrement(Count(s)));
      return std::nullopt;
    case PKind::kTrace:
      for (size_t k = 0; k < n; ++k) {
        at::Tensor& t = slot(0, k);
        at::Tensor m;
        if (t.scalar_type() == at::kFloat) {
          m = t.mul_(p.decay).add_(u[k]);
        } else {
          m = u[k] + ScaleInDType(t, p.decay);
          t.copy_(m);
        }
        u[k] = p.nesterov ? u[k] + m * p.decay : m;
      }
      return std::nullopt;
    case PKind::kScaleByRms:
      for (size_t k = 0; k < n; ++k) {
        const at::Tensor nu = UpdateMoment(slot(0, k), u[k].square(), p.decay);
        u[k] = u[k] * (nu + p.eps).rsqrt();
      }
      return std::nullopt;
    case PKind::kScaleByStddev:
      for (size_t k = 0; k < n; ++k) {
        const at::Tensor mu = UpdateMoment(slot(0, k), u[k], p.decay);
        const at::Tensor nu = UpdateMoment(slot(1, k), u[k].square(), p.decay);
        u[k] = u[k] * (nu - mu.square() + p.eps).rsqrt();
      }
      return std::nullopt;
    case PKind::kScaleByRss:
      for (size_t k = 0; k < n; ++k) {
        at::Tensor& sum = slot(0, k);
        sum.add_(u[k].square());
        u[k] = at::where(sum > 0, (sum + p.eps).rsqrt(), at::zeros_like(sum)) * u[k];
      }
      return std::nullopt;
    case PKind::kScaleByTrustRatio:
      for (size_t k = 0; k < n; ++k) {
        // safe_norm(x, min_norm): the whole parameter's L2 norm, at least min_norm.
        auto norm = [&](const at::Tensor& x) {
          const at::Tensor v = ShardedGlobalNorm({x}, {names[k]}, reducer);
          return at::where(v <= p.min_norm, at::full_like(v, p.min_norm), v);
        };
        const at::Tensor pn = norm(params.params()[k].value.to(at::kFloat));
        const at::Tensor un = norm(u[k]);
        const at::Tensor ratio = pn * p.trust_coefficient / (un + p.eps);
        const at::Tensor zero = at::logical_or(pn == 0, un == 0);
        u[k] = u[k] * at::where(zero, at::ones_like(ratio), ratio);
      }
      return std::nullopt;
    case PKind::kAddDecayedWeights:
      for (size_t k = 0; k < n; ++k) u[k] = u[k] + params.params()[k].value * p.weight_decay;
      return std::nullopt;
    case PKind::kScaleByLearningRate:
    case PKind::kScaleBySchedule: {
      double rate = p.learning_rate.value;
      if (s.schedule) {
        rate = (*s.schedule)(Count(s));
        s.count.fill_(SafeIncrement(Count(s)));
      }
      const bool flip = p.kind == PKind::kScaleByLearningRate && p.flip_sign;
      const float step = static_cast<float>(flip ? -rate : rate);
      for (size_t k = 0; k < n; ++k) u[k] = u[k] * step;
      if (p.kind == PKind::kScaleByLearningRate) return rate;
      return std::nullopt;
    }
    case PKind::kScale:
      for (size_t k = 0; k < n; ++k) u[k] = u[k] * static_cast<float>(p.step_size);
      return std::nullopt;
    case PKind::kClip:
      for (size_t k = 0; k < n; ++k) u[k] = u[k].clamp(-p.max_delta, p.max_delta);
      return std::nullopt;
    case PKind::kClipByGlobalNorm: {
      const at::Tensor norm = ShardedGlobalNorm(u, names, reducer);
      const at::Tensor keep = norm < p.max_norm;
      for (size_t k = 0; k < n; ++k) u[k] = at::where(keep, u[k], (u[k] / norm) * p.max_norm);
      return std::nullopt;
    }
    case PKind::kIdentity:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace t5xx::optim::optax
