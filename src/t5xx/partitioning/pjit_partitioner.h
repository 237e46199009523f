// t5x's PjitPartitioner (t5x/partitioning.py): the ('data', 'model') mesh
// from num_partitions, with the standard or given logical axis rules.
//
// Data parallelism across processes: with a communicator of N processes
// and num_partitions = 1 the mesh is (data=N, model=1); process r takes rows
// [r*B/N, (r+1)*B/N) of each global batch, gradients and metric sums are
// summed across the processes (one all-reduce of all gradients, flattened),
// and every process applies the same update to its full copy of the
// parameters. Tensor parallelism (num_partitions > 1 across processes) and
// ZeRO-3 come next. Model code is untouched.
#pragma once

#include <memory>

#include "t5xx/partitioning/base_partitioner.h"

namespace t5xx::partitioning {

class PjitPartitioner final : public BasePartitioner {
 public:
  // num_partitions: size of the 'model' axis (t5x's num_partitions); the
  // data axis takes the remaining devices. Throws t5xx::Error when
  // num_partitions does not divide the device count (1 process today).
  PjitPartitioner(int64_t num_partitions, LogicalAxisRules rules, int64_t num_devices = 1);
  // Over `communicator`'s processes (one device each). Throws t5xx::Error
  // when num_partitions does not divide their number, or is > 1 across
  // processes (not implemented yet).
  PjitPartitioner(int64_t num_partitions, LogicalAxisRules rules,
                  std::shared_ptr<const Communicator> communicator);

  const Mesh& mesh() const override { return mesh_; }
  const LogicalAxisRules& rules() const override { return rules_; }
  const Communicator& communicator() const override { return *communicator_; }
  std::shared_ptr<const Reducer> reducer() const override { return reducer_; }
  // The whole data ({0, 1}) on every process: each reads the global batch
  // and ShardBatch keeps its rows.
  seqio::ShardInfo data_shard_info() const override;

  models::FeatureBatch ShardBatch(const models::FeatureBatch& global) const override;
  // All-reduce (sum) of every gradient across the data axis; identity for
  // data = 1.
  void ReduceGradients(models::ParamStore& params) const override;
  void ReduceMetrics(at::Tensor& sums) const override;

 private:
  Mesh mesh_;
  LogicalAxisRules rules_;
  std::shared_ptr<const Communicator> communicator_ = std::make_shared<LocalCommunicator>();
  std::shared_ptr<const Reducer> reducer_ = std::make_shared<LocalReducer>();
  int64_t data_index_ = 0;
};

}  // namespace t5xx::partitioning
