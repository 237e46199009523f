// Adafactor as t5x's t5x/adafactor.py -- the implementation of adafactor.h.
#include "t5xx/optim/adafactor.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "t5xx/optim/adafactor_fused.h"
#include "t5xx/optim/adafactor_grouped.h"
#include "t5xx/optim/adafactor_math.h"
#include "t5xx/util/error.h"

namespace t5xx::optim {
namespace {

constexpr char kGin[] = "adafactor.Adafactor.";

std::string ShapeString(at::IntArrayRef shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string AxesString(const std::vector<std::string>& axes) {
  std::string s = "(";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? ", '" : "'") + axes[i] + "'";
  return s + ")";
}

const char* FactorDimName(FactorDim d) {
  switch (d) {
    case FactorDim::kNone: return "NONE";
    case FactorDim::kBatch: return "BATCH";
    case FactorDim::kRow: return "ROW";
    case FactorDim::kColumn: return "COLUMN";
  }
  return "?";
}

std::vector<int64_t> AllDims(int64_t rank) {
  std::vector<int64_t> d(static_cast<size_t>(rank));
  std::iota(d.begin(), d.end(), 0);
  return d;
}

// Inserts size-1 dims at `dims` (ascending, indices in the result), as
// jnp.expand_dims(x, axis=dims).
at::Tensor ExpandDims(at::Tensor x, const std::vector<int64_t>& dims) {
  for (int64_t d : dims) x = x.unsqueeze(d);
  return x;
}

// t5x's set_param_axes.apply_rules for one parameter of logical axes
// `axes`: each axis's FactorDim; ROW/COLUMN become NONE unless both occur.
// Throws t5xx::Error for an axis the rules lack or ROW+COLUMN+NONE.
std::vector<FactorDim> RuleOf(const AdafactorConfig& c, const std::string& name,
                              const std::vector<std::string>& axes) {
  std::vector<FactorDim> rule;
  for (const auto& axis : axes) {
    auto it = c.logical_factor_rules->find(axis);
    T5XX_CHECK(it != c.logical_factor_rules->end(),
          std::string(kGin) + "logical_factor_rules has no rule for logical axis '" + axis +
              "' of parameter " + name + " " + AxesString(axes) +
              "; add it to the rules ('row', 'column', 'batch' or 'none')");
    rule.push_back(it->second);
  }
  auto has = [&](FactorDim d) { return std::find(rule.begin(), rule.end(), d) != rule.end(); };
  if (has(FactorDim::kRow) && has(FactorDim::kColumn) && has(FactorDim::kNone)) {
    std::string r;
    for (size_t i = 0; i < rule.size(); ++i) {
      r += (i ? ", " : "") + std::string(FactorDimName(rule[i]));
    }
    throw Error(std::string(kGin) + "logical_factor_rules give the incomplete Adafactor spec (" +
                r + ") for parameter " + name + " " + AxesString(axes) +
                " (t5x refuses ROW and COLUMN together with NONE); map every axis of it to "
                "'row', 'column' or 'batch', or none of them to 'row'/'column'");
  }
  if (!has(FactorDim::kRow) || !has(FactorDim::kColumn)) {
    for (auto& d : rule) {
      if (d == FactorDim::kRow || d == FactorDim::kColumn) d = FactorDim::kNone;
    }
  }
  return rule;
}

// Fills row_dims, col_dims, averaging_dims and is_factored from an explicit
// rule (one FactorDim per parameter dim).
void PlanFromRule(const std::vector<FactorDim>& rule, AdafactorParamState& s) {
  s.averaging_dims.clear();
  for (int64_t i = 0; i < static_cast<int64_t>(rule.size()); ++i) {
    if (rule[i] == FactorDim::kRow) s.row_dims.push_back(i);
    if (rule[i] == FactorDim::kColumn) s.col_dims.push_back(i);
    if (rule[i] != FactorDim::kBatch) s.averaging_dims.push_back(i);
  }
  s.is_factored = !s.row_dims.empty();  // rows and cols are both set or both empty
}

// t5x's _parse_rule + _factored_dims for one parameter: fills is_factored,
// row_dims, col_dims and averaging_dims.
void PlanFactoring(const AdafactorConfig& c, const models::Param& p,
                   const std::vector<int64_t>& shape, AdafactorParamState& s) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  s.averaging_dims = AllDims(rank);
  if (!c.factored) return;  // t5x: factor_rule = None

  if (c.logical_factor_rules) {
    // set_param_axes: map every logical axis, even where the rule is then
    // ignored (rank <= 2), so a missing rule is always an error.
    const std::vector<FactorDim> rule = RuleOf(c, p.name, p.axes);
    const bool batch = std::find(rule.begin(), rule.end(), FactorDim::kBatch) != rule.end();
    if (!(rank <= 2 && !batch)) {  // else t5x falls back to the heuristic
      PlanFromRule(rule, s);
      return;
    }
  }
  T5XX_CHECK(rank <= 2, std::string(kGin) + "parameter " + p.name + " has rank " +
                       std::to_string(rank) + " (shape " + ShapeString(shape) + ", axes " +
                       AxesString(p.axes) +
                       "); t5x factors a parameter of rank > 2 only with explicit rules: set " +
                       kGin + "logical_factor_rules = @adafactor.standard_logical_factor_rules()" +
                       " (or " + kGin + "factored = False)");
  if (rank < 2) return;
  // np.argsort of two elements: ties keep index order.
  const int64_t second = shape[0] <= shape[1] ? 0 : 1, largest = 1 - second;
  if (shape[second] < c.min_dim_size_to_factor) return;
  s.is_factored = true;
  s.row_dims = {second};
  s.col_dims = {largest};
}

// PlanFactoring for a layer of a scanned stack `stack`: t5x's plan of the
// stacked array (axes: p's, with 'joined_kv' as t5x's 'heads', 'kv' and
// 'layers' at param_scan_axis) in p's own dims. With 'layers' a BATCH dim
// (standard_logical_factor_rules) the stacked rule is explicit, so it
// factors even small 2-D kernels, and every statistic is per layer. When
// the averaging spans 'layers' (factored = False, or 'layers' mapped to
// NONE), s.stack_averaged asks Apply to update the stack as one array.
void PlanScannedFactoring(const AdafactorConfig& c, const models::Param& p,
                          const std::string& stack, int scan_axis, AdafactorParamState& s) {
  s.stack = stack;
  s.averaging_dims = AllDims(p.value.dim());
  if (!c.factored) {  // t5x: factor_rule = None, averaging over every dim
    s.stack_averaged = true;
    return;
  }
  T5XX_CHECK(c.logical_factor_rules.has_value(),
             std::string(kGin) + "logical_factor_rules is None, but scalable_t5's scan_layers = "
             "True stacks parameter " + p.name + " into " + stack + " of rank > 2, which t5x "
             "factors only with explicit rules: set " + kGin + "logical_factor_rules = "
             "@adafactor.standard_logical_factor_rules() (or " + kGin + "factored = False, or "
             "network.T5Config.scan_layers = False)");
  std::vector<std::string> axes;
  std::vector<std::vector<size_t>> groups;  // p's dim -> stacked axes (before 'layers')
  for (const std::string& a : p.axes) {
    groups.emplace_back();
    for (const std::string& part : a == "joined_kv" ? std::vector<std::string>{"heads", "kv"}
                                                    : std::vector<std::string>{a}) {
      groups.back().push_back(axes.size());
      axes.push_back(part);
    }
  }
  const size_t at = std::min<size_t>(static_cast<size_t>(scan_axis), axes.size());
  axes.insert(axes.begin() + static_cast<std::ptrdiff_t>(at), "layers");
  const std::vector<FactorDim> stacked = RuleOf(c, stack, axes);
  const FactorDim layers = stacked[at];
  std::vector<FactorDim> rule;
  for (const auto& g : groups) {
    const FactorDim d = stacked[g[0] >= at ? g[0] + 1 : g[0]];
    for (size_t k : g) {
      T5XX_CHECK(stacked[k >= at ? k + 1 : k] == d,
                 std::string(kGin) + "logical_factor_rules map 'heads' and 'kv' of " + stack +
                     " " + AxesString(axes) + " to different factor dims; t5xx keeps them "
                     "joined in " + p.name + ": map both to the same");
    }
    rule.push_back(d);
  }
  if (layers == FactorDim::kBatch) {
    PlanFromRule(rule, s);
    return;
  }
  T5XX_CHECK(layers == FactorDim::kNone &&
                 std::find(rule.begin(), rule.end(), FactorDim::kRow) == rule.end(),
             std::string(kGin) + "logical_factor_rules map 'layers' of " + stack + " " +
                 AxesString(axes) + " to " + FactorDimName(layers) + "; t5xx factors scanned "
                 "stacks with 'layers' as 'batch' (standard_logical_factor_rules) or 'none'");
  s.stack_averaged = true;  // unfactored, statistics over the whole stack
}

std::vector<int64_t> Without(const std::vector<int64_t>& shape, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (std::find(dims.begin(), dims.end(), i) == dims.end()) out.push_back(shape[i]);
  }
  return out;
}

}  // namespace

LogicalFactorRules StandardLogicalFactorRules() {
  using F = FactorDim;
  return {{"vocab", F::kColumn},        {"embed", F::kRow},
          {"mlp", F::kColumn},          {"heads", F::kColumn},
          {"kv", F::kColumn},           {"joined_kv", F::kColumn},
          {"relpos_buckets", F::kNone}, {"layers", F::kBatch},
          {"stack", F::kBatch},         {"q_wi_fused", F::kColumn},
          {"o_wo_fused", F::kColumn},   {"multiquery_heads", F::kColumn},
          {"kv_fused", F::kColumn},     {"layer_norm_scale", F::kNone},
          {"mlp_activations", F::kColumn}};
}

FactorDim FactorDimFromName(const std::string& name, const std::string& what) {
  std::string n = name;
  for (auto& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (n == "row") return FactorDim::kRow;
  if (n == "col" || n == "column") return FactorDim::kColumn;
  if (n == "batch") return FactorDim::kBatch;
  if (n == "none" || n == "unfactorized") return FactorDim::kNone;
  throw Error(what + ": unknown factor dim '" + name +
              "'; use 'row', 'col'/'column', 'batch' or 'none'/'unfactorized'");
}

void AdafactorConfig::Validate() const {
  const std::string g = kGin;
  auto positive = [&](const std::optional<double>& v, const char* name) {
    T5XX_CHECK(!v || *v > 0, g + name + " = " + SettingText(v.value_or(0)) +
                            " must be > 0 (or None to switch it off)");
  };
  T5XX_CHECK(!beta1 || (*beta1 >= 0 && *beta1 < 1),
        g + "beta1 = " + SettingText(beta1.value_or(0)) + " must be in [0, 1) (or None: no momentum)");
  T5XX_CHECK(decay_rate >= 0, g + "decay_rate = " + SettingText(decay_rate) + " must be >= 0 (t5x: 0.8)");
  T5XX_CHECK(step_offset >= 0,
        g + "step_offset = " + std::to_string(step_offset) + " must be >= 0");
  positive(clipping_threshold, "clipping_threshold");
  positive(global_norm_clip_threshold, "global_norm_clip_threshold");
  positive(max_parameter_scale, "max_parameter_scale");
  T5XX_CHECK(!weight_decay_rate || (*weight_decay_rate >= 0 && *weight_decay_rate <= 1),
        g + "weight_decay_rate = " + SettingText(weight_decay_rate.value_or(0)) +
            " must be in [0, 1] (or None)");
  T5XX_CHECK(min_dim_size_to_factor >= 0, g + "min_dim_size_to_factor = " +
                                         std::to_string(min_dim_size_to_factor) +
                                         " must be >= 0");
  T5XX_CHECK(epsilon1 >= 0, g + "epsilon1 = " + SettingText(epsilon1) + " must be >= 0 (t5x: 1e-30)");
  T5XX_CHECK(epsilon2 >= 0, g + "epsilon2 = " + SettingText(epsilon2) + " must be >= 0 (t5x: 1e-3)");
  T5XX_CHECK(dtype_momentum == at::kFloat || dtype_momentum == at::kBFloat16,
        g + "dtype_momentum must be 'float32' or 'bfloat16'");
}

Adafactor::Adafactor(AdafactorConfig config) : config_(std::move(config)) {
  config_.Validate();
}

void Adafactor::Init(const models::ParamStore& params) {
  std::map<std::string, AdafactorParamState> state;
  std::vector<std::string> order;
  for (const auto& p : params.params()) {
    AdafactorParamState s;
    s.param_rank = p.value.dim();
    const std::vector<int64_t> local = p.value.sizes().vec();
    const std::optional<std::string> stack =
        scanned_ && scanned_->stack_of ? scanned_->stack_of(p.name) : std::nullopt;
    if (stack) {
      PlanScannedFactoring(config_, p, *stack, scanned_->param_scan_axis, s);
      T5XX_CHECK(!s.stack_averaged || reducer_->GlobalShape(p.name, p.value.sizes()) == local,
                 std::string(kGin) + "factored = False with scan_layers = True averages over "
                 "the whole stack " + *stack + ", which t5xx does with every layer whole on "
                 "each process; " + p.name + " is sharded here");
    } else {
      PlanFactoring(config_, p, reducer_->GlobalShape(p.name, p.value.sizes()), s);
    }
    auto zeros = [](const std::vector<int64_t>& shape, at::ScalarType t = at::kFloat) {
      return at::zeros(shape, at::TensorOptions().dtype(t));
    };
    s.v_row = zeros({1});
    s.v_col = zeros({1});
    s.v = zeros({1});
    s.m = zeros({1});
    if (s.is_factored) {
      s.v_row = zeros(Without(local, s.col_dims));
      s.v_col = zeros(Without(local, s.row_dims));
    } else {
      s.v = zeros(local);
    }
    if (config_.beta1) s.m = zeros(local, config_.dtype_momentum);
    const auto dev = p.value.device();
    for (at::Tensor* t : {&s.v_row, &s.v_col, &s.v, &s.m}) *t = t->to(dev);
    state[p.name] = std::move(s);
    order.push_back(p.name);
  }
  state_ = std::move(state);
  order_ = std::move(order);
  groups_ = std::make_shared<AdafactorGroups>();
  step_ = 0;
  initialized_ = true;
}

namespace {

// The general path's update of one parameter `p` (state `s`, float32
// gradient `grad`): ATen ops, any dtype and device; t5x's Adafactor
// (adafactor.py: _compute_update) step for step.
void GeneralUpdate(const AdafactorConfig& c, const Reducer& r, models::Param& p,
                   AdafactorParamState& s, const at::Tensor& grad, double learning_rate,
                   float decay, float mixing, const std::optional<double>& wd) {
  const at::Tensor param = p.value;
  auto mean = [&](const at::Tensor& x, const std::vector<int64_t>& dims, bool keepdim,
                  const std::vector<int64_t>& param_dims) {
    return ShardedMean(x, dims, keepdim, r, p.name, param_dims);
  };
  const std::optional<double> keep = wd ? std::optional<double>(1.0 - *wd) : std::nullopt;
  const AdafactorNewValues n = AdafactorUpdateValues(
      c, s, param, grad, s.v_row, s.v_col, s.v, s.m,
      at::scalar_tensor(learning_rate, param.options().dtype(at::kFloat)),
      static_cast<double>(decay), static_cast<double>(mixing), keep, mean, ExpandDims);
  const at::Tensor &new_v_row = n.v_row, &new_v_col = n.v_col, &new_v = n.v, &new_m = n.m,
                   &new_param = n.param;
  if (s.is_factored) {
    s.v_row.copy_(new_v_row);
    s.v_col.copy_(new_v_col);
  } else {
    s.v.copy_(new_v);
  }
  if (c.beta1) s.m.copy_(new_m);  // cast to dtype_momentum
  param.copy_(new_param);
}

// The update of the layers `members` of one scanned stack whose statistics
// average over the whole stack (t5x's update of the stacked array when it
// is unfactored and 'layers' is not a BATCH dim, e.g. factored = False):
// the layers flattened and concatenated, one GeneralUpdate over that, the
// results copied back. Elementwise steps and the means over every element
// do not depend on the layout, so the concatenation stands for the stacked
// array. Its layers are whole on this process (checked at Init).
void StackUpdate(const AdafactorConfig& c, const std::string& stack,
                 const std::vector<size_t>& members, models::ParamStore& params,
                 std::map<std::string, AdafactorParamState>& states,
                 const std::vector<at::Tensor>& grads, double learning_rate, float decay,
                 float mixing, const std::optional<double>& wd) {
  std::vector<at::Tensor> value, grad, v, m;
  for (size_t i : members) {
    const models::Param& p = params.params()[i];
    const AdafactorParamState& s = states.at(p.name);
    value.push_back(p.value.reshape({-1}));
    grad.push_back(grads[i].reshape({-1}));
    v.push_back(s.v.reshape({-1}));
    if (c.beta1) m.push_back(s.m.reshape({-1}));
  }
  models::Param whole;
  whole.name = stack;
  whole.value = at::cat(value);
  AdafactorParamState ws;
  ws.v_row = ws.v_col = at::zeros({1}, whole.value.options().dtype(at::kFloat));
  ws.v = at::cat(v);
  ws.m = c.beta1 ? at::cat(m) : ws.v_row;
  ws.averaging_dims = {0};
  ws.param_rank = 1;
  GeneralUpdate(c, LocalReducer(), whole, ws, at::cat(grad), learning_rate, decay, mixing, wd);
  int64_t at = 0;
  for (size_t i : members) {
    models::Param& p = params.params()[i];
    AdafactorParamState& s = states.at(p.name);
    const int64_t n = p.value.numel();
    p.value.copy_(whole.value.narrow(0, at, n).view(p.value.sizes()));
    s.v.copy_(ws.v.narrow(0, at, n).view(s.v.sizes()));
    if (c.beta1) s.m.copy_(ws.m.narrow(0, at, n).view(s.m.sizes()));
    at += n;
  }
}

}  // namespace

double Adafactor::Apply(models::ParamStore& params, double learning_rate) {
  if (!initialized_) throw std::logic_error("Adafactor::Apply before Init");
  at::NoGradGuard no_grad;
  const AdafactorConfig& c = config_;
  const Reducer& r = *reducer_;

  std::vector<at::Tensor> grads;
  std::vector<std::string> names;
  for (auto& p : params.params()) {
    const at::Tensor& g = p.value.grad();
    if (!g.defined()) throw std::logic_error("Adafactor: parameter " + p.name + " has no gradient");
    grads.push_back(g.to(at::kFloat));
    names.push_back(p.name);
  }
  // Which parameters the fused path updates (adafactor_fused.h).
  std::vector<bool> fused(grads.size(), false);
  std::vector<FusedAdafactorParam> fused_params;
  for (size_t i = 0; i < grads.size(); ++i) {
    models::Param& p = params.params()[i];
    AdafactorParamState& s = state_.at(p.name);
    if (s.stack_averaged || !use_fused_cpu_update_ ||
        !FusedAdafactorCovers(c, s, p.value, p.value.grad())) {
      continue;
    }
    fused[i] = true;
    fused_params.push_back({&p.name, p.value, grads[i], &s});
  }

  // Which of the others the grouped general path updates
  // (adafactor_grouped.h); the groups are made once for a set of them.
  std::vector<bool> grouped(grads.size(), false);
  std::vector<size_t> candidates;
  for (size_t i = 0; i < grads.size(); ++i) {
    const models::Param& p = params.params()[i];
    if (!fused[i] && use_grouped_update_ && GroupableParam(c, p, state_.at(p.name), r)) {
      grouped[i] = true;
      candidates.push_back(i);
    }
  }
  if (candidates != groups_->candidates) {
    groups_->groups = MakeAdafactorGroups(candidates, params, state_);
    groups_->candidates = candidates;
  }
  at::Tensor grad_scale;  // global-norm clipping's factor, when on

  // Scalars in float32, as t5x computes them.
  AdafactorStepScalars k;
  k.learning_rate = learning_rate;
  // t5x: `if hyper_params.global_norm_clip_threshold:` (None and 0 are off).
  if (c.global_norm_clip_threshold && *c.global_norm_clip_threshold != 0) {
    const float thr = static_cast<float>(*c.global_norm_clip_threshold);
    at::Tensor norm = ShardedGlobalNorm(grads, names, r);
    // scale = thr * min(1/thr, 1/norm): 1 below the threshold.
    at::Tensor scale =
        at::minimum(at::scalar_tensor(1.0f / thr, norm.options()), norm.reciprocal()) * thr;
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!fused[i] && !grouped[i]) grads[i] = grads[i] * scale;
    }
    if (!fused_params.empty()) k.grad_scale = scale.item<float>();
    grad_scale = scale;
  }
  const float t = static_cast<float>(step_ - c.step_offset) + 1.0f;
  const float decay = 1.0f - std::pow(t, -static_cast<float>(c.decay_rate));
  const float mixing = 1.0f - decay;
  std::optional<double> wd = c.weight_decay_rate;
  if (c.weight_decay_rate_lr_exponent && *c.weight_decay_rate_lr_exponent != 0) {
    wd = ((wd && *wd != 0) ? *wd : 1.0) * std::pow(learning_rate, *c.weight_decay_rate_lr_exponent);
  }
  k.decay = decay;
  k.mixing = mixing;
  k.weight_decay = wd;
  FusedAdafactorUpdate(c, k, fused_params, r);

  // The general path: ATen ops, any dtype and device; grouped, then alone.
  std::optional<at::Device> scalars_on;  // where the step's scalars were set
  for (AdafactorGroup& g : groups_->groups) {
    const at::Device dev = params.params()[g.members.front()].value.device();
    if (scalars_on != dev) {
      groups_->scalars.Set(k, dev);
      scalars_on = dev;
    }
    std::vector<GroupMember> members;
    for (size_t i : g.members) {
      models::Param& p = params.params()[i];
      members.push_back({&p, grads[i], &state_.at(p.name)});
    }
    GroupedAdafactorUpdate(c, groups_->scalars, wd.has_value(), grad_scale, members, g);
  }
  std::map<std::string, std::vector<size_t>> stacks;  // stack_averaged layers by stack
  for (size_t i = 0; i < grads.size(); ++i) {
    if (fused[i] || grouped[i]) continue;
    models::Param& p = params.params()[i];
    AdafactorParamState& s = state_.at(p.name);
    if (s.stack_averaged) {
      stacks[s.stack].push_back(i);
      continue;
    }
    GeneralUpdate(c, r, p, s, grads[i], learning_rate, decay, mixing, wd);
  }
  for (const auto& [stack, members] : stacks) {
    StackUpdate(c, stack, members, params, state_, grads, learning_rate, decay, mixing, wd);
  }
  ++step_;
  return learning_rate;
}

std::vector<StateArray> Adafactor::StateArrays() const {
  // t5x's derive_logical_axes: v_row/v_col have no axes (inline), v has the
  // parameter's axes when used, m when beta1 is set.
  std::vector<StateArray> out;
  for (const auto& name : order_) {
    const AdafactorParamState& s = state_.at(name);
    const std::string base = "param_states." + name + ".";
    std::vector<int64_t> all(static_cast<size_t>(s.param_rank));
    for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int64_t>(d);
    auto keep = [&](const std::vector<int64_t>& dropped) {
      std::vector<int64_t> kept;
      for (int64_t d : all) {
        if (std::find(dropped.begin(), dropped.end(), d) == dropped.end()) kept.push_back(d);
      }
      return kept;
    };
    // Unused slots are (1,) placeholders of no parameter dims.
    const std::vector<int64_t> none;
    out.push_back({base + "v_row", s.v_row, true, s.is_factored ? keep(s.col_dims) : none});
    out.push_back({base + "v_col", s.v_col, true, s.is_factored ? keep(s.row_dims) : none});
    out.push_back({base + "v", s.v, s.v.dim() == 1 && s.v.size(0) == 1, s.is_factored ? none : all});
    out.push_back({base + "m", s.m, !config_.beta1.has_value(), config_.beta1 ? all : none});
  }
  return out;
}

}  // namespace t5xx::optim
