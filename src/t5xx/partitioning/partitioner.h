// The ('data', 'model') device mesh and the partitioner that every training
// step goes through (t5x/partitioning.py PjitPartitioner).
//
// Today one process holds the whole mesh (data=1, model=1): sharding specs are
// computed from the logical axes and reported, batches pass through whole and
// gradient reduction is the identity. Multi-process data/tensor parallelism
// plugs in here without touching model code.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

#include "t5xx/models/network.h"
#include "t5xx/models/param_store.h"
#include "t5xx/partitioning/logical_axis_rules.h"

namespace t5xx::partitioning {

struct Mesh {
  int64_t data = 1;   // size of the 'data' axis
  int64_t model = 1;  // size of the 'model' axis
  int64_t size() const { return data * model; }
  int64_t AxisSize(const std::string& axis) const;
};

class PjitPartitioner {
 public:
  // num_partitions: size of the 'model' axis (t5x's num_partitions); the
  // data axis takes the remaining devices. Throws t5xx::Error when
  // num_partitions does not divide the device count (1 process today).
  PjitPartitioner(int64_t num_partitions, LogicalAxisRules rules,
                  int64_t num_devices = 1);

  const Mesh& mesh() const { return mesh_; }
  const LogicalAxisRules& rules() const { return rules_; }

  // Mesh axes of every parameter, by t5x path.
  std::map<std::string, PartitionSpec> ParamPartitionSpecs(
      const models::ParamStore& params) const;

  // This process's slice of a global batch along 'batch' -> 'data'. Throws
  // t5xx::Error when batch_size does not divide by the data axis size.
  models::FeatureBatch ShardBatch(const models::FeatureBatch& global) const;

  // Completes gradients across the data axis (sum; identity for data=1).
  void ReduceGradients(models::ParamStore& params) const;

 private:
  Mesh mesh_;
  LogicalAxisRules rules_;
  int64_t data_index_ = 0;
};

}  // namespace t5xx::partitioning
