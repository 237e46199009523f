// Statistics over tensors that may be sharded: a mean over some dims and the
// global L2 norm, each computed as local partial sums completed through the
// partitioner's Reducer (partitioning/collectives/reducer.h), so that an optimizer never
// assumes that a whole tensor is local.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "t5xx/partitioning/collectives/reducer.h"

namespace t5xx::optim {

using partitioning::LocalReducer;
using partitioning::ReduceContext;
using partitioning::ReduceRequest;
using partitioning::Reducer;

// Mean of `x` over `dims` of x (keepdim as in at::mean), computed as partial
// sum + count reduced through `reducer`. `param_dims` are the same dims in
// the parameter's index space (they differ for slots that dropped dims,
// e.g. v_row). Empty `dims` is the identity, like jnp.mean(x, axis=()).
at::Tensor ShardedMean(const at::Tensor& x, const std::vector<int64_t>& dims, bool keepdim,
                       const Reducer& reducer, const std::string& param,
                       const std::vector<int64_t>& param_dims);

// The reductions ShardedMean makes, for a caller that summed itself (the
// fused Adafactor update, adafactor_fused.h): all-reduces `sum` (a float32
// local partial sum, shaped as x.sum(dims, keepdim) would be) together with
// a float32 0-d tensor holding `local_count` (the elements summed into each
// entry here), in one all-reduce with the context {param, param_dims} (the
// count rides as one more element; two all-reduces when sum is not
// float32); returns that count all-reduced, on sum's device. ShardedMean is
// sum / this count.
at::Tensor AllReduceSumAndCount(at::Tensor& sum, int64_t local_count, const Reducer& reducer,
                                const std::string& param,
                                const std::vector<int64_t>& param_dims);

// sqrt(sum over every tensor of sum(t^2)): the global L2 norm of a list of
// tensors (one per parameter, names[i] the parameter of tensors[i]), each
// partial sum reduced over its parameter's shards. A float32 0-d tensor.
at::Tensor ShardedGlobalNorm(const std::vector<at::Tensor>& tensors,
                             const std::vector<std::string>& names, const Reducer& reducer);

}  // namespace t5xx::optim
