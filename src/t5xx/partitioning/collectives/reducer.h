// The reduction hook that keeps the optimizers shardable (Reducer), owned
// by the partitioner (base_partitioner.h), which knows how tensors are split.
//
// t5x runs its optimizers under pjit: a parameter, its gradient and its slots
// may be split over the ('data', 'model') mesh, and XLA inserts the
// collectives that complete every mean and norm. t5xx makes those points
// explicit. Every statistic an optimizer needs across the elements of a
// tensor -- Adafactor's factored row/column means, the parameter-scale RMS,
// the update RMS, the global gradient norm -- is computed as
//
//   1. a local partial sum over the elements this process holds, and the
//      local count of summed elements,
//   2. Reducer::AllReduceSum on both (summing over the processes that hold
//      the other pieces of the same parameter along the summed dims),
//   3. finished locally (sum / count, sqrt, ...).
//
// So an optimizer never assumes that a whole tensor is local. Element-wise
// work (slot updates, the parameter update) needs no communication. The
// optimizers also ask the reducer for a parameter's global shape, because
// t5x decides factoring from the full shape, not from a shard.
//
// LocalReducer (the default) is the single-process case: every tensor is
// whole, AllReduceSum is the identity and GlobalShape is the local shape. A
// partitioner that shards parameters implements Reducer from its partition
// specs (the mesh axes that split `ctx.dims` of `ctx.param`).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace t5xx::partitioning {

// What a partial sum was taken over.
struct ReduceContext {
  // t5x path of the parameter the statistic belongs to (its gradient and
  // slots are sharded like it).
  const std::string& param;
  // Dims of that parameter (parameter-space indices) that the local sum ran
  // over. The result is summed over every shard that splits one of them.
  std::vector<int64_t> dims;
};

// One AllReduceSum of a batch (Reducer::AllReduceSumMany).
struct ReduceRequest {
  at::Tensor* partial;
  ReduceContext ctx;
};

class Reducer {
 public:
  virtual ~Reducer() = default;
  // Every request as AllReduceSum would complete it alone; a partitioner
  // may send them in fewer collectives (one per set of process groups).
  // Default: one by one, in order.
  virtual void AllReduceSumMany(const std::vector<ReduceRequest>& requests) const {
    for (const ReduceRequest& r : requests) AllReduceSum(*r.partial, r.ctx);
  }
  // Replaces `partial` (a float32 partial sum or element count) by its sum
  // over all shards of `ctx.param` along `ctx.dims`. Shapes are unchanged.
  virtual void AllReduceSum(at::Tensor& partial, const ReduceContext& ctx) const = 0;
  // Whether AllReduceSum with `ctx` is the identity: no process holds
  // another piece of ctx.param along ctx.dims. Lets an optimizer update such
  // parameters together without a collective each (optim/adafactor_grouped.h).
  // Default false (always ask AllReduceSum).
  virtual bool SumIsLocal(const ReduceContext& ctx) const {
    (void)ctx;
    return false;
  }
  // The full (unsharded) shape of parameter `param` whose local piece has
  // shape `local_shape`.
  virtual std::vector<int64_t> GlobalShape(const std::string& param,
                                           at::IntArrayRef local_shape) const = 0;
};

// One process holds every tensor whole.
class LocalReducer final : public Reducer {
 public:
  void AllReduceSum(at::Tensor&, const ReduceContext&) const override {}
  bool SumIsLocal(const ReduceContext&) const override { return true; }
  std::vector<int64_t> GlobalShape(const std::string&,
                                   at::IntArrayRef local_shape) const override {
    return local_shape.vec();
  }
};

}  // namespace t5xx::partitioning
