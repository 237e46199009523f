// Activation checkpointing ("remat", as jax.checkpoint / flax nn.remat that
// t5x's larger configs use) -- the implementation of remat.h.
#include "t5xx/models/networks/remat.h"

#include "t5xx/kernels/dropout_mask.h"

#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <memory>
#include <stdexcept>

#include "t5xx/models/networks/layers.h"

namespace t5xx::models {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The weight matmul outputs of one Remat(save_dots) block, in call order.
struct DotTape {
  std::vector<at::Tensor> dots;
  size_t next = 0;      // the next one to give back
  bool replay = false;  // recomputing: give back instead of recording
};

// The tape of the block running on this thread (blocks do not nest).
thread_local DotTape* g_tape = nullptr;

// How many Remat blocks this thread is recomputing (Recomputing()).
thread_local int g_recomputing = 0;
struct RecomputeScope {
  RecomputeScope() { ++g_recomputing; }
  ~RecomputeScope() { --g_recomputing; }
  RecomputeScope(const RecomputeScope&) = delete;
  RecomputeScope& operator=(const RecomputeScope&) = delete;
};

class TapeScope {
 public:
  TapeScope(DotTape* tape, bool replay) : saved_(g_tape) {
    if (tape) {
      tape->replay = replay;
      tape->next = 0;
    }
    g_tape = tape;
  }
  ~TapeScope() { g_tape = saved_; }
  TapeScope(const TapeScope&) = delete;
  TapeScope& operator=(const TapeScope&) = delete;

 private:
  DotTape* saved_;
};

struct RematState {
  RematFn fn;
  at::Generator* rng = nullptr;
  at::Tensor rng_state;  // undefined without rng
  // The forward pass's global row offset of dropout masks (kernels/
  // dropout_mask.h), for the recomputation (which may run on another thread).
  int64_t dropout_row_offset = 0;
  std::unique_ptr<DotTape> tape;  // save_dots only
};

// a @ b given back from the tape: the kept output, with a @ b's gradients.
class KeptDot : public torch::autograd::Function<KeptDot> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b,
                            const at::Tensor& kept) {
    ctx->save_for_backward({a, b});
    return kept.detach();
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &a = saved[0], &b = saved[1];
    // In float32 for bfloat16 operands on the CPU (as MatmulIn accumulates).
    auto [ga, gb] = MatmulOperandGradients(a, b, grad_out[0],
                                           a.scalar_type() == at::kBFloat16 && a.is_cpu(),
                                           a.requires_grad(), b.requires_grad());
    return {ga, gb, at::Tensor()};
  }
};

class RematFunction : public torch::autograd::Function<RematFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, at::TensorList inputs,
                            std::shared_ptr<RematState> state) {
    if (state->rng) state->rng_state = state->rng->get_state();
    state->dropout_row_offset = kernels::DropoutRowOffset();
    ctx->saved_data["state"] = c10::IValue::make_capsule(c10::make_intrusive<StateHolder>(state));
    ctx->save_for_backward(inputs.vec());
    at::NoGradGuard no_grad;
    TapeScope record(state->tape.get(), /*replay=*/false);
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
      RecomputeScope recomputing;
      kernels::DropoutRowScope rows(state->dropout_row_offset);
      TapeScope replay(state->tape.get(), /*replay=*/true);
      y = state->fn(inputs);
    }
    if (state->tape) state->tape->dots.clear();  // this block's backward is done
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

at::Tensor Remat(const RematFn& fn, const std::vector<at::Tensor>& inputs, at::Generator* rng,
                 bool save_dots) {
  if (!at::GradMode::is_enabled()) return fn(inputs);
  auto state = std::make_shared<RematState>();
  state->fn = fn;
  state->rng = rng;
  if (save_dots) state->tape = std::make_unique<DotTape>();
  return RematFunction::apply(at::TensorList(inputs), state);
}

bool Recomputing() { return g_recomputing > 0; }

at::Tensor SavedDot(const at::Tensor& a, const at::Tensor& b,
                    const std::function<at::Tensor()>& compute) {
  DotTape* tape = g_tape;
  if (!tape || b.dim() != 2) return compute();
  if (!tape->replay) {
    tape->dots.push_back(compute());
    return tape->dots.back();
  }
  if (tape->next >= tape->dots.size()) {
    throw std::logic_error("Remat(save_dots): the recomputation made more weight matmuls than "
                           "the forward call");
  }
  return KeptDot::apply(a, b, tape->dots[tape->next++]);
}

}  // namespace t5xx::models
