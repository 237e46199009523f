// See sharded_statistics.h.
#include "t5xx/optim/sharded_statistics.h"

#include <numeric>

namespace t5xx::optim {

at::Tensor ShardedMean(const at::Tensor& x, const std::vector<int64_t>& dims, bool keepdim,
                       const Reducer& reducer, const std::string& param,
                       const std::vector<int64_t>& param_dims) {
  if (dims.empty()) return x;  // at::sum over {} would reduce everything
  at::Tensor sum = x.sum(dims, keepdim);
  int64_t n = 1;
  for (int64_t d : dims) n *= x.size(d);
  const at::Tensor count = AllReduceSumAndCount(sum, n, reducer, param, param_dims);
  return sum / count;
}

at::Tensor AllReduceSumAndCount(at::Tensor& sum, int64_t local_count, const Reducer& reducer,
                                const std::string& param,
                                const std::vector<int64_t>& param_dims) {
  at::Tensor count =
      at::scalar_tensor(static_cast<double>(local_count), sum.options().dtype(at::kFloat));
  const ReduceContext ctx{param, param_dims};
  if (sum.scalar_type() != at::kFloat) {
    reducer.AllReduceSum(sum, ctx);
    reducer.AllReduceSum(count, ctx);
    return count;
  }
  // One collective instead of two: the count is the last element.
  at::Tensor both = at::cat({sum.reshape({-1}), count.reshape({1})});
  reducer.AllReduceSum(both, ctx);
  const int64_t n = sum.numel();
  sum = both.narrow(0, 0, n).view(sum.sizes());
  return both.narrow(0, n, 1).squeeze(0);
}

at::Tensor ShardedGlobalNorm(const std::vector<at::Tensor>& tensors,
                             const std::vector<std::string>& names, const Reducer& reducer) {
  at::Tensor total;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const at::Tensor& t = tensors[i];
    at::Tensor partial = t.to(at::kFloat).square().sum();
    std::vector<int64_t> all(static_cast<size_t>(t.dim()));
    std::iota(all.begin(), all.end(), 0);
    reducer.AllReduceSum(partial, ReduceContext{names[i], all});
    total = total.defined() ? total + partial : partial;
  }
  if (!total.defined()) return at::zeros({}, at::kFloat);
  return total.sqrt();
}

}  // namespace t5xx::optim
