// Adafactor's update as whole-tensor ATen ops (adafactor.h's formulas, t5x's
// adafactor.py _compute_update step for step), written once for the two
// general paths: one parameter at a time (adafactor.cc, statistics through
// the Reducer) and stacked groups (adafactor_grouped.cc, a leading member
// dim). What differs between them comes in as arguments: how a statistic's
// mean is taken and how a reduced array is broadcast back (`mean`,
// `expand`, both in the parameter's own dims), and the step's scalars
// (numbers, or 0-d tensors on the device).
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "t5xx/optim/adafactor.h"

namespace t5xx::optim {

// The step's new values; the caller writes them back.
struct AdafactorNewValues {
  at::Tensor param, v_row, v_col, v, m;  // v_row/v_col (factored) or v; m with beta1
};

// x where it is not NaN, else old (jnp.where(jnp.isnan(x), old, x)):
// skip_nan_updates.
inline at::Tensor KeepOldWhereNan(const at::Tensor& x, const at::Tensor& old) {
  return at::where(x.isnan(), old.to(x.scalar_type()), x);
}

// One step for `param` with float32 `grad` and slots (v_row, v_col, v, m)
// under `plan`'s factoring. `mean(x, dims, keepdim, param_dims)`: the mean
// of x over its dims `dims` (param_dims: the same dims in the parameter's
// index space); `expand(x, dims)`: x with size-1 dims inserted at `dims`.
// learning_rate: float32 0-d tensor; decay, mixing: float32 factors;
// keep: 1 - weight decay, or nullopt for none.
template <typename Factor, typename Mean, typename Expand>
AdafactorNewValues AdafactorUpdateValues(const AdafactorConfig& c, const AdafactorParamState& plan,
                                         const at::Tensor& param, const at::Tensor& grad,
                                         const at::Tensor& v_row, const at::Tensor& v_col,
                                         const at::Tensor& v, const at::Tensor& m,
                                         const at::Tensor& learning_rate, const Factor& decay,
                                         const Factor& mixing, const std::optional<Factor>& keep,
                                         Mean mean, Expand expand) {
  const std::vector<int64_t>& avg = plan.averaging_dims;
  at::Tensor update_scale = learning_rate;
  if (c.multiply_by_parameter_scale) {
    at::Tensor param_scale = mean(param * param, avg, /*keepdim=*/true, avg).sqrt();
    param_scale = at::clamp_min(param_scale, c.epsilon2);
    if (c.max_parameter_scale) param_scale = at::clamp_max(param_scale, *c.max_parameter_scale);
    update_scale = update_scale * param_scale;
  }

  const at::Tensor grad_sqr = grad * grad + c.epsilon1;
  AdafactorNewValues out;
  at::Tensor y;
  if (plan.is_factored) {
    out.v_row = v_row * decay + mean(grad_sqr, plan.col_dims, false, plan.col_dims) * mixing;
    out.v_col = v_col * decay + mean(grad_sqr, plan.row_dims, false, plan.row_dims) * mixing;
    std::vector<int64_t> reduced_rows;  // ROW dims' positions in v_row (COLUMN dims gone)
    for (int64_t d : plan.row_dims) {
      const auto before = std::count_if(plan.col_dims.begin(), plan.col_dims.end(),
                                        [&](int64_t e) { return e < d; });
      reduced_rows.push_back(d - before);
    }
    const at::Tensor row_col_mean = mean(out.v_row, reduced_rows, true, plan.row_dims);
    const at::Tensor row_factor = (out.v_row / row_col_mean).pow(-0.5);
    const at::Tensor col_factor = out.v_col.pow(-0.5);
    y = grad * expand(row_factor, plan.col_dims) * expand(col_factor, plan.row_dims);
  } else {
    out.v = v * decay + grad_sqr * mixing;
    y = grad * out.v.pow(-0.5);
  }

  if (c.clipping_threshold) {
    const at::Tensor rms = mean(y * y, avg, true, avg).sqrt();
    // max(1, rms / threshold); clamp_min propagates NaN as jnp.maximum.
    y = y / at::clamp_min(rms / *c.clipping_threshold, 1.0);
  }

  at::Tensor subtrahend = update_scale * y;
  if (c.beta1) {
    // beta1 * m in float32, rounded to m's dtype (JAX's weak typing;
    // libtorch 1.13 would round beta1 to bfloat16 first).
    const at::Tensor decayed_m = (m.to(at::kFloat) * *c.beta1).to(m.scalar_type());
    out.m = decayed_m + subtrahend * (1.0 - *c.beta1);
    subtrahend = out.m;
  }
  out.param = keep ? param * *keep - subtrahend : param - subtrahend;

  if (c.skip_nan_updates) {
    if (plan.is_factored) {
      out.v_row = KeepOldWhereNan(out.v_row, v_row);
      out.v_col = KeepOldWhereNan(out.v_col, v_col);
    } else {
      out.v = KeepOldWhereNan(out.v, v);
    }
    if (c.beta1) out.m = KeepOldWhereNan(out.m, m);
    out.param = KeepOldWhereNan(out.param, param);
  }
  return out;
}

}  // namespace t5xx::optim
