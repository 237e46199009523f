// See pjit_partitioner.h.
#include "t5xx/partitioning/pjit_partitioner.h"

#include <algorithm>

#include "t5xx/partitioning/partitioned_hooks.h"
#include "t5xx/util/error.h"

namespace t5xx::partitioning {
namespace {

// Completes a partial statistic of a parameter over the groups that split
// the summed dims (partitioning/reducer.h).
class MeshReducer final : public Reducer {
 public:
  explicit MeshReducer(const PjitPartitioner* owner) : owner_(owner) {}
  void AllReduceSum(at::Tensor& partial, const ReduceContext& ctx) const override {
    auto it = owner_->specs().find(ctx.param);
    if (it == owner_->specs().end()) return;
    bool data = false, model = false;
    for (int64_t d : ctx.dims) {
      const auto& axis = it->second[static_cast<size_t>(d)];
      if (!axis) continue;
      data |= *axis == "data";
      model |= *axis == "model";
    }
    if (data) owner_->data_group().AllReduceSum(partial);
    if (model) owner_->model_group().AllReduceSum(partial);
  }
  std::vector<int64_t> GlobalShape(const std::string& param,
                                   at::IntArrayRef local_shape) const override {
    auto it = owner_->specs().find(param);
    if (it == owner_->specs().end()) return local_shape.vec();
    return GlobalShapeOf(local_shape.vec(), it->second, owner_->mesh());
  }

 private:
  const PjitPartitioner* owner_;
};

bool UsesAxis(const PartitionSpec& spec, const std::string& axis) {
  return std::any_of(spec.begin(), spec.end(), [&](const auto& a) { return a && *a == axis; });
}

}  // namespace

PjitPartitioner::PjitPartitioner(int64_t num_partitions, LogicalAxisRules rules,
                                 int64_t num_devices)
    : rules_(std::move(rules)) {
  T5XX_CHECK(num_partitions >= 1,
        "partitioning.PjitPartitioner.num_partitions must be >= 1, got " +
            std::to_string(num_partitions));
  T5XX_CHECK(num_devices % num_partitions == 0,
        "partitioning.PjitPartitioner.num_partitions = " +
            std::to_string(num_partitions) + " does not divide the " +
            std::to_string(num_devices) +
            " available device(s); t5xx runs one process with one device for "
            "now, so set num_partitions = 1");
  mesh_.model = num_partitions;
  mesh_.data = num_devices / num_partitions;
  reducer_ = std::make_shared<MeshReducer>(this);
}

PjitPartitioner::PjitPartitioner(int64_t num_partitions, LogicalAxisRules rules,
                                 std::shared_ptr<const Communicator> communicator)
    : PjitPartitioner(num_partitions, std::move(rules), communicator->size()) {
  communicator_ = std::move(communicator);
  coords_ = MeshCoordinates::OfRank(communicator_->rank(), mesh_);
  data_index_ = coords_.data;
  // One group per slice of each axis, 'data' slices first on every process.
  const int m = static_cast<int>(mesh_.model), d = static_cast<int>(mesh_.data);
  if (mesh_.model == 1) {
    data_group_ = communicator_;
  } else if (mesh_.data == 1) {
    data_group_ = std::make_shared<LocalCommunicator>();
  } else {
    std::vector<int> ranks;
    for (int i = 0; i < d; ++i) ranks.push_back(i * m + static_cast<int>(coords_.model));
    data_group_ = communicator_->Subgroup(ranks);
  }
  if (mesh_.model > 1) {
    if (mesh_.data == 1) {
      model_group_ = communicator_;
    } else {
      std::vector<int> ranks;
      for (int j = 0; j < m; ++j) ranks.push_back(static_cast<int>(coords_.data) * m + j);
      model_group_ = communicator_->Subgroup(ranks);
    }
  }
}

models::ParamStore PjitPartitioner::ShardParams(const models::ParamStore& whole) {
  models::ParamStore local;
  for (const models::Param& p : whole.params()) {
    const PartitionSpec spec = LogicalToMeshAxes(p.axes, rules_);
    const ShardBox box = LocalShardBox(p.value.sizes().vec(), spec, mesh_, coords_, p.name);
    at::Tensor piece = p.value.detach();
    for (size_t i = 0; i < box.shape.size(); ++i) {
      piece = piece.narrow(static_cast<int64_t>(i), box.origin[i], box.shape[i]);
    }
    local.Add(p.name, piece.contiguous().clone(), p.axes);
  }
  InstallHooks(local);
  return local;
}

void PjitPartitioner::InstallHooks(models::ParamStore& local) {
  specs_.clear();
  for (const models::Param& p : local.params()) specs_[p.name] = LogicalToMeshAxes(p.axes, rules_);
  if (mesh_.size() == 1) return;  // one process: single-device math
  local.set_hooks(std::make_shared<PartitionedHooks>(local, specs_, mesh_, coords_, data_group_,
                                                     model_group_));
}

seqio::ShardInfo PjitPartitioner::data_shard_info() const {
  // One shard per data replica; the 'model' replicas of one share it.
  return seqio::ShardInfo{static_cast<int>(data_index_), static_cast<int>(mesh_.data)};
}

models::FeatureBatch PjitPartitioner::ShardBatch(
    const models::FeatureBatch& global) const {
  if (mesh_.data == 1) return global;
  models::FeatureBatch local;
  for (const auto& [name, t] : global) {
    const int64_t b = t.size(0);
    T5XX_CHECK(b % mesh_.data == 0,
          "batch size " + std::to_string(b) + " does not divide by the data "
          "axis size " + std::to_string(mesh_.data));
    const int64_t per = b / mesh_.data;
    local[name] = t.narrow(0, data_index_ * per, per);
  }
  return local;
}

void PjitPartitioner::ReduceGradients(models::ParamStore& params) const {
  if (mesh_.data == 1) return;  // single replica: gradients are complete
  // One flat buffer, one all-reduce over the data group: fewer, larger
  // messages than one per parameter (bucketing as DDP does, with a single
  // bucket). Parameters split over 'data' (ZeRO-3) are left out: their
  // reduce-scatter in the backward pass already summed them.
  std::vector<models::Param*> reduced;
  std::vector<at::Tensor> grads;
  for (auto& p : params.params()) {
    const at::Tensor& g = p.value.grad();
    T5XX_CHECK(g.defined(), "ReduceGradients: parameter " + p.name + " has no gradient");
    auto it = specs_.find(p.name);
    if (it != specs_.end() && UsesAxis(it->second, "data")) continue;
    reduced.push_back(&p);
    grads.push_back(g.reshape({-1}));
  }
  if (grads.empty()) return;
  at::Tensor flat = at::cat(grads);
  data_group_->AllReduceSum(flat);
  int64_t offset = 0;
  for (models::Param* pp : reduced) {
    models::Param& p = *pp;
    at::Tensor g = p.value.mutable_grad();
    const int64_t n = g.numel();
    g.copy_(flat.narrow(0, offset, n).view(g.sizes()));
    offset += n;
  }
}

void PjitPartitioner::ReduceMetrics(at::Tensor& sums) const {
  if (mesh_.data > 1) data_group_->AllReduceSum(sums);
}

}  // namespace t5xx::partitioning
