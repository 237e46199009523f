// Adafactor as t5x's t5x/adafactor.py with its defaults (Shazeer & Stern,
// "Adafactor: Adaptive Learning Rates with Sublinear Memory Cost", 2018).
//
// Per parameter p with gradient g at step t (t counts from 0):
//   decay   = 1 - (t - step_offset + 1)^(-decay_rate)
//   g2      = g^2 + epsilon1
//   factored (two largest dims d0 > d1 in size order, second >= min_dim_size_
//   to_factor): v_row = decay*v_row + (1-decay)*mean(g2, d0),
//               v_col = decay*v_col + (1-decay)*mean(g2, d1),
//               u = g * (v_row/mean(v_row))^-1/2 [expanded at d0]
//                     * v_col^-1/2 [expanded at d1]
//   otherwise:  v = decay*v + (1-decay)*g2,  u = g * v^-1/2
//   u /= max(1, rms(u) / clipping_threshold)
//   p -= lr * max(rms(p), epsilon2) * u        (multiply_by_parameter_scale)
// Slots use t5x's names v_row, v_col, v (unused slots are shape (1,) zeros).
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <optional>
#include <string>

#include "t5xx/models/param_store.h"

namespace t5xx::optim {

struct AdafactorConfig {
  double decay_rate = 0.8;
  int64_t step_offset = 0;
  bool multiply_by_parameter_scale = true;
  std::optional<double> clipping_threshold = 1.0;
  double epsilon1 = 1e-30;
  double epsilon2 = 1e-3;
  int64_t min_dim_size_to_factor = 128;
  bool factored = true;
};

struct AdafactorParamState {
  at::Tensor v_row, v_col, v;  // float32
  bool is_factored = false;
  int64_t d0 = -1, d1 = -1;    // factored dims: d0 largest, d1 second largest
};

class Adafactor {
 public:
  explicit Adafactor(AdafactorConfig config);

  // Creates zero slots for every parameter.
  void Init(const models::ParamStore& params);

  // Applies one update in place to every parameter from its .grad(), using
  // learning rate `learning_rate`, then increments step(). Runs under
  // no-grad. Throws std::logic_error when a parameter lacks a gradient.
  void Apply(models::ParamStore& params, double learning_rate);

  int64_t step() const { return step_; }
  const AdafactorConfig& config() const { return config_; }
  const std::map<std::string, AdafactorParamState>& state() const { return state_; }

 private:
  AdafactorConfig config_;
  std::map<std::string, AdafactorParamState> state_;
  int64_t step_ = 0;
};

}  // namespace t5xx::optim
