// Single-device ShardingHooks (see sharding_hooks.h).
#include "t5xx/models/sharding_hooks.h"

#include "t5xx/models/networks/layers.h"
#include "t5xx/models/param_store.h"

namespace t5xx::models {

at::Tensor ShardingHooks::Weight(const Param& p) const { return p.value; }

at::Tensor ShardingHooks::Dense(const at::Tensor& x, const Param& kernel,
                                at::ScalarType dtype) const {
  return MatmulIn(x, kernel.value, dtype);
}

std::vector<at::Tensor> ShardingHooks::DenseEach(const at::Tensor& x,
                                                 const std::vector<const Param*>& kernels,
                                                 at::ScalarType dtype) const {
  std::vector<at::Tensor> out;
  for (const Param* k : kernels) out.push_back(Dense(x, *k, dtype));
  return out;
}

at::Tensor ShardingHooks::RmsNorm(const at::Tensor& x, const Param& scale, double epsilon,
                                  at::ScalarType dtype) const {
  return models::RmsNorm(x, Weight(scale), epsilon, dtype);
}

at::Tensor ShardingHooks::Dropout(const at::Tensor& x, const std::string&, double rate,
                                  bool train, at::Generator* rng,
                                  bool broadcast_over_length) const {
  return models::Dropout(x, rate, train, rng, broadcast_over_length);
}

at::Tensor ShardingHooks::Embed(const Param& table, const at::Tensor& tokens) const {
  return at::embedding(table.value, tokens);
}

at::Tensor ShardingHooks::Attend(const at::Tensor& x, const Param& table) const {
  // float32 through MatmulIn (its decode-step and --int8_weights paths);
  // other dtypes as they were.
  if (x.scalar_type() == at::kFloat && table.value.scalar_type() == at::kFloat) {
    return MatmulIn(x, table.value.t(), at::kFloat);
  }
  return at::matmul(x, table.value.t());
}

std::vector<int64_t> ShardingHooks::GlobalShape(const Param& p) const {
  return p.value.sizes().vec();
}

VocabPartition ShardingHooks::VocabPartitionOf(const at::Tensor&) const { return {}; }

const ShardingHooks& SingleDeviceHooks() {
  static const ShardingHooks hooks;
  return hooks;
}

}  // namespace t5xx::models
