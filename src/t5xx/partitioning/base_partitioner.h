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

#include "t5xx/data/sources/data_source.h"
#include "t5xx/models/base_model.h"
#include "t5xx/models/param_store.h"
#include "t5xx/partitioning/collectives/communicator.h"
#include "t5xx/partitioning/logical_axis_rules.h"
#include "t5xx/partitioning/mesh.h"
#include "t5xx/partitioning/collectives/reducer.h"
#include "t5xx/partitioning/sharding.h"

namespace t5xx::partitioning {

// One row of the table t5x logs at start-up: a parameter or optimizer slot,
// its global shape, logical axes and mesh axes, and the part of it this
// process holds.
struct VariableInfo {
  std::string name;  // "target/encoder/..." for parameters, "state/..." for slots
  std::vector<int64_t> shape;  // global
  std::vector<std::string> logical_axes;  // empty: none (e.g. counts)
  PartitionSpec mesh_axes;
  ShardBox box;          // this process's piece (the whole shape when replicated)
  bool primary = true;   // this process is the replica that writes `box`
  int64_t itemsize = 4;  // bytes per element
  // Bytes of this variable held by this process (box elements x itemsize).
  int64_t BytesPerProcess() const;
};

// An optimizer state array as this process holds it.
struct SlotShape {
  std::string path;            // under optimizer.state, e.g. "param_states.<param>.v_row"
  std::vector<int64_t> shape;  // local shape
  int64_t itemsize = 4;
  // The dims of its parameter the array keeps, in order, as the optimizer
  // declares them (optim::StateArray::param_dims); unset: matched by size.
  std::optional<std::vector<int64_t>> param_dims;
};

class BasePartitioner {
 public:
  virtual ~BasePartitioner() = default;

  virtual const Mesh& mesh() const = 0;
  // This process's position on the mesh (sharding.h).
  virtual MeshCoordinates coordinates() const { return {}; }
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
  // This process's pieces of the whole parameters `whole` (copies), ready to
  // train with (a sharding partitioner also installs its hooks on them,
  // models/sharding_hooks.h). Default: a copy of everything.
  virtual models::ParamStore ShardParams(const models::ParamStore& whole) { return whole; }
  // How this process keeps each parameter of a network as the network
  // creates it (sharded initialisation: models::ParamPlacement), after
  // checking every spec against the mesh (t5xx::Error naming every problem
  // at once). Default: each kept whole.
  virtual std::shared_ptr<const models::ParamPlacement> Placement(
      const std::vector<models::ParamSpec>& specs);
  // Makes a store of this process's pieces (placed, restored by box) ready
  // to train with: a sharding partitioner installs its hooks on it and
  // remembers the specs. Default: nothing.
  virtual void InstallHooks(models::ParamStore& local) { (void)local; }
  // Called before each backward pass of a train step (`last_microbatch`
  // for its last): a partitioner may start reducing gradients while the
  // backward pass still produces them; ReduceGradients completes it.
  // Default: nothing.
  virtual void BeforeBackward(models::ParamStore& params, bool last_microbatch) const {
    (void)params;
    (void)last_microbatch;
  }
  // Completes gradients across the data axis (sum).
  virtual void ReduceGradients(models::ParamStore& params) const = 0;
  // Sums per-replica metric sums (a 1-D float64 tensor) across the data
  // axis, so every process reports the global step's metrics. Identity for
  // one replica.
  virtual void ReduceMetrics(at::Tensor& sums) const { (void)sums; }
  // Sums `t` over the model partitions of this process's data replica (the
  // processes ReduceMetrics does not reach); identity without any.
  virtual void ReduceOverModel(at::Tensor& t) const { (void)t; }

  // Mesh axes of every parameter, by t5x path (LogicalToMeshAxes of its
  // logical axes under rules()).
  std::map<std::string, PartitionSpec> ParamPartitionSpecs(const models::ParamStore& params) const;

  // DescribeVariables (below) of this process's pieces on this mesh.
  std::vector<VariableInfo> DescribeVariables(const models::ParamStore& params,
                                                     const std::vector<SlotShape>& slots) const;
};

// A network's parameters as `partitioner` places them: every spec checked
// first (BasePartitioner::Placement), then each parameter made whole and
// only this process's piece kept before the next is made; the hooks
// installed. Values equal a one-process InitParams(seed) sliced;
// uninitialized: the pieces are allocated and left unset
// (models::UninitializedPlacement), for a checkpoint to fill.
models::ParamStore InitPlacedParams(BasePartitioner& partitioner,
                                   const models::BaseTransformerModel& model, uint64_t seed,
                                   bool uninitialized = false);

// The rows for `params` ("target/" + path), then for the optimizer state
// arrays `slots` ("state/" + path), from the pieces this process holds on
// `mesh` at `coords` (the defaults: one process holding everything). A slot
// belongs to the parameter whose t5x path is the longest one its path
// contains; its logical axes are that parameter's at the slot's
// `param_dims` (Adafactor's v_row/v_col keep some of them), or, without
// param_dims, the parameter dims matched by size in order; none for arrays
// of no parameter (counts) or of another rank. Mesh axes
// follow `rules`; global shapes are the local ones times the mesh axis
// sizes of their sharded dims.
std::vector<VariableInfo> DescribeVariables(const models::ParamStore& params,
                                            const LogicalAxisRules& rules,
                                            const std::vector<SlotShape>& slots,
                                            const Mesh& mesh = {},
                                            const MeshCoordinates& coords = {});

// The rows as an aligned text table: "name  shape  logical axes  mesh axes
// bytes per process", then a total line.
std::string FormatVariableTable(const std::vector<VariableInfo>& rows);

}  // namespace t5xx::partitioning
