// t5x's PjitPartitioner (t5x/partitioning.py): the ('data', 'model') mesh
// from num_partitions, with the standard or given logical axis rules.
//
// Today one process holds the whole mesh (data=1, model=1): partition specs
// are computed from the logical axes and reported, batches pass through
// whole, the communicator is local and gradient reduction is the identity.
// Multi-process data/tensor parallelism plugs in here without touching
// model code.
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

  const Mesh& mesh() const override { return mesh_; }
  const LogicalAxisRules& rules() const override { return rules_; }
  const Communicator& communicator() const override { return communicator_; }
  std::shared_ptr<const Reducer> reducer() const override { return reducer_; }
  seqio::ShardInfo data_shard_info() const override;

  models::FeatureBatch ShardBatch(const models::FeatureBatch& global) const override;
  // Identity for data = 1; t5xx::Error otherwise (no c10d communicator yet).
  void ReduceGradients(models::ParamStore& params) const override;

 private:
  Mesh mesh_;
  LogicalAxisRules rules_;
  LocalCommunicator communicator_;
  std::shared_ptr<const Reducer> reducer_ = std::make_shared<LocalReducer>();
  int64_t data_index_ = 0;
};

}  // namespace t5xx::partitioning
