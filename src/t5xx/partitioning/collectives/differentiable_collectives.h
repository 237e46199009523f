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
#include <memory>
#include <vector>

#include "t5xx/partitioning/collectives/communicator.h"

namespace t5xx::partitioning {

// Forward: the pieces of `x` of every member concatenated along `dim` in
// rank order. Backward: this member's piece of the gradient (downstream
// compute is replicated over the group).
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

// Activations split over the group along `dim` (t5x's 2-D activation rules
// put the residual stream's 'embed' on 'model'; Megatron-LM's sequence
// parallelism, Korthikanti et al. 2022, splits the length the same way):
//
// Forward: the members' pieces concatenated along `dim` (the whole input of
// a column-parallel layer). Backward: the sum over the members of the whole
// gradient, of which this member gets its piece (each member's downstream
// compute contributes part of it). Megatron's all-gather / reduce-scatter
// pair that replaces f.
at::Tensor GatherFromSplit(const at::Tensor& x, int64_t dim, const Communicator& group);

// Forward: the sum over the members of `x` (partial sums, the output of a
// row-parallel layer), of which this member keeps its piece along `dim`.
// Backward: the pieces' gradients gathered along `dim`. Megatron's
// reduce-scatter / all-gather pair that replaces g.
at::Tensor ReduceScatterToSplit(const at::Tensor& x, int64_t dim, const Communicator& group);

// Forward and backward: the sum over the members (a statistic of a split
// dimension, e.g. the RMS norm's sum of squares over a split 'embed', whose
// gradient every member's piece contributes to).
at::Tensor SumOverSplit(const at::Tensor& x, const Communicator& group);

// Concatenation along `dim` of every member's `x` without autograd.
at::Tensor AllGatherAlong(const at::Tensor& x, int64_t dim, const Communicator& group);
// The sum over the members of `x`, of which this member gets its piece
// along `dim` (which must divide by the group size), without autograd.
at::Tensor ReduceScatterAlong(const at::Tensor& x, int64_t dim, const Communicator& group);

// ZeRO-3's gather of several parameters in one call (FSDP's flat
// parameter). `pieces`: this process's piece of each, split over `group`
// along dims[i]. Forward: each whole, its pieces concatenated along dims[i]
// in rank order, every one in memory of its own -- from `gathered` (an
// all-gather of FlattenPieces(pieces) over `group`, started earlier) or, when
// that is undefined, from a new all-gather. Backward: the gradients' pieces
// flattened the same way, one reduce-scatter (the sum over the group), each
// piece's gradient back. Gradients that did not arrive count as zeros.
// With a `sink`, the backward pass does not wait for the reduce-scatter: it
// calls sink.before_start (so that the sink may finish earlier ones and
// free their buffers before this one's are made), then starts it
// (Communicator::StartReduceScatterSum) and hands sink.deliver the function
// that waits for this process's flat gradient (1-D, the layout of
// FlattenPieces(pieces)); the pieces then get no gradient from autograd --
// whoever holds the waiter adds it to their .grad -- and the backward pass
// runs on beside the reduce-scatter.
struct FlatGradientSink {
  std::function<void()> before_start;
  std::function<void(std::function<at::Tensor()> wait)> deliver;
};
std::vector<at::Tensor> GatherFlatShardsForCompute(const std::vector<at::Tensor>& pieces,
                                                   const std::vector<int64_t>& dims,
                                                   const Communicator& group,
                                                   const at::Tensor& gathered = {},
                                                   std::shared_ptr<FlatGradientSink> sink = nullptr);
// `pieces` flattened and concatenated in order: 1-D float32 of their total
// element count S (a copy, detached).
at::Tensor FlattenPieces(const std::vector<at::Tensor>& pieces);
// Views into `gathered` (group_size x S elements: every process's
// FlattenPieces of pieces of shapes `shapes`, in rank order): for piece i,
// [group_size, shapes[i]...], every process's copy of it. No copy is made.
std::vector<at::Tensor> GatheredPiecesByRank(const at::Tensor& gathered,
                                             const std::vector<std::vector<int64_t>>& shapes,
                                             int64_t group_size);
// Writes `by_rank` ([n, piece shape...]) into `whole` (the piece shape with
// dimension `dim` n times larger): the pieces concatenated along `dim` in
// rank order. Converts to whole's dtype.
void CopyPiecesIntoWhole(const at::Tensor& by_rank, int64_t dim, const at::Tensor& whole);
// The whole tensors in `gathered` (as GatheredPiecesByRank), piece i
// concatenated along dims[i], each in memory of its own, gathered's dtype.
std::vector<at::Tensor> UnflattenGathered(const at::Tensor& gathered,
                                          const std::vector<std::vector<int64_t>>& shapes,
                                          const std::vector<int64_t>& dims, int64_t group_size);

}  // namespace t5xx::partitioning
