// Collectives as autograd functions, so that sharded model code computes
// single-device math in the forward pass and gets complete gradients in the
// backward pass (Megatron-LM's f/g operators, "Efficient Large-Scale
// Language Model Training on GPU Clusters", 2021, and ZeRO-3's gather /
// reduce-scatter, "ZeRO: Memory Optimizations Toward Training Trillion
// Parameter Models", 2020). Each runs over one Communicator (a slice of a
// mesh axis) and is the identity for a group of one process.
//
// Which backward is right depends on what the processes of the group
// compute downstream: "replicated" ops are for groups whose members compute
// the same thing after the op (the 'model' axis: each member receives the
// whole upstream gradient); the ZeRO gather is for groups whose members
// compute on different data (the 'data' axis: the gradients add up).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>

#include "t5xx/partitioning/communicator.h"

namespace t5xx::partitioning {

// Forward: the pieces of `x` of every member concatenated along `dim` in
// rank order. Backward: the sum of every member's gradient, of which each
// keeps its piece (a reduce-scatter). ZeRO-3's just-in-time parameter gather
// over the data axis; the sum completes the data-parallel gradient.
at::Tensor GatherShardsForCompute(const at::Tensor& x, int64_t dim, const Communicator& group);

// Forward: concatenation along `dim` as above. Backward: this member's piece
// of the gradient (downstream compute is replicated over the group).
at::Tensor GatherReplicated(const at::Tensor& x, int64_t dim, const Communicator& group);

// Forward: this member's piece of `x` along `dim` (x replicated over the
// group). Backward: the pieces' gradients gathered along `dim`.
at::Tensor ScatterReplicated(const at::Tensor& x, int64_t dim, const Communicator& group);

// Megatron's f: forward identity; backward the sum of the members'
// gradients (the input of a column-parallel layer).
at::Tensor CopyToGroup(const at::Tensor& x, const Communicator& group);

// Megatron's g: forward the sum over the members; backward identity (the
// output of a row-parallel layer, the pieces of a vocabulary-parallel sum).
at::Tensor ReduceFromGroup(const at::Tensor& x, const Communicator& group);

// Concatenation along `dim` of every member's `x` without autograd.
at::Tensor AllGatherAlong(const at::Tensor& x, int64_t dim, const Communicator& group);

// FSDP's reshard after forward (PyTorch FSDP, reshard_after_forward=True;
// ZeRO-3's "release after use"): a parameter gathered over the data axis for
// one op is kept by autograd for that op's backward; this releases its
// memory as soon as the forward op has run and fills it again, with the same
// values gathered anew, just before the backward pass reaches the op. A
// gathered kernel then lives only while its own layer computes, in the
// forward and in the backward pass.
// `saved`: the tensor the op that produced `y` keeps for its backward (e.g.
// the kernel of a matmul, in the matmul's dtype). Its memory is released
// now; a hook on `y` (run when y's gradient arrives, before the op's
// backward) refills it with `gather_again()` (the same shape, dtype and
// values). The hook holds the memory weakly: once the op's backward has run
// and autograd drops what it saved, the memory is freed again. The refill
// writes through a tensor of its own over the same memory, so autograd's
// version check on `saved` still passes. Does nothing when no backward pass
// will run (grad mode off, or `y` needs no gradient) or when `saved` does
// not own its memory alone (a view, an offset, a larger storage).
void ReshardAfterForward(const at::Tensor& saved, const at::Tensor& y,
                         std::function<at::Tensor()> gather_again);

}  // namespace t5xx::partitioning
