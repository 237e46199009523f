// Activation checkpointing ("remat", as jax.checkpoint / flax nn.remat that
// t5x's larger configs use): trade compute for memory by not keeping a
// block's intermediate activations and recomputing them in the backward pass.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <vector>

namespace t5xx::models {

// Returns fn(inputs) (one tensor). In grad mode only the inputs are kept;
// during backward fn(inputs) is recomputed with grad enabled and
// back-propagated, so the gradient reaches every input and every *leaf*
// tensor fn captures (parameters), which accumulate into their .grad as with
// loss.backward(). Any captured tensor that is not a leaf but needs a
// gradient (an attention bias computed from a parameter, the encoder output)
// must be passed in `inputs` instead: its graph may be traversed only once.
// Use it with Tensor::backward(), not torch::autograd::grad on captured
// tensors (their gradients arrive as .grad side effects, as with PyTorch's
// reentrant checkpoint).
//
// Randomness: when `rng` is given, its state is saved before the forward
// call and restored for the recomputation (then put back), so dropout draws
// the same masks twice. fn must draw randomness only from `rng`.
// Outside grad mode (evaluation) this is fn(x).
using RematFn = std::function<at::Tensor(const std::vector<at::Tensor>&)>;
at::Tensor Remat(const RematFn& fn, const std::vector<at::Tensor>& inputs, at::Generator* rng);

}  // namespace t5xx::models
