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
#include <vector>

#include "t5xx/partitioning/communicator.h"

namespace t5xx::partitioning {

// The reduce-scatters of ZeRO-3's gradients in buckets (PyTorch DDP/FSDP's
// bucketing): a gathered parameter's whole gradient waits here until about
// `bucket_bytes` have arrived, and then one reduce-scatter over the group
// sums them all, each member keeping its pieces, which are added to the
// .grad of the leaf each was gathered from. The sums are bitwise those of
// one reduce-scatter per gradient (the ring adds each element in the same
// order). Flush completes what is left; call it before reading the .grads
// (PjitPartitioner::ReduceGradients does). Used from the thread that runs
// the backward pass.
class GradientBuckets {
 public:
  GradientBuckets(const Communicator& group, int64_t bucket_bytes)
      : group_(group), bucket_bytes_(bucket_bytes) {}
  // `grad`: the gradient of the concatenation of every member's `leaf`
  // along `dim`.
  void Add(const at::Tensor& leaf, int64_t dim, const at::Tensor& grad);
  void Flush();
  // Reduce-scatters run so far (each of one bucket).
  int64_t reduce_scatters() const { return reduce_scatters_; }

 private:
  struct Entry {
    at::Tensor leaf;
    int64_t dim;
    at::Tensor grad;
  };
  const Communicator& group_;
  int64_t bucket_bytes_;
  std::vector<Entry> entries_;
  int64_t bytes_ = 0;
  int64_t reduce_scatters_ = 0;
};

// Forward: the pieces of `x` of every member concatenated along `dim` in
// rank order. Backward: the sum of every member's gradient, of which each
// keeps its piece (a reduce-scatter). ZeRO-3's just-in-time parameter gather
// over the data axis; the sum completes the data-parallel gradient.
// With `buckets` (and `x` a leaf), the gradient goes to buckets->Add
// instead, and reaches x's .grad at the bucket's reduce-scatter.
at::Tensor GatherShardsForCompute(const at::Tensor& x, int64_t dim, const Communicator& group,
                                  GradientBuckets* buckets = nullptr);

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

}  // namespace t5xx::partitioning
