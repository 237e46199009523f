#include "t5xx/optim/adafactor.h"

#include <ATen/core/grad_mode.h>

#include <cmath>
#include <numeric>
#include <stdexcept>

namespace t5xx::optim {

Adafactor::Adafactor(AdafactorConfig config) : config_(config) {}

void Adafactor::Init(const models::ParamStore& params) {
  state_.clear();
  step_ = 0;
  for (const auto& p : params.params()) {
    AdafactorParamState s;
    auto sizes = p.value.sizes().vec();
    auto zeros = [](std::vector<int64_t> shape) {
      return at::zeros(shape, at::kFloat);
    };
    if (config_.factored && sizes.size() >= 2) {
      // Indices of the two largest dims (stable for ties, as np.argsort on
      // small arrays): d0 = largest, d1 = second largest.
      std::vector<int64_t> order(sizes.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return sizes[a] < sizes[b]; });
      const int64_t d1 = order[order.size() - 2], d0 = order.back();
      if (sizes[d1] >= config_.min_dim_size_to_factor) {
        s.is_factored = true;
        s.d0 = d0;
        s.d1 = d1;
        auto vr = sizes, vc = sizes;
        vr.erase(vr.begin() + d0);
        vc.erase(vc.begin() + d1);
        s.v_row = zeros(vr);
        s.v_col = zeros(vc);
        s.v = zeros({1});
      }
    }
    if (!s.is_factored) {
      s.v_row = zeros({1});
      s.v_col = zeros({1});
      s.v = zeros(sizes);
    }
    state_[p.name] = std::move(s);
  }
}

void Adafactor::Apply(models::ParamStore& params, double learning_rate) {
  at::NoGradGuard no_grad;
  const double t = static_cast<double>(step_ - config_.step_offset) + 1.0;
  const double decay = 1.0 - std::pow(t, -config_.decay_rate);
  const double mixing = 1.0 - decay;
  for (auto& p : params.params()) {
    at::Tensor grad = p.value.grad();
    if (!grad.defined()) {
      throw std::logic_error("Adafactor: parameter " + p.name + " has no gradient");
    }
    AdafactorParamState& s = state_.at(p.name);
    at::Tensor param = p.value;
    double update_scale = learning_rate;
    if (config_.multiply_by_parameter_scale) {
      const double rms = param.pow(2).mean().sqrt().item<double>();
      update_scale *= std::max(rms, config_.epsilon2);
    }
    at::Tensor g2 = grad.pow(2) + config_.epsilon1;
    at::Tensor y;
    if (s.is_factored) {
      s.v_row.mul_(decay).add_(g2.mean({s.d0}), mixing);
      s.v_col.mul_(decay).add_(g2.mean({s.d1}), mixing);
      const int64_t reduced_d1 = s.d1 > s.d0 ? s.d1 - 1 : s.d1;
      at::Tensor row_col_mean = s.v_row.mean({reduced_d1}, /*keepdim=*/true);
      at::Tensor row_factor = (s.v_row / row_col_mean).rsqrt();
      at::Tensor col_factor = s.v_col.rsqrt();
      y = grad * row_factor.unsqueeze(s.d0) * col_factor.unsqueeze(s.d1);
    } else {
      s.v.mul_(decay).add_(g2, mixing);
      y = grad * s.v.rsqrt();
    }
    if (config_.clipping_threshold) {
      const double rms_y = y.pow(2).mean().sqrt().item<double>();
      const double denom = std::max(1.0, rms_y / *config_.clipping_threshold);
      y = y / denom;
    }
    param.sub_(y * update_scale);
  }
  ++step_;
}

}  // namespace t5xx::optim
