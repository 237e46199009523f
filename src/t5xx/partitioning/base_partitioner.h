// The partitioner interface every training step goes through (t5x's
// BasePartitioner, t5x/partitioning.py): it owns the mesh, the
// communicator, the Reducer that optimizer statistics use, and the data
// ShardInfo of this process; it maps parameters' logical axes to mesh axes
// with the logical axis rules, slices global batches and completes
// gradients. Model code stays free of parallelism: the trainer takes this
// interface and the partitioner decides.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <utility>
#include <memory>
#include <string>
#include <vector>

#include "t5xx/data/data_source.h"
#include "t5xx/models/base_model.h"
#include "t5xx/models/param_store.h"
#include "t5xx/partitioning/communicator.h"
#include "t5xx/partitioning/logical_axis_rules.h"
#include "t5xx/partitioning/mesh.h"
#include "t5xx/partitioning/reducer.h"

namespace t5xx::partitioning {

class BasePartitioner {
 public:
  virtual ~BasePartitioner() = default;

  virtual const Mesh& mesh() const = 0;
  virtual const LogicalAxisRules& rules() const = 0;
  virtual const Communicator& communicator() const = 0;
  // The reduction hook the optimizer's statistics go through
  // (Optimizer::set_reducer); it knows how this partitioner splits tensors.
  virtual std::shared_ptr<const Reducer> reducer() const = 0;
  // Which slice of the data this process reads (t5x's
  // get_data_layout().shard_id / num_shards: one shard per data replica).
  virtual seqio::ShardInfo data_shard_info() const = 0;

  // This process's slice of a global batch along 'batch' -> 'data'. Throws
  // t5xx::Error when the batch does not divide by the data axis size.
  virtual models::FeatureBatch ShardBatch(const models::FeatureBatch& global) const = 0;
  // Completes gradients across the data axis (sum).
  virtual void ReduceGradients(models::ParamStore& params) const = 0;
  // Sums per-replica metric sums (a 1-D float64 tensor) across the data
  // axis, so every process reports the global step's metrics. Identity for
  // one replica.
  virtual void ReduceMetrics(at::Tensor& sums) const { (void)sums; }

  // Mesh axes of every parameter, by t5x path (LogicalToMeshAxes of its
  // logical axes under rules()).
  std::map<std::string, PartitionSpec> ParamPartitionSpecs(const models::ParamStore& params) const;
};

// One row of the table t5x logs at start-up: a parameter or optimizer slot,
// its global shape, logical axes and mesh axes.
struct VariableInfo {
  std::string name;  // "target/encoder/..." for parameters, "state/..." for slots
  std::vector<int64_t> shape;
  std::vector<std::string> logical_axes;  // empty: none (e.g. counts)
  PartitionSpec mesh_axes;
};

// The rows for `params` ("target/" + path), then for the optimizer state
// arrays `slots` (path -> array; "state/" + path). A slot belongs to the
// parameter whose t5x path is the longest one its path contains; its
// logical axes are that parameter's, less the dims the slot does not have
// (matched by size, in order: Adafactor's v_row/v_col), and none for arrays
// of no parameter (counts) or of another rank. Mesh axes follow `rules`.
std::vector<VariableInfo> DescribeVariables(
    const models::ParamStore& params, const LogicalAxisRules& rules,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& slots);

// The rows as an aligned text table: "name  shape  logical axes  mesh axes".
std::string FormatVariableTable(const std::vector<VariableInfo>& rows);

}  // namespace t5xx::partitioning
