// See differentiable_collectives.h.
#include "t5xx/partitioning/collectives/differentiable_collectives.h"

#include <ATen/core/grad_mode.h>
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

using GatherReplicatedFn = AlongDimFn<AllGatherAlong, Piece>;
using ScatterReplicatedFn = AlongDimFn<Piece, AllGatherAlong>;
using GatherFromSplitFn = AlongDimFn<AllGatherAlong, ReduceScatterAlong>;
using ReduceScatterToSplitFn = AlongDimFn<ReduceScatterAlong, AllGatherAlong>;

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

struct SumOverSplitFn : public torch::autograd::Function<SumOverSplitFn> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, int64_t group) {
    SaveGroup(ctx, *reinterpret_cast<const Communicator*>(group), 0);
    at::Tensor sum = x.contiguous().clone();
    GroupOf(ctx).AllReduceSum(sum);
    return sum;
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

// The local shapes travel through the autograd context flattened: each
// shape's rank, then its sizes.
std::vector<int64_t> EncodeShapes(const std::vector<at::Tensor>& pieces) {
  std::vector<int64_t> code;
  for (const at::Tensor& p : pieces) {
    code.push_back(p.dim());
    code.insert(code.end(), p.sizes().begin(), p.sizes().end());
  }
  return code;
}
std::vector<std::vector<int64_t>> DecodeShapes(const std::vector<int64_t>& code) {
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < code.size(); i += static_cast<size_t>(code[i]) + 1) {
    shapes.emplace_back(code.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                        code.begin() + static_cast<std::ptrdiff_t>(i + 1 + code[i]));
  }
  return shapes;
}

// `shape` with dims[d] split into (n, shape[d]): the view of a whole tensor
// whose dimension d is n pieces of shape[d].
std::vector<int64_t> SplitShape(std::vector<int64_t> shape, int64_t d, int64_t n) {
  shape.insert(shape.begin() + d, n);
  return shape;
}

struct GatherFlatShardsFn : public torch::autograd::Function<GatherFlatShardsFn> {
  // Carries the sink through saved_data (an IValue).
  struct Sink : torch::CustomClassHolder {
    explicit Sink(std::shared_ptr<FlatGradientSink> s) : sink(std::move(s)) {}
    std::shared_ptr<FlatGradientSink> sink;
  };
  static variable_list forward(AutogradContext* ctx, at::TensorList list,
                               std::vector<int64_t> dims, int64_t group, int64_t gathered,
                               std::shared_ptr<FlatGradientSink> sink) {
    const std::vector<at::Tensor> pieces = list.vec();
    if (sink) {
      ctx->saved_data["sink"] = c10::IValue::make_capsule(c10::make_intrusive<Sink>(std::move(sink)));
    }
    const Communicator& g = *reinterpret_cast<const Communicator*>(group);
    SaveGroup(ctx, g, 0);
    ctx->saved_data["dims"] = dims;
    ctx->saved_data["shapes"] = EncodeShapes(pieces);
    const at::Tensor& given = *reinterpret_cast<const at::Tensor*>(gathered);
    const at::Tensor all = given.defined() ? given : g.AllGather(FlattenPieces(pieces));
    std::vector<std::vector<int64_t>> shapes;
    for (const at::Tensor& p : pieces) shapes.push_back(p.sizes().vec());
    return UnflattenGathered(all, shapes, dims, g.size());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const Communicator& g = GroupOf(ctx);
    const std::vector<int64_t> dims = ctx->saved_data["dims"].toIntVector();
    const auto shapes = DecodeShapes(ctx->saved_data["shapes"].toIntVector());
    const int64_t n = g.size();
    std::shared_ptr<FlatGradientSink> sink;
    if (ctx->saved_data.count("sink")) {
      auto holder = ctx->saved_data["sink"].toCapsule();
      sink = static_cast<Sink*>(holder.get())->sink;
      if (sink->before_start) sink->before_start();
    }
    // [n, S]: row r holds every gradient's piece r, flattened in order.
    int64_t total = 0;
    for (const auto& shape : shapes) total += c10::multiply_integers(shape);
    const at::Tensor flat = at::empty({n, total}, at::kFloat);
    int64_t offset = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const int64_t numel = c10::multiply_integers(shapes[i]);
      at::Tensor into = flat.narrow(1, offset, numel);
      offset += numel;
      if (!grad[i].defined()) {
        into.zero_();
        continue;
      }
      into.view(SplitShape(shapes[i], 0, n))
          .copy_(grad[i].reshape(SplitShape(shapes[i], dims[i], n)).movedim(dims[i], 0));
    }
    if (sink) {
      sink->deliver(g.StartReduceScatterSum(flat));
      return variable_list(shapes.size() + 4);
    }
    const at::Tensor mine = g.ReduceScatterSum(flat).reshape({-1});
    variable_list out;
    int64_t at = 0;
    for (const auto& shape : shapes) {
      const int64_t numel = c10::multiply_integers(shape);
      out.push_back(mine.narrow(0, at, numel).reshape(shape).clone());
      at += numel;
    }
    out.resize(out.size() + 4);  // dims, group, gathered, sink
    return out;
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

at::Tensor ReduceScatterAlong(const at::Tensor& x, int64_t dim, const Communicator& group) {
  if (group.size() == 1) return x;
  dim = Dim(x, dim);
  at::NoGradGuard no_grad;
  return group.ReduceScatterSum(x.detach().movedim(dim, 0).contiguous())
      .movedim(0, dim)
      .contiguous();
}

at::Tensor GatherFromSplit(const at::Tensor& x, int64_t dim, const Communicator& group) {
  if (group.size() == 1) return x;
  return GatherFromSplitFn::apply(x, Dim(x, dim), Handle(group));
}

at::Tensor ReduceScatterToSplit(const at::Tensor& x, int64_t dim, const Communicator& group) {
  if (group.size() == 1) return x;
  return ReduceScatterToSplitFn::apply(x, Dim(x, dim), Handle(group));
}

at::Tensor SumOverSplit(const at::Tensor& x, const Communicator& group) {
  if (group.size() == 1) return x;
  return SumOverSplitFn::apply(x, Handle(group));
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

at::Tensor FlattenPieces(const std::vector<at::Tensor>& pieces) {
  std::vector<at::Tensor> flat;
  for (const at::Tensor& p : pieces) flat.push_back(p.detach().to(at::kFloat).reshape({-1}));
  return at::cat(flat);
}

std::vector<at::Tensor> GatheredPiecesByRank(const at::Tensor& gathered,
                                             const std::vector<std::vector<int64_t>>& shapes,
                                             int64_t group_size) {
  const at::Tensor rows = gathered.reshape({group_size, -1});
  std::vector<at::Tensor> by_rank;
  int64_t offset = 0;
  for (const auto& shape : shapes) {
    const int64_t numel = c10::multiply_integers(shape);
    by_rank.push_back(rows.narrow(1, offset, numel).view(SplitShape(shape, 0, group_size)));
    offset += numel;
  }
  return by_rank;
}

void CopyPiecesIntoWhole(const at::Tensor& by_rank, int64_t dim, const at::Tensor& whole) {
  // whole viewed as [..., n, piece dim, ...], the n pieces moved first.
  std::vector<int64_t> piece = by_rank.sizes().vec();
  piece.erase(piece.begin());
  whole.view(SplitShape(piece, dim, by_rank.size(0))).movedim(dim, 0).copy_(by_rank);
}

std::vector<at::Tensor> UnflattenGathered(const at::Tensor& gathered,
                                          const std::vector<std::vector<int64_t>>& shapes,
                                          const std::vector<int64_t>& dims, int64_t group_size) {
  const std::vector<at::Tensor> by_rank = GatheredPiecesByRank(gathered, shapes, group_size);
  std::vector<at::Tensor> wholes;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<int64_t> whole_shape = shapes[i];
    whole_shape[static_cast<size_t>(dims[i])] *= group_size;
    wholes.push_back(at::empty(whole_shape, gathered.options()));
    CopyPiecesIntoWhole(by_rank[i], dims[i], wholes.back());
  }
  return wholes;
}

std::vector<at::Tensor> GatherFlatShardsForCompute(const std::vector<at::Tensor>& pieces,
                                                   const std::vector<int64_t>& dims,
                                                   const Communicator& group,
                                                   const at::Tensor& gathered,
                                                   std::shared_ptr<FlatGradientSink> sink) {
  if (group.size() == 1) return pieces;
  return GatherFlatShardsFn::apply(at::TensorList(pieces), dims, Handle(group),
                                   reinterpret_cast<int64_t>(&gathered), std::move(sink));
}

}  // namespace t5xx::partitioning
