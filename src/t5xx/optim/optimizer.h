// The optimizer interface the trainer holds: t5x's OptimizerDef plus the
// OptimizerState it creates (t5x/optimizers.py). Two implementations:
// Adafactor (t5x/adafactor.py, adafactor.h) and the optax optimizers t5x
// wraps with OptaxWrapper -- adamw, alone or in optimizers.chain with
// clip_by_global_norm / clip (optax_optimizers.h).
//
// State is exposed as t5x lays it out in a checkpoint under
// optimizer.state (the trainer's checkpoint_io adds the "state." prefix), so
// a t5xx checkpoint has t5x's paths, shapes, dtypes and inline/zarr choice.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/models/param_store.h"
#include "t5xx/optim/sharded_statistics.h"

namespace t5xx::optim {

// A setting's value as the optimizers' error messages show it (iostream's
// default: six significant digits, e.g. "0.001", "1e-30").
std::string SettingText(double v);

// One array of the optimizer state.
struct StateArray {
  // Dotted path under optimizer.state, e.g.
  // "param_states.encoder.layers_0.mlp.wi.kernel.v_row" (Adafactor) or
  // "param_states.0.mu.encoder.layers_0.mlp.wi.kernel" (optax adamw).
  std::string path;
  // The live state tensor (not a copy): float32, bfloat16 (momentum with
  // dtype_momentum / mu_dtype = 'bfloat16') or a 0-d int32 (optax counts).
  at::Tensor value;
  // t5x writes arrays without logical axes into the msgpack index instead
  // of a zarr directory: Adafactor's v_row/v_col and unused (1,) slots,
  // optax's counts.
  bool store_inline = false;
  // The dims of its parameter this array keeps, in order (Adafactor's v_row
  // drops the column dims, v_col the row dims; a full slot keeps them all),
  // so the partitioner shards it like those dims. Unset: matched by size.
  // Set to another rank than the array's (a (1,) placeholder): no axes.
  std::optional<std::vector<int64_t>> param_dims;
};

// scalable_t5's scan_layers = True (t5x/examples/scalable_t5/network.py):
// t5x's optimizer sees each stack's layers as one array with a 'layers'
// axis at param_scan_axis, while t5xx keeps one array per layer. Adafactor
// gives each layer the update t5x computes for the stacked array (its
// factor rule, its averaging dims); elementwise optimizers need nothing.
struct ScannedLayers {
  int param_scan_axis = 1;
  // The stacked array a parameter is one layer of (t5x's name), or nullopt
  // for a parameter of no stack (checkpoints::ScannedNameOf).
  std::function<std::optional<std::string>(const std::string&)> stack_of;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // The gin reference that configures it, as t5x's configs write it
  // ("adafactor.Adafactor", "optimizers.adamw", "optimizers.chain").
  virtual std::string gin_name() const = 0;

  // Creates zero state for every parameter and resets step() to 0. Throws
  // t5xx::Error for a parameter the configuration cannot handle (e.g. an
  // Adafactor rank-3 kernel without factor rules), naming it and the fix.
  virtual void Init(const models::ParamStore& params) = 0;
  bool initialized() const { return initialized_; }

  // One update of every parameter in place from its .grad() (float32), then
  // step() + 1. `learning_rate` is the trainer's learning_rate_fn(step());
  // Adafactor uses it, optax optimizers ignore it and use their own
  // learning_rate (as t5x's OptaxWrapper does). Returns the rate actually
  // applied. Runs under no-grad. Throws std::logic_error when Init was not
  // called or a parameter has no gradient.
  virtual double Apply(models::ParamStore& params, double learning_rate) = 0;

  int64_t step() const { return step_; }

  // Every state array with its t5x path (see StateArray), in t5x's order.
  virtual std::vector<StateArray> StateArrays() const = 0;

  // Restores the state saved from StateArrays() (same paths, shapes and
  // dtypes) and the step. Throws t5xx::Error naming a missing, unexpected or
  // mis-shaped array. Init must have run (it fixes the expected layout).
  void RestoreState(const std::map<std::string, at::Tensor>& arrays, int64_t step);

  // The reduction hook for statistics over sharded tensors (partitioning/collectives/reducer.h).
  // Default: LocalReducer.
  void set_reducer(std::shared_ptr<const Reducer> reducer);
  const Reducer& reducer() const { return *reducer_; }

  // Before Init: the parameters are the layers of t5x's scanned stacks.
  void set_scanned_layers(ScannedLayers layers) { scanned_ = std::move(layers); }

 protected:
  // Sets another optimizer's step (a MultiOptimizer's sub-optimizers share
  // its step).
  static void SetStep(Optimizer& o, int64_t step) { o.step_ = step; }

  std::optional<ScannedLayers> scanned_;
  int64_t step_ = 0;
  bool initialized_ = false;
  std::shared_ptr<const Reducer> reducer_ = std::make_shared<LocalReducer>();
};

}  // namespace t5xx::optim
