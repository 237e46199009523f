// See differentiable_collectives.h.
#include "t5xx/partitioning/differentiable_collectives.h"

#include <ATen/core/grad_mode.h>
#include <c10/core/StorageImpl.h>
#include <torch/csrc/autograd/custom_function.h>

#include <utility>
#include <vector>

namespace t5xx::partitioning {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The group travels through the autograd context as a raw pointer: every
// partitioner outlives the steps it runs.
const Communicator& GroupOf(AutogradContext* ctx) {
  return *reinterpret_cast<const Communicator*>(ctx->saved_data["group"].toInt());
}
void SaveGroup(AutogradContext* ctx, const Communicator& group, int64_t dim) {
  ctx->saved_data["group"] = reinterpret_cast<int64_t>(&group);
  ctx->saved_data["dim"] = dim;
}

at::Tensor Piece(const at::Tensor& x, int64_t dim, const Communicator& group) {
  const int64_t n = x.size(dim) / group.size();
  return x.narrow(dim, n * group.rank(), n).contiguous();
}

at::Tensor ReduceScatterAlong(const at::Tensor& x, int64_t dim, const Communicator& group) {
  at::Tensor moved = x.movedim(dim, 0).contiguous();
  return group.ReduceScatterSum(moved).movedim(0, dim).contiguous();
}

// An op along `dim` over a group: `Forward` in the forward pass, `Backward`
// on the gradient.
using AlongDim = at::Tensor (*)(const at::Tensor&, int64_t, const Communicator&);
template <AlongDim Forward, AlongDim Backward>
struct AlongDimFn : public torch::autograd::Function<AlongDimFn<Forward, Backward>> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, int64_t dim,
                            int64_t group) {
    const Communicator& g = *reinterpret_cast<const Communicator*>(group);
    SaveGroup(ctx, g, dim);
    return Forward(x, dim, g);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const int64_t dim = ctx->saved_data["dim"].toInt();
    return {Backward(grad[0], dim, GroupOf(ctx)), at::Tensor(), at::Tensor()};
  }
};

using GatherShardsFn = AlongDimFn<AllGatherAlong, ReduceScatterAlong>;
using GatherReplicatedFn = AlongDimFn<AllGatherAlong, Piece>;
using ScatterReplicatedFn = AlongDimFn<Piece, AllGatherAlong>;

struct CopyToGroupFn : public torch::autograd::Function<CopyToGroupFn> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, int64_t group) {
    SaveGroup(ctx, *reinterpret_cast<const Communicator*>(group), 0);
    return x.clone();
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    at::Tensor g = grad[0].contiguous().clone();
    GroupOf(ctx).AllReduceSum(g);
    return {g, at::Tensor()};
  }
};

struct ReduceFromGroupFn : public torch::autograd::Function<ReduceFromGroupFn> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& x, int64_t group) {
    at::Tensor sum = x.contiguous().clone();
    reinterpret_cast<const Communicator*>(group)->AllReduceSum(sum);
    return sum;
  }
  static variable_list backward(AutogradContext*, variable_list grad) {
    return {grad[0], at::Tensor()};
  }
};

int64_t Handle(const Communicator& group) { return reinterpret_cast<int64_t>(&group); }
int64_t Dim(const at::Tensor& x, int64_t dim) { return dim < 0 ? dim + x.dim() : dim; }

}  // namespace

at::Tensor AllGatherAlong(const at::Tensor& x, int64_t dim, const Communicator& group) {
  if (group.size() == 1) return x;
  dim = Dim(x, dim);
  at::NoGradGuard no_grad;
  return group.AllGather(x.detach().movedim(dim, 0).contiguous()).movedim(0, dim).contiguous();
}

at::Tensor GatherShardsForCompute(const at::Tensor& x, int64_t dim, const Communicator& group) {
  if (group.size() == 1) return x;
  return GatherShardsFn::apply(x, Dim(x, dim), Handle(group));
}

at::Tensor GatherReplicated(const at::Tensor& x, int64_t dim, const Communicator& group) {
  if (group.size() == 1) return x;
  return GatherReplicatedFn::apply(x, Dim(x, dim), Handle(group));
}

at::Tensor ScatterReplicated(const at::Tensor& x, int64_t dim, const Communicator& group) {
  if (group.size() == 1) return x;
  return ScatterReplicatedFn::apply(x, Dim(x, dim), Handle(group));
}

at::Tensor CopyToGroup(const at::Tensor& x, const Communicator& group) {
  if (group.size() == 1) return x;
  return CopyToGroupFn::apply(x, Handle(group));
}

at::Tensor ReduceFromGroup(const at::Tensor& x, const Communicator& group) {
  if (group.size() == 1) return x;
  return ReduceFromGroupFn::apply(x, Handle(group));
}

void ReshardAfterForward(const at::Tensor& saved, const at::Tensor& y,
                         std::function<at::Tensor()> gather_again) {
  if (!at::GradMode::is_enabled() || !y.requires_grad()) return;
  c10::StorageImpl* storage = saved.storage().unsafeGetStorageImpl();
  const size_t nbytes = static_cast<size_t>(saved.numel()) * saved.element_size();
  if (saved.storage_offset() != 0 || !saved.is_contiguous() || storage->nbytes() != nbytes) {
    return;
  }
  storage->set_data_ptr(at::DataPtr(nullptr, saved.device()));  // frees the gathered kernel
  storage->set_nbytes(0);
  c10::weak_intrusive_ptr<c10::StorageImpl> weak = saved.storage().getWeakStorageImpl();
  y.register_hook([weak = std::move(weak), sizes = saved.sizes().vec(), options = saved.options(),
                   nbytes, gather_again = std::move(gather_again)](const at::Tensor&) {
    const c10::intrusive_ptr<c10::StorageImpl> st = weak.lock();
    if (!st || st->nbytes() == nbytes) return;  // nothing keeps it, or refilled already
    const at::Tensor values = gather_again();
    st->set_data_ptr(st->allocator()->allocate(nbytes));
    st->set_nbytes(nbytes);
    at::from_blob(st->data_ptr().get(), sizes, options).copy_(values);
  });
}

}  // namespace t5xx::partitioning
