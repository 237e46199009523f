// A partitioner for tests: N simulated shards in one process, one thread
// each, with every tensor split across the shards along one dim. It stands
// in for a real multi-process mesh wherever code must not assume that a
// tensor is whole (the optimizers' statistics): each shard's Reducer sums
// partial statistics across the shards through an in-process rendezvous,
// and GlobalShape gives the unsplit shape. Batches are not split (the mesh
// is data=1, model=N) and gradients need no reduction.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/partitioning/base_partitioner.h"

namespace t5xx::partitioning {

// A rendezvous of `size` threads: each contributes a tensor, all receive the
// elementwise sum (a simulated all-reduce). Every shard must call Sum the
// same number of times, in the same order.
class SimulatedCollective {
 public:
  explicit SimulatedCollective(int size);
  int size() const { return size_; }
  // Blocks until all `size` ranks have contributed; returns the sum.
  at::Tensor Sum(int rank, const at::Tensor& t);

 private:
  const int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  int64_t generation_ = 0;
  std::vector<at::Tensor> slots_;
  at::Tensor result_;
};

class SimulatedShardsPartitioner final : public BasePartitioner {
 public:
  // Shard `rank` of collective->size(). `split_dims`: the dim each
  // parameter (by t5x path) is split along; a parameter missing from it is
  // whole on every shard (replicated). Throws t5xx::Error for a rank
  // outside [0, size).
  SimulatedShardsPartitioner(std::shared_ptr<SimulatedCollective> collective, int rank,
                             std::map<std::string, int64_t> split_dims,
                             LogicalAxisRules rules = StandardLogicalAxisRules());

  // The dim to split each of `params` along for `num_shards` shards: the
  // first dim its partition spec maps to a mesh axis, if divisible, else
  // the first divisible dim; parameters with none are left out (whole).
  static std::map<std::string, int64_t> SplitEveryTensor(const models::ParamStore& params,
                                                         const LogicalAxisRules& rules,
                                                         int num_shards);

  // This shard's piece of `whole` (a copy), split along split_dims.
  models::ParamStore ShardParams(const models::ParamStore& whole) override;
  // This shard's piece of one tensor of parameter `param`.
  at::Tensor Shard(const std::string& param, const at::Tensor& whole) const;

  const Mesh& mesh() const override { return mesh_; }
  const LogicalAxisRules& rules() const override { return rules_; }
  const Communicator& communicator() const override { return *communicator_; }
  std::shared_ptr<const Reducer> reducer() const override { return reducer_; }
  seqio::ShardInfo data_shard_info() const override { return {}; }
  models::FeatureBatch ShardBatch(const models::FeatureBatch& global) const override {
    return global;
  }
  void ReduceGradients(models::ParamStore&) const override {}

 private:
  std::shared_ptr<SimulatedCollective> collective_;
  int rank_;
  std::map<std::string, int64_t> split_dims_;
  LogicalAxisRules rules_;
  Mesh mesh_;
  std::shared_ptr<const Communicator> communicator_;
  std::shared_ptr<const Reducer> reducer_;
};

}  // namespace t5xx::partitioning
