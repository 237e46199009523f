// Adafactor as t5x's t5x/adafactor.py (Shazeer & Stern, "Adafactor:
// Adaptive Learning Rates with Sublinear Memory Cost", 2018), with t5x's
// option names and defaults (gin: adafactor.Adafactor).
//
// Per parameter p (float32) with gradient g at step t (counting from 0),
// learning rate lr (the trainer's learning_rate_fn(t)):
//   g       *= min(1, global_norm_clip_threshold / ||all grads||_2)   [if set]
//   decay    = 1 - (t - step_offset + 1)^(-decay_rate),  mixing = 1 - decay
//   scale    = lr * clamp(rms_A(p), epsilon2, max_parameter_scale)
//              [rms only if multiply_by_parameter_scale; else scale = lr]
//   g2       = g^2 + epsilon1
//   factored: v_row = decay*v_row + mixing*mean(g2, COL dims)
//             v_col = decay*v_col + mixing*mean(g2, ROW dims)
//             u = g * (v_row / mean(v_row, ROW dims))^-1/2 * v_col^-1/2
//   else:     v = decay*v + mixing*g2,  u = g * v^-1/2
//   u       /= max(1, rms_A(u) / clipping_threshold)            [if set]
//   d        = scale * u
//   m        = beta1*m + (1-beta1)*d,  d = m                   [if beta1]
//   p        = (1 - wd)*p - d                                   [wd if set]
//   skip_nan_updates: every NaN element of p and the slots keeps its old
//   value.
// rms_A / mean over the averaging dims A = all dims except BATCH dims (kept,
// so scanned layers get one scale each). wd = weight_decay_rate, times
// lr^weight_decay_rate_lr_exponent when that is set (t5x: a wd of None or 0
// then counts as 1).
//
// Which dims are ROW / COLUMN (t5x's _parse_rule / _factored_dims):
//   * factored = False: nothing is factored.
//   * no logical_factor_rules (t5x's HEURISTIC_RULE): rank <= 2 only; the
//     two largest dims (ties keep index order), factored when the second
//     largest is >= min_dim_size_to_factor: ROW = the second largest,
//     COLUMN = the largest. Rank > 2 is an error, as in t5x.
//   * logical_factor_rules: each parameter's logical axes map to ROW,
//     COLUMN, BATCH or NONE; ROW/COLUMN only count when both occur (else
//     they become NONE), and ROW+COLUMN+NONE together is an error. A
//     parameter of rank <= 2 without BATCH dims still uses the heuristic
//     (t5x ignores the rule there). min_dim_size_to_factor does not apply
//     to rule-factored parameters.
//
// Slots use t5x's names and shapes: v_row (p without COLUMN dims), v_col (p
// without ROW dims), v (p's shape), m (p's shape, dtype_momentum); unused
// slots are (1,) zeros. All float32 except m.
//
// Shardable: every mean / RMS / norm goes through the Reducer (partitioning/collectives/reducer.h);
// factoring is decided from Reducer::GlobalShape.
//
// Two implementations of the same formulas: float32 CPU parameters take the
// fused path (adafactor_fused.h: three passes of plain loops over memory on
// libtorch's intra-op threads; FusedAdafactorCovers gives the exact rule:
// skip_nan_updates off, float32 CPU parameter and gradient, each role's dims
// consecutive), everything else (skip_nan_updates, other dtypes, GPU
// tensors) the general path of whole-tensor ATen ops -- for parameters of
// equal shape and plan whose statistics are local, stacked into groups and
// updated together (adafactor_grouped.h), else one parameter at a time.
// They agree to float32 rounding (tests/optim/adafactor_fused_test.cc,
// adafactor_grouped_test.cc), the fused one on any number of threads bit
// for bit.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/models/param_store.h"
#include "t5xx/optim/optimizer.h"

namespace t5xx::optim {

// t5x.adafactor.FactorDim.
enum class FactorDim { kNone, kBatch, kRow, kColumn };

// Logical axis name -> FactorDim (t5x's logical_factor_rules).
using LogicalFactorRules = std::map<std::string, FactorDim>;

// t5x.adafactor.standard_logical_factor_rules(): vocab/mlp/heads/kv/
// joined_kv/q_wi_fused/o_wo_fused/multiquery_heads/kv_fused/mlp_activations
// -> COLUMN, embed -> ROW, layers/stack -> BATCH, relpos_buckets/
// layer_norm_scale -> NONE.
LogicalFactorRules StandardLogicalFactorRules();

// t5x.adafactor.factor_name_to_factordim: 'row', 'col', 'column', 'batch',
// 'none', 'unfactorized' (any case). Throws t5xx::Error naming `what` (the
// gin key) and the accepted names otherwise.
FactorDim FactorDimFromName(const std::string& name, const std::string& what);

struct AdafactorConfig {
  bool factored = true;
  bool multiply_by_parameter_scale = true;
  std::optional<double> beta1;  // momentum; None = no m slot
  double decay_rate = 0.8;
  int64_t step_offset = 0;
  std::optional<double> clipping_threshold = 1.0;
  std::optional<double> weight_decay_rate;
  int64_t min_dim_size_to_factor = 128;
  double epsilon1 = 1e-30;
  double epsilon2 = 1e-3;
  at::ScalarType dtype_momentum = at::kFloat;  // float32 or bfloat16
  std::optional<LogicalFactorRules> logical_factor_rules;
  std::optional<double> weight_decay_rate_lr_exponent;
  std::optional<double> global_norm_clip_threshold;
  std::optional<double> max_parameter_scale;
  bool skip_nan_updates = false;

  // Throws t5xx::Error naming the gin key (adafactor.Adafactor.<name>), the
  // bad value and the accepted range: beta1 in [0, 1), decay_rate >= 0,
  // step_offset >= 0, clipping_threshold / global_norm_clip_threshold /
  // max_parameter_scale > 0, weight_decay_rate in [0, 1],
  // min_dim_size_to_factor >= 0, epsilon1/epsilon2 >= 0, dtype_momentum
  // float32 or bfloat16.
  void Validate() const;
};

struct AdafactorParamState {
  at::Tensor v_row, v_col, v, m;
  bool is_factored = false;
  // Parameter dims averaged over into v_col (t5x's d1: ROW dims) and into
  // v_row (t5x's d0: COLUMN dims); empty when not factored.
  std::vector<int64_t> row_dims, col_dims;
  // Dims the RMS statistics average over (all but BATCH dims).
  std::vector<int64_t> averaging_dims;
  int64_t param_rank = 0;  // the parameter's number of dims
  // scan_layers (Optimizer::set_scanned_layers): the stacked array this
  // parameter is a layer of, or empty; stack_averaged: its statistics
  // average over the whole stack (unfactored), so Apply updates the stack's
  // layers together.
  std::string stack;
  bool stack_averaged = false;
};

struct AdafactorGroups;  // adafactor_grouped.h

class Adafactor : public Optimizer {
 public:
  // Throws t5xx::Error from config.Validate().
  explicit Adafactor(AdafactorConfig config);

  std::string gin_name() const override { return "adafactor.Adafactor"; }
  // Throws t5xx::Error for a rank > 2 parameter without factor rules (when
  // factored), a logical axis the rules lack, or an incomplete rule.
  void Init(const models::ParamStore& params) override;
  double Apply(models::ParamStore& params, double learning_rate) override;
  // param_states.<path>.{v_row, v_col, v, m} for every parameter, in order.
  std::vector<StateArray> StateArrays() const override;

  const AdafactorConfig& config() const { return config_; }
  const std::map<std::string, AdafactorParamState>& state() const { return state_; }

  // Whether Apply may use the fused path for the parameters it covers
  // (default true); false sends every parameter through the general path
  // (for tests and A/B measurements).
  void set_use_fused_cpu_update(bool use) { use_fused_cpu_update_ = use; }
  // Whether the general path stacks parameters into groups (default true;
  // adafactor_grouped.h) or updates each alone (false: the reference, for
  // tests and A/B measurements). Set before the first Apply.
  void set_use_grouped_update(bool use) { use_grouped_update_ = use; }

 private:
  AdafactorConfig config_;
  bool use_fused_cpu_update_ = true;
  bool use_grouped_update_ = true;
  // The grouped updates' state (made by Init; shared by copies, as the
  // state tensors are).
  std::shared_ptr<AdafactorGroups> groups_;
  std::map<std::string, AdafactorParamState> state_;
  std::vector<std::string> order_;  // parameter paths in ParamStore order
};

}  // namespace t5xx::optim
