// Activation checkpointing ("remat", as jax.checkpoint / flax nn.remat that
// t5x's larger configs use) -- the implementation of remat.h.
#include "t5xx/models/networks/remat.h"

#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <memory>

namespace t5xx::models {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct RematState {
  RematFn fn;
  at::Generator* rng = nullptr;
  at::Tensor rng_state;  // undefined without rng
};

class RematFunction : public torch::autograd::Function<RematFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, at::TensorList inputs,
                            std::shared_ptr<RematState> state) {
    if (state->rng) state->rng_state = state->rng->get_state();
    ctx->saved_data["state"] = c10::IValue::make_capsule(c10::make_intrusive<StateHolder>(state));
    ctx->save_for_backward(inputs.vec());
    at::NoGradGuard no_grad;
    return state->fn(inputs.vec());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_out) {
    auto blob = ctx->saved_data["state"].toCapsule();
    std::shared_ptr<RematState> state = static_cast<StateHolder*>(blob.get())->state;
    variable_list inputs;
    for (const auto& v : ctx->get_saved_variables()) {
      inputs.push_back(v.detach().requires_grad_(v.requires_grad()));
    }
    at::Tensor current_rng;
    if (state->rng) {
      current_rng = state->rng->get_state();
      state->rng->set_state(state->rng_state);
    }
    at::Tensor y;
    {
      at::AutoGradMode grad(true);
      y = state->fn(inputs);
    }
    if (state->rng) state->rng->set_state(current_rng);
    torch::autograd::backward({y}, {grad_out[0]});
    variable_list grads;
    for (const auto& v : inputs) grads.push_back(v.requires_grad() ? v.grad() : at::Tensor());
    grads.push_back(at::Tensor());  // state
    return grads;
  }

  // Carries the shared state through saved_data (an IValue).
  struct StateHolder : torch::CustomClassHolder {
    explicit StateHolder(std::shared_ptr<RematState> s) : state(std::move(s)) {}
    std::shared_ptr<RematState> state;
  };
};

}  // namespace

at::Tensor Remat(const RematFn& fn, const std::vector<at::Tensor>& inputs, at::Generator* rng) {
  if (!at::GradMode::is_enabled()) return fn(inputs);
  auto state = std::make_shared<RematState>();
  state->fn = fn;
  state->rng = rng;
  return RematFunction::apply(at::TensorList(inputs), state);
}

}  // namespace t5xx::models
