// optax's configurables as t5x configs reach them -- the implementation of
// gin_optax.h. Parameter names and defaults are optax 0.2.3's (alias.py,
// transform.py, clipping.py, schedules/_schedule.py, schedules/_join.py).
#include "t5xx/run/configurables/gin_optax.h"

#include <ATen/core/ScalarType.h>

#include "t5xx/config/reading.h"
#include "t5xx/config/spec_builders.h"
#include "t5xx/run/configurables/gin_readers.h"
#include "t5xx/util/error.h"

namespace t5xx::run {
namespace {

using gin::Value;
using optim::optax::ScheduleConfig;
using Kind = optim::OptaxTransform::Kind;
using SKind = ScheduleConfig::Kind;

constexpr char kOptimizersPrefix[] = "t5x.optimizers.";
constexpr char kOptimizersChain[] = "t5x.optimizers.chain";
constexpr char kOptaxAdafactor[] = "optax.adafactor";
constexpr char kMaskFix[] =
    "t5xx applies weight_decay to every parameter; set mask = None (or weight_decay = 0)";

std::optional<at::ScalarType> DType(const Value& v) {
  if (v.is_none()) return std::nullopt;
  const std::string d = v.AsString();
  if (d == "float32") return at::kFloat;
  if (d == "bfloat16") return at::kBFloat16;
  throw Error(gin::Where(v) + " = " + v.ToGinString() + ": use 'float32' or 'bfloat16' (or None)");
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "@" : ", @") + n + "()";
  return out;
}

ScheduleConfig ReadSchedule(gin::Config& c, const Value& v, const std::string& outer);

optim::optax::LearningRate ReadLearningRate(gin::Config& c, const Value& v,
                                            const std::string& outer) {
  optim::optax::LearningRate lr;
  if (v.kind() == Value::Kind::kReference) {
    lr.schedule = ReadSchedule(c, v, outer);
  } else {
    lr.value = v.AsFloat();
  }
  return lr;
}

ScheduleConfig ReadSchedule(gin::Config& c, const Value& v, const std::string& outer) {
  const std::string supported = JoinNames(optim::optax::ScheduleGinNames()) + " or @" +
                                std::string(kLearningRateScheduler).substr(4) + "()";
  T5XX_CHECK(v.kind() == Value::Kind::kReference && v.reference_evaluated(),
             gin::Where(v) + " = " + v.ToGinString() + ": expected a float or a schedule, " +
                 "called with (): " + supported);
  const std::string& n = v.reference_name();
  const std::string scope = gin::CallScope(outer, v);
  if (n == kLearningRateScheduler) {
    return ScheduleConfig::T5x(ReadLearningRateScheduler(c, scope));
  }
  const std::optional<SKind> kind = optim::optax::ScheduleKindOf(n);
  T5XX_CHECK(kind.has_value(), gin::Where(v) + ": t5xx supports the schedules " + supported +
                                   ", got @" + n);
  auto q = [&](const char* p) { return c.Query(n, p, scope); };
  ScheduleConfig s = ScheduleConfig::Defaults(*kind);
  switch (*kind) {
    case SKind::kConstant:
      s.value = q("value").AsFloat();
      break;
    case SKind::kLinear:
      s.init_value = q("init_value").AsFloat();
      s.end_value = q("end_value").AsFloat();
      s.transition_steps = q("transition_steps").AsInt();
      s.transition_begin = q("transition_begin").AsInt();
      break;
    case SKind::kCosineDecay:
      s.init_value = q("init_value").AsFloat();
      s.decay_steps = q("decay_steps").AsInt();
      s.alpha = q("alpha").AsFloat();
      s.exponent = q("exponent").AsFloat();
      break;
    case SKind::kWarmupCosineDecay:
      s.init_value = q("init_value").AsFloat();
      s.peak_value = q("peak_value").AsFloat();
      s.warmup_steps = q("warmup_steps").AsInt();
      s.decay_steps = q("decay_steps").AsInt();
      s.end_value = q("end_value").AsFloat();
      s.exponent = q("exponent").AsFloat();
      break;
    case SKind::kExponentialDecay: {
      s.init_value = q("init_value").AsFloat();
      s.transition_steps = q("transition_steps").AsInt();
      s.decay_rate = q("decay_rate").AsFloat();
      s.transition_begin = q("transition_begin").AsInt();
      s.staircase = q("staircase").AsBool();
      const Value end = q("end_value");
      if (!end.is_none()) s.exponential_end_value = end.AsFloat();
      break;
    }
    case SKind::kPiecewiseConstant: {
      s.init_value = q("init_value").AsFloat();
      const Value bs = q("boundaries_and_scales");
      if (!bs.is_none()) {
        s.boundaries_and_scales.emplace();
        for (const auto& [b, scale] : bs.AsDict()) {
          s.boundaries_and_scales->emplace_back(b.AsInt(), scale.AsFloat());
        }
      }
      break;
    }
    case SKind::kJoin: {
      const Value schedules = q("schedules"), boundaries = q("boundaries");
      for (const Value& e : schedules.AsList()) s.schedules.push_back(ReadSchedule(c, e, scope));
      for (const Value& b : boundaries.AsList()) s.boundaries.push_back(b.AsInt());
      break;
    }
    case SKind::kT5x:
      break;
  }
  try {
    optim::optax::Schedule check(s);
  } catch (const Error& e) {
    throw Error(gin::Where(v) + ": " + e.what());
  }
  return s;
}

// optax.<x> or t5x.optimizers.<x> (`name`) called in `scope`.
optim::OptaxTransform ReadTransform(gin::Config& c, Kind kind, const std::string& name,
                                    const std::string& scope) {
  const bool wrapped = name.rfind(kOptimizersPrefix, 0) == 0;
  optim::OptaxTransform t = optim::OptaxTransform::Defaults(
      kind, (wrapped ? "optimizers." : "optax.") + optim::optax::OptaxName(kind));
  auto q = [&](const char* p) { return c.Query(name, p, scope); };
  auto mask = [&] {
    const Value m = q("mask");
    gin::Refuse(!m.is_none(), m, kMaskFix);
  };
  auto lr = [&] { t.learning_rate = ReadLearningRate(c, q("learning_rate"), scope); };
  auto momentum = [&] {
    const Value m = q("momentum");
    if (!m.is_none()) t.momentum = m.AsFloat();
    t.nesterov = q("nesterov").AsBool();
  };
  switch (kind) {
    case Kind::kAdam:
    case Kind::kAdamW:
    case Kind::kLamb:
      lr();
      t.b1 = q("b1").AsFloat();
      t.b2 = q("b2").AsFloat();
      t.eps = q("eps").AsFloat();
      t.eps_root = q("eps_root").AsFloat();
      if (kind != Kind::kLamb) {
        t.mu_dtype = DType(q("mu_dtype"));
        t.nesterov = q("nesterov").AsBool();
      }
      if (kind != Kind::kAdam) {
        t.weight_decay = q("weight_decay").AsFloat();
        mask();
      }
      break;
    case Kind::kLion:
      lr();
      t.b1 = q("b1").AsFloat();
      t.b2 = q("b2").AsFloat();
      t.mu_dtype = DType(q("mu_dtype"));
      t.weight_decay = q("weight_decay").AsFloat();
      mask();
      break;
    case Kind::kSgd:
      lr();
      momentum();
      t.mu_dtype = DType(q("accumulator_dtype"));
      break;
    case Kind::kRmsprop:
      lr();
      t.decay = q("decay").AsFloat();
      t.eps = q("eps").AsFloat();
      t.initial_scale = q("initial_scale").AsFloat();
      t.centered = q("centered").AsBool();
      momentum();
      break;
    case Kind::kAdagrad:
      lr();
      t.initial_accumulator_value = q("initial_accumulator_value").AsFloat();
      t.eps = q("eps").AsFloat();
      break;
    case Kind::kClip:
      t.max_delta = q("max_delta").AsFloat();
      break;
    case Kind::kClipByGlobalNorm:
      t.max_norm = q("max_norm").AsFloat();
      break;
    case Kind::kAddDecayedWeights:
      t.weight_decay = q("weight_decay").AsFloat();
      mask();
      break;
    case Kind::kScaleBySchedule: {
      const Value f = q("step_size_fn");
      t.learning_rate.schedule = ReadSchedule(c, f, scope);
      break;
    }
    case Kind::kScale:
      t.step_size = q("step_size").AsFloat();
      break;
  }
  return t;
}

std::string ChainSupported() {
  std::string out;
  for (Kind k : {Kind::kAdam, Kind::kAdamW, Kind::kLion, Kind::kSgd, Kind::kRmsprop,
                 Kind::kAdagrad, Kind::kLamb, Kind::kClip, Kind::kClipByGlobalNorm,
                 Kind::kAddDecayedWeights, Kind::kScaleBySchedule, Kind::kScale}) {
    out += (out.empty() ? "@optax." : ", @optax.") + optim::optax::OptaxName(k) + "()";
  }
  return out;
}

void RefuseAdafactor(const Value& where, const std::string& name) {
  T5XX_CHECK(name != kOptaxAdafactor,
             gin::Where(where) + ": @optax.adafactor() is not supported: t5x cannot partition "
             "its FactoredState (t5x/optimizers.py's OptaxStatePartitionRules has no rule for "
             "it, so t5x's derive_logical_axes raises; t5x leaves optimizers.adafactor "
             "commented out). Use optimizer_def = @adafactor.Adafactor()");
}

}  // namespace

std::optional<optim::OptaxConfig> ReadOptaxOptimizer(gin::Config& c, const std::string& name,
                                                     const std::string& scope) {
  optim::OptaxConfig o;
  if (name == kOptimizersChain) {
    o.chained = true;
    const Value list = c.Query(kOptimizersChain, "transformations", scope);
    for (const Value& v : list.AsList()) {
      T5XX_CHECK(v.kind() == Value::Kind::kReference && v.reference_evaluated(),
                 gin::Where(list) + ": expected a list of optax transformations, called with () "
                                    "(" + ChainSupported() + "), got " + v.ToGinString());
      const std::string& n = v.reference_name();
      RefuseAdafactor(list, n);
      const std::optional<Kind> kind =
          n.rfind("optax.", 0) == 0 ? optim::optax::OptaxKindOf(n.substr(6)) : std::nullopt;
      T5XX_CHECK(kind.has_value(), gin::Where(list) + ": t5xx supports " + ChainSupported() +
                                       " in optimizers.chain, got @" + n);
      o.transforms.push_back(ReadTransform(c, *kind, n, gin::CallScope(scope, v)));
    }
    return o;
  }
  if (name.rfind(kOptimizersPrefix, 0) != 0) return std::nullopt;
  const std::optional<Kind> kind =
      optim::optax::OptaxKindOf(name.substr(std::string(kOptimizersPrefix).size()));
  if (!kind) return std::nullopt;
  o.transforms = {ReadTransform(c, *kind, name, scope)};
  return o;
}

void RegisterOptaxConfigurables(gin::Registry& r) {
  using namespace gin::spec;
  const auto lr = Required("learning_rate", T::kAny,
                           "A float or a schedule: @optax.warmup_cosine_decay_schedule(), "
                           "@utils.create_learning_rate_scheduler(), ...");
  const auto mask = Optional("mask", T::kAny, None(), "Only None (decay every parameter).");
  const auto dtype = [](const char* n) {
    return Optional(n, T::kOptionalString, None(), "None, 'float32' or 'bfloat16'.");
  };
  const std::vector<std::pair<Kind, std::vector<gin::ParamSpec>>> optimizers = {
      {Kind::kAdam,
       {lr, Optional("b1", T::kFloat, F(0.9)), Optional("b2", T::kFloat, F(0.999)),
        Optional("eps", T::kFloat, F(1e-8)), Optional("eps_root", T::kFloat, F(0.0)),
        dtype("mu_dtype"), Optional("nesterov", T::kBool, B(false))}},
      {Kind::kAdamW,
       {lr, Optional("b1", T::kFloat, F(0.9)), Optional("b2", T::kFloat, F(0.999)),
        Optional("eps", T::kFloat, F(1e-8)), Optional("eps_root", T::kFloat, F(0.0)),
        dtype("mu_dtype"), Optional("weight_decay", T::kFloat, F(1e-4)), mask,
        Optional("nesterov", T::kBool, B(false))}},
      {Kind::kLion,
       {lr, Optional("b1", T::kFloat, F(0.9)), Optional("b2", T::kFloat, F(0.99)),
        dtype("mu_dtype"), Optional("weight_decay", T::kFloat, F(1e-3)), mask}},
      {Kind::kSgd,
       {lr, Optional("momentum", T::kOptionalFloat, None()),
        Optional("nesterov", T::kBool, B(false)), dtype("accumulator_dtype")}},
      {Kind::kRmsprop,
       {lr, Optional("decay", T::kFloat, F(0.9)), Optional("eps", T::kFloat, F(1e-8)),
        Optional("initial_scale", T::kFloat, F(0.0)), Optional("centered", T::kBool, B(false)),
        Optional("momentum", T::kOptionalFloat, None()),
        Optional("nesterov", T::kBool, B(false))}},
      {Kind::kAdagrad,
       {lr, Optional("initial_accumulator_value", T::kFloat, F(0.1)),
        Optional("eps", T::kFloat, F(1e-7))}},
      {Kind::kLamb,
       {lr, Optional("b1", T::kFloat, F(0.9)), Optional("b2", T::kFloat, F(0.999)),
        Optional("eps", T::kFloat, F(1e-6)), Optional("eps_root", T::kFloat, F(0.0)),
        Optional("weight_decay", T::kFloat, F(0.0)), mask}},
  };
  for (const auto& [kind, params] : optimizers) {
    const std::string n = optim::optax::OptaxName(kind);
    r.Register({kOptimizersPrefix + n, params, "optax." + n + " wrapped as a t5x optimizer."});
    r.Register({"optax." + n, params, "The optax " + n + " optimizer, for optimizers.chain."});
  }
  r.Register({kOptimizersChain,
              {Required("transformations", T::kList, "[@optax.clip_by_global_norm(), @optax.adamw()]")},
              "A chain of optax transformations wrapped as a t5x optimizer."});
  r.Register({"optax.clip_by_global_norm", {Required("max_norm", T::kFloat)},
              "Scales all updates down when their global L2 norm exceeds max_norm."});
  r.Register({"optax.clip", {Required("max_delta", T::kFloat)},
              "Clips every update element to [-max_delta, max_delta]."});
  r.Register({"optax.add_decayed_weights", {Optional("weight_decay", T::kFloat, F(0.0)), mask},
              "Adds weight_decay * parameter to the updates."});
  r.Register({"optax.scale_by_schedule", {Required("step_size_fn", T::kAny, "A schedule.")},
              "Multiplies the updates by a schedule of its own count."});
  r.Register({"optax.scale", {Required("step_size", T::kFloat)}, "Multiplies the updates."});
  r.Register({kOptaxAdafactor,
              {Optional("learning_rate", T::kAny, None()),
               Optional("min_dim_size_to_factor", T::kInt, I(128)),
               Optional("decay_rate", T::kFloat, F(0.8)), Optional("decay_offset", T::kInt, I(0)),
               Optional("multiply_by_parameter_scale", T::kBool, B(true)),
               Optional("clipping_threshold", T::kOptionalFloat, F(1.0)),
               Optional("momentum", T::kOptionalFloat, None()),
               Optional("dtype_momentum", T::kAny, S("float32")),
               Optional("weight_decay_rate", T::kOptionalFloat, None()),
               Optional("eps", T::kFloat, F(1e-30)), Optional("factored", T::kBool, B(true)),
               Optional("weight_decay_mask", T::kAny, None())},
              "Not supported (t5x cannot partition its state): use adafactor.Adafactor."});

  // Schedules.
  r.Register({"optax.constant_schedule", {Required("value", T::kFloat)}, "A constant rate."});
  r.Register({"optax.linear_schedule",
              {Required("init_value", T::kFloat), Required("end_value", T::kFloat),
               Required("transition_steps", T::kInt), Optional("transition_begin", T::kInt, I(0))},
              "Linear from init_value to end_value over transition_steps."});
  r.Register({"optax.cosine_decay_schedule",
              {Required("init_value", T::kFloat), Required("decay_steps", T::kInt),
               Optional("alpha", T::kFloat, F(0.0)), Optional("exponent", T::kFloat, F(1.0))},
              "Cosine decay from init_value to alpha * init_value."});
  r.Register({"optax.warmup_cosine_decay_schedule",
              {Required("init_value", T::kFloat), Required("peak_value", T::kFloat),
               Required("warmup_steps", T::kInt), Required("decay_steps", T::kInt),
               Optional("end_value", T::kFloat, F(0.0)), Optional("exponent", T::kFloat, F(1.0))},
              "Linear warmup to peak_value, then cosine decay to end_value at decay_steps."});
  r.Register({"optax.exponential_decay",
              {Required("init_value", T::kFloat), Required("transition_steps", T::kInt),
               Required("decay_rate", T::kFloat), Optional("transition_begin", T::kInt, I(0)),
               Optional("staircase", T::kBool, B(false)),
               Optional("end_value", T::kOptionalFloat, None())},
              "init_value * decay_rate ^ (steps / transition_steps)."});
  r.Register({"optax.piecewise_constant_schedule",
              {Required("init_value", T::kFloat),
               Optional("boundaries_and_scales", T::kOptionalDict, None(),
                        "{step: scale, ...}: the rate is multiplied by scale from step on.")},
              "A piecewise-constant rate."});
  r.Register({"optax.join_schedules",
              {Required("schedules", T::kList), Required("boundaries", T::kList)},
              "schedules[i] from boundaries[i-1] on, counted from that boundary."});
}

}  // namespace t5xx::run
