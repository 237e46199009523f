// t5x's PjitPartitioner (t5x/partitioning.py): the ('data', 'model') mesh
// from num_partitions, with the standard or given logical axis rules.
//
// Over a communicator of N processes the mesh is (data = N / num_partitions,
// model = num_partitions), process r at data = r / model, model = r % model
// (sharding.h), with one process group per slice of each axis (the
// processes sharing a model coordinate, and those sharing a data
// coordinate). ShardParams keeps each process's box of every parameter
// under the logical axis rules and installs PartitionedHooks on it, which
// give Megatron-style tensor parallelism on 'model' and ZeRO-3 on 'data'
// (partitioned_hooks.h); the optimizer's statistics complete over the
// groups that split them (the Reducer). Process r takes rows [d*B/D,
// (d+1)*B/D) of a global batch (d its data coordinate, D the data axis
// size); gradients of parameters not split over 'data' are summed over the
// data group (one flat all-reduce), those split over it arrive complete from
// their reduce-scatter; metric sums are summed over the data group. Model
// code is untouched.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "t5xx/partitioning/base_partitioner.h"

namespace t5xx::partitioning {

class PjitPartitioner final : public BasePartitioner {
 public:
  // num_partitions: size of the 'model' axis (t5x's num_partitions); the
  // data axis takes the remaining devices. Throws t5xx::Error when
  // num_partitions does not divide the device count (1 process today).
  PjitPartitioner(int64_t num_partitions, LogicalAxisRules rules, int64_t num_devices = 1);
  // Over `communicator`'s processes (one device each); creates the mesh
  // axes' process groups (every process must construct its partitioner at
  // the same point). Throws t5xx::Error when num_partitions does not divide
  // their number.
  PjitPartitioner(int64_t num_partitions, LogicalAxisRules rules,
                  std::shared_ptr<const Communicator> communicator);

  PjitPartitioner(const PjitPartitioner&) = delete;  // its Reducer points at it
  PjitPartitioner& operator=(const PjitPartitioner&) = delete;

  const Mesh& mesh() const override { return mesh_; }
  MeshCoordinates coordinates() const override { return coords_; }
  const LogicalAxisRules& rules() const override { return rules_; }
  const Communicator& communicator() const override { return *communicator_; }
  std::shared_ptr<const Reducer> reducer() const override { return reducer_; }
  // This process's data shard: ShardInfo{index = its 'data' coordinate,
  // num_shards = mesh().data} (t5x's get_data_layout shard_id/num_shards);
  // processes that differ only in their 'model' coordinate read the same
  // shard. Input comes in one of two ways, and the caller chooses (no mode
  // here): `t5xx train` reads only this shard, global batch / mesh().data
  // examples a step, and trains with Trainer::TrainStepOnLocalBatch; a
  // caller that passes every process the same global batch uses
  // Trainer::TrainStep, which keeps this shard's rows (ShardBatch).
  seqio::ShardInfo data_shard_info() const override;

  models::FeatureBatch ShardBatch(const models::FeatureBatch& global) const override;
  // All-reduce (sum) of every gradient across the data axis; identity for
  // data = 1.
  // Tells the hooks the forward pass ended (ZeRO-3's gathers, gather_units.h).
  // Before the last microbatch's backward pass (data axis > 1): a hook on
  // each parameter not split over 'data' collects its gradient as the
  // backward pass produces it, in buckets of about kGradientBucketBytes
  // whose all-reduce over the data group starts at once and runs beside
  // the rest of the backward pass (DDP's bucketing).
  void BeforeBackward(models::ParamStore& params, bool last_microbatch) const override;
  static constexpr int64_t kGradientBucketBytes = 4 << 20;
  // Waits for the started buckets and writes their sums into .grad; what no
  // bucket carried (no hook, or a parameter whose gradient arrived in two
  // parts, e.g. under remat) goes through one flat all-reduce over the data
  // group. Parameters split over 'data' (ZeRO-3) are left out: their
  // reduce-scatter in the backward pass already summed them.
  void ReduceGradients(models::ParamStore& params) const override;
  void ReduceMetrics(at::Tensor& sums) const override;
  void ReduceOverModel(at::Tensor& t) const override;

  // This process's pieces of the whole parameters `whole` (copies), with
  // the hooks that compute with them; the partitioner remembers their
  // specs for its Reducer. Throws t5xx::Error naming a parameter whose
  // sharded dimension does not divide by its mesh axis.
  models::ParamStore ShardParams(const models::ParamStore& whole) override;
  // Keeps this process's box of each parameter (LocalShardBox) as it is
  // made; the same checks as ShardParams, on the specs, before any value.
  std::shared_ptr<const models::ParamPlacement> Placement(
      const std::vector<models::ParamSpec>& specs) override;
  // Each parameter's mesh axes, set by ShardParams (or InstallHooks).
  const std::map<std::string, PartitionSpec>& specs() const { return specs_; }
  // Installs the hooks on `local` (pieces already, e.g. restored by box).
  void InstallHooks(models::ParamStore& local) override;
  // FSDP's reshard_after_forward for kernels split over 'data' (ZeRO-3,
  // partitioned_hooks.h): true (the default) frees each gathered kernel
  // after its forward matmul and gathers it again for the backward pass;
  // false keeps it, trading memory for one gather less. Takes effect at
  // the next InstallHooks / ShardParams.
  void set_reshard_after_forward(bool reshard) { reshard_after_forward_ = reshard; }
  // The process groups of this process's slices of the mesh axes.
  const Communicator& data_group() const { return *data_group_; }
  const Communicator& model_group() const { return *model_group_; }

 private:
  Mesh mesh_;
  LogicalAxisRules rules_;
  std::shared_ptr<const Communicator> communicator_ = std::make_shared<LocalCommunicator>();
  std::shared_ptr<const Reducer> reducer_;
  std::shared_ptr<const Communicator> data_group_ = communicator_;
  std::shared_ptr<const Communicator> model_group_ = std::make_shared<LocalCommunicator>();
  MeshCoordinates coords_;
  int64_t data_index_ = 0;
  std::map<std::string, PartitionSpec> specs_;
  bool reshard_after_forward_ = true;
  struct PendingGradients;  // the buckets of the current step
  mutable std::shared_ptr<PendingGradients> pending_;  // a train step runs on one thread
};

}  // namespace t5xx::partitioning
