// The optimizer configurables -- t5x.adafactor.Adafactor (t5x's own), the
// optax ones (gin_optax.cc: t5x.optimizers.<name>, .chain, optax.<name> and
// optax's schedules) and utils.create_learning_rate_scheduler -- with t5x's
// and optax's defaults, and how MODEL's optimizer_def and a schedule are
// read from them.
#include <ATen/core/ScalarType.h>

#include "t5xx/config/reading.h"
#include "t5xx/config/spec_builders.h"
#include "t5xx/run/configurables/gin_optax.h"
#include "t5xx/run/configurables/gin_readers.h"
#include "t5xx/util/error.h"

namespace t5xx::run {

const char kLearningRateScheduler[] = "t5x.utils.create_learning_rate_scheduler";

namespace {

using gin::Value;

constexpr char kAdafactor[] = "t5x.adafactor.Adafactor";
constexpr char kMultiOptimizer[] = "t5x.optimizers.MultiOptimizer";
constexpr char kParamTraversal[] = "flax.traverse_util.ModelParamTraversal";
constexpr char kMatchAny[] = "prompt_tuning.train.utils.match_any";
constexpr char kFactorRules[] = "t5x.adafactor.standard_logical_factor_rules";
// prompt-tuning's rules: t5x's plus prompt, tasks, prompt+embed and
// prompt_embed unfactored and batch as a batch axis.
constexpr char kPromptFactorRules[] = "prompt_tuning.train.optim.standard_logical_factor_rules";

std::optional<double> OptionalFloat(const Value& v) {
  return v.is_none() ? std::nullopt : std::optional<double>(v.AsFloat());
}

std::optional<at::ScalarType> DType(const Value& v, bool none_ok) {
  if (none_ok && v.is_none()) return std::nullopt;
  const std::string d = v.AsString();
  if (d == "float32") return at::kFloat;
  if (d == "bfloat16") return at::kBFloat16;
  throw Error(gin::Where(v) + " = " + v.ToGinString() + ": use 'float32' or 'bfloat16'" +
              (none_ok ? " (or None)" : ""));
}

optim::AdafactorConfig ReadAdafactor(gin::Config& c, const std::string& scope) {
  optim::AdafactorConfig a;
  auto aq = [&](const char* p) { return c.Query(kAdafactor, p, scope); };
  const Value lr = aq("learning_rate");
  T5XX_CHECK(lr.is_none(), gin::Where(lr) + " = " + lr.ToGinString() +
                               " has no effect (t5x's trainer sets Adafactor's rate from "
                               "trainer.Trainer.learning_rate_fn); remove it and set "
                               "utils.create_learning_rate_scheduler.base_learning_rate");
  a.factored = aq("factored").AsBool();
  a.multiply_by_parameter_scale = aq("multiply_by_parameter_scale").AsBool();
  a.beta1 = OptionalFloat(aq("beta1"));
  a.decay_rate = aq("decay_rate").AsFloat();
  a.step_offset = aq("step_offset").AsInt();
  a.clipping_threshold = OptionalFloat(aq("clipping_threshold"));
  a.weight_decay_rate = OptionalFloat(aq("weight_decay_rate"));
  a.min_dim_size_to_factor = aq("min_dim_size_to_factor").AsInt();
  a.epsilon1 = aq("epsilon1").AsFloat();
  a.epsilon2 = aq("epsilon2").AsFloat();
  a.dtype_momentum = *DType(aq("dtype_momentum"), /*none_ok=*/false);
  const Value factor_map = aq("factor_map");
  gin::Refuse(!factor_map.is_none(), factor_map,
              "set logical_factor_rules (e.g. @adafactor.standard_logical_factor_rules()) "
              "instead");
  const Value rules = aq("logical_factor_rules");
  if (rules.kind() == Value::Kind::kDict) {
    optim::LogicalFactorRules r;
    for (const auto& [k, v] : rules.AsDict()) {
      r[k.AsString()] = v.is_none() ? optim::FactorDim::kNone
                                    : optim::FactorDimFromName(v.AsString(), gin::Where(v));
    }
    a.logical_factor_rules = std::move(r);
  } else if (!rules.is_none()) {
    const std::string& kind =
        gin::ExpectOneOf(rules, {kFactorRules, kPromptFactorRules}, "logical_factor_rules");
    gin::ExpectReference(rules, kind, true, scope);
    a.logical_factor_rules = optim::StandardLogicalFactorRules();
    if (kind == kPromptFactorRules) {
      for (const char* axis : {"prompt", "tasks", "prompt+embed", "prompt_embed"}) {
        (*a.logical_factor_rules)[axis] = optim::FactorDim::kNone;
      }
      (*a.logical_factor_rules)["batch"] = optim::FactorDim::kBatch;
    }
  }
  a.weight_decay_rate_lr_exponent = OptionalFloat(aq("weight_decay_rate_lr_exponent"));
  a.global_norm_clip_threshold = OptionalFloat(aq("global_norm_clip_threshold"));
  a.max_parameter_scale = OptionalFloat(aq("max_parameter_scale"));
  const Value skip = aq("skip_nan_updates");
  a.skip_nan_updates = !skip.is_none() && skip.AsBool();
  return a;
}

}  // namespace

void RegisterOptimizerConfigurables(gin::Registry& r) {
  using namespace gin::spec;
  r.Register({kAdafactor,
              {Optional("learning_rate", T::kOptionalFloat, None(),
                        "Set by the trainer's learning_rate_fn; leave None."),
               Optional("factored", T::kBool, B(true)),
               Optional("multiply_by_parameter_scale", T::kBool, B(true)),
               Optional("beta1", T::kOptionalFloat, None(), "Momentum; None = no m slot."),
               Optional("decay_rate", T::kFloat, F(0.8)),
               Optional("step_offset", T::kInt, I(0)),
               Optional("clipping_threshold", T::kOptionalFloat, F(1.0)),
               Optional("weight_decay_rate", T::kOptionalFloat, None()),
               Optional("min_dim_size_to_factor", T::kInt, I(128)),
               Optional("epsilon1", T::kFloat, F(1e-30)),
               Optional("epsilon2", T::kFloat, F(1e-3)),
               Optional("dtype_momentum", T::kString, S("float32"), "'float32' or 'bfloat16'."),
               Optional("factor_map", T::kAny, None(), "Not supported: use logical_factor_rules."),
               Optional("logical_factor_rules", T::kAny, None(),
                        "@adafactor.standard_logical_factor_rules() or a dict from logical axis "
                        "name to 'row', 'column', 'batch' or 'none'."),
               Optional("weight_decay_rate_lr_exponent", T::kOptionalFloat, None()),
               Optional("global_norm_clip_threshold", T::kOptionalFloat, None()),
               Optional("max_parameter_scale", T::kOptionalFloat, None()),
               Optional("skip_nan_updates", T::kOptionalBool, B(false))},
              "The Adafactor optimizer (t5x's own implementation)."});
  r.Register({kFactorRules, {}, "Factorization rules by logical axis name."});
  r.Register({kPromptFactorRules, {},
              "t5x's factorization rules with prompt-tuning's prompt axes unfactored."});
  r.Register({kMultiOptimizer,
              {Required("traversals_and_optimizers", T::kAny,
                        "((@traverse_util.ModelParamTraversal(), @adafactor.Adafactor()), ...): "
                        "each optimizer updates the parameters its traversal selects; the "
                        "others are frozen.")},
              "t5x's MultiOptimizer: optimizers for subsets of the parameters."});
  r.Register({kParamTraversal,
              {Required("filter_fn", T::kReference,
                        "@prompt_utils.match_any() (prompt_tuning.train.utils): the parameters "
                        "whose flax path ('/encoder/layers_0/mlp/wi/kernel') fully matches one "
                        "of its regexes.")},
              "flax's traversal of the model's parameters."});
  r.Register({kMatchAny,
              {Required("regexes", T::kList, "e.g. ['.*/prompt/.*']")},
              "prompt-tuning's filter: a parameter path fully matching any of the regexes."});
  RegisterOptaxConfigurables(r);
  r.Register({kLearningRateScheduler,
              {Optional("factors", T::kString, S("constant * linear_warmup * rsqrt_decay")),
               Optional("base_learning_rate", T::kFloat, F(0.5)),
               Optional("warmup_steps", T::kInt, I(1000)),
               Optional("decay_factor", T::kFloat, F(0.5)),
               Optional("steps_per_decay", T::kInt, I(20000)),
               Optional("steps_per_cycle", T::kInt, I(100000)),
               Optional("step_offset", T::kInt, I(0)),
               Optional("min_learning_rate", T::kFloat, F(1e-8))},
              "Learning rate as a product of named factors."});
}

optim::LearningRateSchedulerConfig ReadLearningRateScheduler(gin::Config& c,
                                                             const std::string& scope) {
  auto lq = [&](const char* p) { return c.Query(kLearningRateScheduler, p, scope); };
  optim::LearningRateSchedulerConfig lr;
  lr.factors = lq("factors").AsString();
  lr.base_learning_rate = lq("base_learning_rate").AsFloat();
  lr.warmup_steps = lq("warmup_steps").AsInt();
  lr.decay_factor = lq("decay_factor").AsFloat();
  lr.steps_per_decay = lq("steps_per_decay").AsInt();
  lr.steps_per_cycle = lq("steps_per_cycle").AsInt();
  lr.step_offset = lq("step_offset").AsInt();
  lr.min_learning_rate = lq("min_learning_rate").AsFloat();
  try {
    optim::LearningRateSchedule check(lr);
  } catch (const Error& e) {
    throw Error(gin::Where(lq("factors")) + ": " + e.what());
  }
  return lr;
}

namespace {

// One optimizer reference (`ref`, called in `outer`): Adafactor, an optax
// optimizer or chain, or (when `multi_ok`) MultiOptimizer of those.
optim::OptimizerConfig ReadOptimizerRef(gin::Config& c, const Value& ref, const std::string& outer,
                                        bool multi_ok) {
  optim::OptimizerConfig o;
  T5XX_CHECK(ref.kind() == Value::Kind::kReference && ref.reference_evaluated(),
             gin::Where(ref) + ": expected @adafactor.Adafactor(), @optimizers.chain(), "
                               "@optimizers.MultiOptimizer() or @optimizers.<name>() (" +
                 optim::optax::SupportedOptaxNames(true) + "), got " + ref.ToGinString());
  const std::string scope = gin::CallScope(outer, ref);
  const std::string& name = ref.reference_name();
  if (name == kAdafactor) {
    o.kind = optim::OptimizerConfig::Kind::kAdafactor;
    o.adafactor = ReadAdafactor(c, scope);
  } else if (name == kMultiOptimizer && multi_ok) {
    o.kind = optim::OptimizerConfig::Kind::kMulti;
    const Value pairs = c.Query(kMultiOptimizer, "traversals_and_optimizers", scope);
    T5XX_CHECK((pairs.kind() == Value::Kind::kList || pairs.kind() == Value::Kind::kTuple) &&
                   !pairs.AsList().empty(),
               gin::Where(pairs) + " = " + pairs.ToGinString() +
                   ": expected ((@traverse_util.ModelParamTraversal(), @adafactor.Adafactor()), ...)");
    for (const Value& pair : pairs.AsList()) {
      T5XX_CHECK((pair.kind() == Value::Kind::kList || pair.kind() == Value::Kind::kTuple) &&
                     pair.AsList().size() == 2,
                 gin::Where(pairs) + ": each entry must be a (traversal, optimizer) pair, got " +
                     pair.ToGinString());
      const Value& traversal = pair.AsList()[0];
      const std::string ts = gin::ExpectReference(traversal, kParamTraversal, true, scope);
      const Value filter = c.Query(kParamTraversal, "filter_fn", ts);
      const std::string fs = gin::ExpectReference(filter, kMatchAny, true, ts);
      const Value regexes = c.Query(kMatchAny, "regexes", fs);
      optim::MultiOptimizerPart part;
      part.traversal.regexes = gin::StringList(regexes);
      part.traversal.where = gin::Where(regexes);
      T5XX_CHECK(!part.traversal.regexes.empty(),
                 gin::Where(regexes) + " is empty: it would select no parameter");
      part.optimizer = ReadOptimizerRef(c, pair.AsList()[1], scope, /*multi_ok=*/false);
      o.multi.push_back(std::move(part));
    }
  } else if (std::optional<optim::OptaxConfig> optax = ReadOptaxOptimizer(c, name, scope)) {
    o.kind = optim::OptimizerConfig::Kind::kOptax;
    o.optax = std::move(*optax);
  } else {
    // An optax transformation where t5x needs an optimizer: t5x wraps it
    // (OptaxWrapper) as optimizers.<name>.
    const std::string optax_prefix = "optax.";
    const std::string hint =
        name.rfind(optax_prefix, 0) == 0
            ? " (@" + name + "() is optax's GradientTransformation; t5x's optimizer_def wraps "
              "it: write @optimizers." + name.substr(optax_prefix.size()) + "())"
            : "";
    throw Error(gin::WhereShort(ref) + ": t5xx supports @adafactor.Adafactor(), @optimizers.chain(), " +
                (multi_ok ? "@optimizers.MultiOptimizer() " : "") + "or @optimizers.<name>() for " +
                optim::optax::SupportedOptaxNames(true) + "; got @" + name + hint);
  }
  return o;
}

}  // namespace

optim::OptimizerConfig ReadOptimizer(gin::Config& c, const std::string& model_name,
                                     const std::string& model_scope) {
  const Value opt_def = c.Query(model_name, "optimizer_def", model_scope);
  optim::OptimizerConfig o = ReadOptimizerRef(c, opt_def, model_scope, /*multi_ok=*/true);
  optim::MakeOptimizer(o);  // option checks; errors name the gin keys
  return o;
}

}  // namespace t5xx::run
