// Adafactor's update for float32 CPU parameters as three passes of plain
// C++ loops over contiguous memory, instead of ~25 whole-tensor ATen ops per
// parameter (each its own pass over memory and its own OpenMP region). Same
// arithmetic as the general path in adafactor.cc (the formulas in
// adafactor.h), in float32 with the same operation order per element; the
// sums are added in float64 in a fixed order, so results agree with the
// general path to float32 rounding and do not depend on the thread count.
//
// Per step, for all covered parameters together (one parallel loop per pass
// over every parameter's tiles, on libtorch's intra-op threads through
// kernels/cpu/intra_op_parallel.h):
//   pass 1  reads p and g. Per tile: sum(p^2) (parameter scale); factored:
//           the ROW and COLUMN partial sums of g^2 + epsilon1; unfactored:
//           v = decay*v + mixing*(g^2 + epsilon1) written in place and
//           sum(y^2) with y = g * v^-1/2 (update clipping);
//   then    per parameter, tile partials summed in tile order; the Reducer
//           all-reduces each statistic as ShardedMean does (sums of the same
//           shapes with their counts, same parameter and dims:
//           AllReduceSumAndCount); v_row, v_col, the row and column factors
//           and the update scale are finished on these small arrays;
//   pass 2  reads g (factored, with clipping_threshold): sum(y^2),
//           y = g * row_factor * col_factor; the Reducer; the clipping
//           divisor;
//   pass 3  reads p and g, writes p (and m): the clipped update through
//           momentum and weight decay.
// Statistics per BATCH index (a scanned layer's own scale) throughout.
//
// Tiles are fixed by the parameter's shape alone: whole rows of the
// innermost dims (runs of up to 65536 elements), about 65536 elements and at
// least 16 rows each. Each run's sums are added in 32 fixed lanes (float32
// within blocks of 256 elements, then float64), runs in order within a tile,
// tiles in order within a parameter: the same additions in the same order
// on any number of threads. The loops are compiled for AVX2 and for the
// baseline x86-64 (picked at load time), with the same results.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "t5xx/optim/adafactor.h"
#include "t5xx/optim/sharded_statistics.h"

namespace t5xx::optim {

// The per-step scalars of adafactor.h's formulas (float32, as t5x computes
// them; Adafactor::Apply makes them for both paths).
struct AdafactorStepScalars {
  double learning_rate = 0;
  float decay = 0, mixing = 1;
  // Weight decay after weight_decay_rate_lr_exponent; nullopt: none.
  std::optional<double> weight_decay;
  // The global-norm clipping factor every gradient is multiplied by; 1 when
  // global_norm_clip_threshold is off (x * 1 is exact).
  float grad_scale = 1.0f;
};

// One parameter of a fused update.
struct FusedAdafactorParam {
  const std::string* name = nullptr;  // its path, for the Reducer
  at::Tensor param;                   // updated in place
  at::Tensor grad;
  AdafactorParamState* state = nullptr;  // v_row, v_col, v, m updated in place
};

// Whether FusedAdafactorUpdate takes this parameter (the fast-path rule):
//   * config: skip_nan_updates off (everything else is covered: beta1 with
//     float32 or bfloat16 m, weight decay, both clippings, parameter scale);
//   * parameter and gradient float32 CPU tensors, strided, numel > 0;
//   * at least one averaging dim (rank >= 1 and not all BATCH);
//   * the parameter's dims of each role -- BATCH, ROW, COLUMN when factored,
//     BATCH and the averaged ones when not -- one consecutive run once
//     size-1 dims are left out. True for every rank <= 2 parameter and for
//     t5x's layouts such as (embed, heads, kv), (layers, embed, mlp) or
//     scanned (embed, layers, mlp); not for (embed, mlp, layers, heads).
// It depends on the configuration, dtypes, device and factoring plan only,
// which every shard of a parameter shares, so all processes of a sharded run
// choose the same path (and make the same Reducer calls).
bool FusedAdafactorCovers(const AdafactorConfig& config, const AdafactorParamState& state,
                          const at::Tensor& param, const at::Tensor& grad);

// One Adafactor step of `params` (each covered by FusedAdafactorCovers), in
// place; the statistics go through `reducer` parameter by parameter in the
// order of `params`: parameter scale, v_row, v_col, row/column mean for each,
// then the update RMS for each.
void FusedAdafactorUpdate(const AdafactorConfig& config, const AdafactorStepScalars& scalars,
                          const std::vector<FusedAdafactorParam>& params, const Reducer& reducer);

}  // namespace t5xx::optim
