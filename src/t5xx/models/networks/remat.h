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
//
// save_dots (t5x's remat_policy 'minimal', jax.checkpoint_policies.
// checkpoint_dots_with_no_batch_dims): the outputs of fn's weight matmuls
// (MatmulIn with a 2-D right operand, layers.h; the attention's batched
// matmuls are not among them) are kept from the forward call, and the
// recomputation takes them instead of multiplying again: only the cheap
// elementwise work (norms, softmax, activations) is redone. Each such
// matmul's backward then multiplies the kept operands as usual.
using RematFn = std::function<at::Tensor(const std::vector<at::Tensor>&)>;
at::Tensor Remat(const RematFn& fn, const std::vector<at::Tensor>& inputs, at::Generator* rng,
                 bool save_dots = false);

// Whether this thread is recomputing a Remat block for its backward pass
// (so that code reached from inside one -- a partitioner's hooks -- can
// tell a backward-pass recomputation from a forward pass).
bool Recomputing();

// For MatmulIn: `a @ b` for b [in, out] (a: [..., in], both already in the
// matmul's dtype) computed by `compute` -- recorded when a Remat(save_dots)
// block runs its forward call, given back (with the matmul's gradients) when
// it is recomputed, and simply computed otherwise.
at::Tensor SavedDot(const at::Tensor& a, const at::Tensor& b,
                    const std::function<at::Tensor()>& compute);

}  // namespace t5xx::models
