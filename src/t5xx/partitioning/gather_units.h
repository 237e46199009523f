// ZeRO-3's parameter gathers as PyTorch FSDP runs them (Zhao et al.,
// "PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel", 2023):
// by unit, ahead of use, released after use.
//
//  - Units, as FSDP wraps a transformer: the parameters split over the
//    'data' axis under one ".layers_N." module are one unit (a layer),
//    held while the forward pass is in it; any other module's (the token
//    embedder, a final norm, the logits kernel) is a root unit, held from
//    its first use until the forward pass ends (so the embedder is gathered
//    once for the encoder and the decoder). A unit's pieces are flattened
//    into one buffer and gathered in one all-gather; its gradients go back
//    in one reduce-scatter, started when the backward pass has produced all
//    of them and finished beside the rest of the backward pass
//    (GatherFlatShardsForCompute, FinishGradients). A call per unit rather
//    than per parameter: each call is a synchronisation of the data group.
//    (Scanned layers, whose parameters stack every layer, would be one root
//    unit: the whole model.)
//  - Prefetch. The order in which a train step's forward pass gathers its
//    units is remembered; when a step gathers the unit at position k of the
//    previous step's order, the gathers of the units after k are started
//    (Communicator::StartAllGather), up to a largest unit's worth in
//    flight (so a small unit, a final norm, does not stall the layer after
//    it), and run beside this unit's compute. Backward likewise: the end of
//    the forward pass starts the first refill, and each refill that of the
//    unit the forward pass gathered before it.
//  - Reshard after forward (FSDP's reshard_after_forward=True, the default):
//    a gathered kernel kept by its matmul for the backward pass has its
//    memory released when the forward pass leaves its unit, and the whole
//    unit is gathered again (one call) when the backward pass reaches the
//    first of its matmuls; once a matmul's backward has run, autograd drops
//    the kernel and its memory goes. Only the units computing hold whole
//    kernels. Off: gathered kernels live from forward to backward.
//
// Not thread-safe: a train step runs on one thread.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "t5xx/models/param_store.h"
#include "t5xx/partitioning/collectives/communicator.h"
#include "t5xx/partitioning/sharding.h"

namespace t5xx::partitioning {

class GatherUnits {
 public:
  // The parameters of `params` whose spec maps a dimension to 'data'
  // (ZeRO-3) over `data_group`; none when the group is one process.
  GatherUnits(const models::ParamStore& params, const std::map<std::string, PartitionSpec>& specs,
              std::shared_ptr<const Communicator> data_group, bool reshard_after_forward);
  ~GatherUnits();

  // The unit a parameter path belongs to: its prefix through ".layers_N",
  // else its parent module ("a.b.kernel" -> "a.b", a root unit).
  static std::string UnitOf(const std::string& path);
  // Whether the unit of that name (UnitOf) is a root unit (held for the
  // whole forward pass) rather than a layer.
  static bool IsRootUnit(const std::string& unit);
  // Whether `p` is split over 'data' (and so gathered here).
  bool Gathers(const models::Param& p) const;
  // `p` whole over 'data' (float32, its global shape along the split
  // dimension), differentiable: its gradient is reduce-scattered with its
  // unit's and reaches p's .grad at FinishGradients. `p` must be an element
  // of the ParamStore these units were made for (or of a copy with the same
  // parameters in the same order): the unit's other parameters are found
  // beside it. Throws t5xx::Error otherwise.
  at::Tensor Gathered(const models::Param& p) const;
  // `kept`: the tensor that the op producing `y` keeps for its backward
  // pass (p's gathered kernel, or its cast to the matmul's dtype). Under
  // reshard_after_forward its memory is released when the forward pass
  // leaves p's unit and refilled, with its unit gathered anew, when y's
  // gradient arrives. Nothing happens outside grad mode, when `y` needs no
  // gradient, or when `kept` does not own its memory alone (a view).
  void ReshardAfterForward(const models::Param& p, const at::Tensor& kept,
                           const at::Tensor& y) const;
  // Waits for the gradients' reduce-scatter the backward pass started last
  // (one per unit gathered, each running beside the backward pass until the
  // next unit's starts) and adds each piece's gradient to its .grad. Until
  // then a gathered parameter's piece has no gradient from the backward
  // pass. Called by the partitioner before it completes the gradients, and
  // by EndForward.
  void FinishGradients() const;
  // The forward pass of a train step ended (before its backward pass): the
  // unit in use is left (its tensors live on only where autograd kept
  // them), a prefetch in flight is waited for and dropped, and this step's
  // gather order becomes the one the next step prefetches by.
  void EndForward() const;

 private:
  struct Unit;
  struct State;
  struct Released;
  struct Gathering;
  // Leaves a layer's gathering: releases its kept kernels (under
  // reshard_after_forward) and drops its tensors.
  void Leave(Gathering& g) const;
  // Gathers r's unit again and writes its released kernels back.
  void Refill(const Released& r) const;
  // The backward pass goes through the forward order backwards: starts the
  // gather of the unit gathered before `unit` (only one that released
  // kernels when `released_only`).
  void PrefetchBefore(size_t unit, const models::Param* base, bool released_only) const;
  // Forward: starts the gathers that followed position k of the last
  // step's order, until a largest unit's worth is in flight.
  void PrefetchAfter(size_t k, const models::Param* base) const;
  // Waits for and drops every gather started ahead.
  void DropPrefetches() const;
  // Starts the all-gather of `unit`'s flat pieces (the store at `base`).
  std::function<at::Tensor()> StartGather(size_t unit, const models::Param* base) const;
  // The gathering holding `unit` now (the layer slot or its root slot), or
  // nullptr.
  Gathering* Holding(size_t unit) const;
  std::vector<Unit> units_;
  std::map<std::string, std::pair<size_t, size_t>> where_;  // path -> (unit, member)
  std::shared_ptr<const Communicator> group_;
  int64_t largest_unit_ = 0;  // elements of the largest unit's pieces
  bool reshard_after_forward_ = true;
  std::unique_ptr<State> state_;
};

}  // namespace t5xx::partitioning
