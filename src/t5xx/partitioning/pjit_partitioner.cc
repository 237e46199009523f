// See pjit_partitioner.h.
#include "t5xx/partitioning/pjit_partitioner.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "t5xx/partitioning/partitioned_hooks.h"
#include "t5xx/util/error.h"
#include "t5xx/util/error_list.h"

namespace t5xx::partitioning {
namespace {

// Completes a partial statistic of a parameter over the groups that split
// the summed dims (partitioning/collectives/reducer.h).
class MeshReducer final : public Reducer {
 public:
  explicit MeshReducer(const PjitPartitioner* owner) : owner_(owner) {}
  void AllReduceSum(at::Tensor& partial, const ReduceContext& ctx) const override {
    const auto [data, model] = GroupsOf(ctx);
    if (data) owner_->data_group().AllReduceSum(partial);
    if (model) owner_->model_group().AllReduceSum(partial);
  }
  bool SumIsLocal(const ReduceContext& ctx) const override {
    const auto [data, model] = GroupsOf(ctx);
    return !data && !model;
  }
  // The requests that need the same groups (data, model or both) and share
  // a dtype go out as one flat all-reduce per group.
  void AllReduceSumMany(const std::vector<ReduceRequest>& requests) const override {
    std::map<std::tuple<bool, bool, at::ScalarType>, std::vector<const ReduceRequest*>> batches;
    for (const ReduceRequest& r : requests) {
      const auto [data, model] = GroupsOf(r.ctx);
      if (data || model) batches[{data, model, r.partial->scalar_type()}].push_back(&r);
    }
    for (const auto& [key, batch] : batches) {
      std::vector<at::Tensor> flat;
      for (const ReduceRequest* r : batch) flat.push_back(r->partial->reshape({-1}));
      at::Tensor sums = at::cat(flat);
      if (std::get<0>(key)) owner_->data_group().AllReduceSum(sums);
      if (std::get<1>(key)) owner_->model_group().AllReduceSum(sums);
      int64_t offset = 0;
      for (const ReduceRequest* r : batch) {
        const int64_t n = r->partial->numel();
        *r->partial = sums.narrow(0, offset, n).view(r->partial->sizes());
        offset += n;
      }
    }
  }
  std::vector<int64_t> GlobalShape(const std::string& param,
                                   at::IntArrayRef local_shape) const override {
    auto it = owner_->specs().find(param);
    if (it == owner_->specs().end()) return local_shape.vec();
    return GlobalShapeOf(local_shape.vec(), it->second, owner_->mesh());
  }

 private:
  // Whether the summed dims of ctx.param are split over 'data' and over
  // 'model' (a parameter without specs: neither).
  std::pair<bool, bool> GroupsOf(const ReduceContext& ctx) const {
    auto it = owner_->specs().find(ctx.param);
    if (it == owner_->specs().end()) return {false, false};
    bool data = false, model = false;
    for (int64_t d : ctx.dims) {
      const auto& axis = it->second[static_cast<size_t>(d)];
      data |= axis && *axis == "data";
      model |= axis && *axis == "model";
    }
    return {data, model};
  }

  const PjitPartitioner* owner_;
};

// Writes consecutive pieces of `flat` (the parameters' gradients
// concatenated in this order) into their .grad.
void CopyIntoGrads(const at::Tensor& flat, const std::vector<models::Param*>& params) {
  int64_t offset = 0;
  for (models::Param* p : params) {
    at::Tensor g = p->value.mutable_grad();
    const int64_t n = g.numel();
    g.copy_(flat.narrow(0, offset, n).view(g.sizes()));
    offset += n;
  }
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
            " process(es) of the run (one device each); start a multiple of " +
            std::to_string(num_partitions) + " processes, or choose a num_partitions that divides " +
            std::to_string(num_devices));
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

namespace {

// The model setting that sizes a dimension of this logical axis, for the
// message when it does not divide.
std::string SettingOf(const std::string& logical_axis) {
  if (logical_axis == "heads") return " (set by the network config's num_heads)";
  if (logical_axis == "joined_kv") return " (num_heads x head_dim of the network config)";
  if (logical_axis == "vocab") return " (the network config's vocab_size)";
  if (logical_axis == "mlp") return " (the network config's mlp_dim)";
  if (logical_axis == "embed") return " (the network config's emb_dim)";
  return "";
}

}  // namespace

namespace {

// Keeps the box of each parameter that this process holds on the mesh.
class BoxPlacement final : public models::ParamPlacement {
 public:
  BoxPlacement(std::map<std::string, PartitionSpec> specs, Mesh mesh, MeshCoordinates coords)
      : specs_(std::move(specs)), mesh_(mesh), coords_(coords) {}
  at::Tensor Place(const models::ParamSpec& spec,
                   const std::function<at::Tensor()>& make) const override {
    const ShardBox box = LocalShardBox(spec.shape, specs_.at(spec.name), mesh_, coords_, spec.name);
    if (box.shape == spec.shape) return make();
    at::Tensor piece = make();
    for (size_t d = 0; d < box.shape.size(); ++d) {
      piece = piece.narrow(static_cast<int64_t>(d), box.origin[d], box.shape[d]);
    }
    return piece.contiguous().clone();  // the whole is freed here
  }

 private:
  std::map<std::string, PartitionSpec> specs_;
  Mesh mesh_;
  MeshCoordinates coords_;
};

}  // namespace

std::shared_ptr<const models::ParamPlacement> PjitPartitioner::Placement(
    const std::vector<models::ParamSpec>& params) {
  // Every parameter is checked before any is made, and every problem is
  // reported at once (a missing rule is named once, however many
  // parameters it concerns).
  std::vector<std::string> errors;
  std::map<std::string, PartitionSpec> specs;
  for (const models::ParamSpec& p : params) {
    PartitionSpec spec;
    try {
      spec = LogicalToMeshAxes(p.axes, rules_);
    } catch (const Error& e) {
      if (std::find(errors.begin(), errors.end(), e.what()) == errors.end()) errors.push_back(e.what());
      continue;
    }
    for (size_t d = 0; d < spec.size(); ++d) {
      if (!spec[d]) continue;
      const int64_t n = mesh_.AxisSize(*spec[d]);
      if (p.shape[d] % n != 0) {
        errors.push_back("parameter " + p.name + ": dimension " + std::to_string(d) + " ('" +
                         p.axes[d] + "') of size " + std::to_string(p.shape[d]) +
                         SettingOf(p.axes[d]) + " does not divide by the '" + *spec[d] +
                         "' mesh axis of size " + std::to_string(n) +
                         "; choose a size that divides, another num_partitions / process count, or "
                         "map '" + p.axes[d] + "' to None in logical_axis_rules");
      }
    }
    specs[p.name] = spec;
  }
  ThrowIfAny(errors, "the partitioning of the model's parameters over the mesh (data=" +
                         std::to_string(mesh_.data) + ", model=" + std::to_string(mesh_.model) +
                         ")");
  return std::make_shared<BoxPlacement>(std::move(specs), mesh_, coords_);
}

models::ParamStore PjitPartitioner::ShardParams(const models::ParamStore& whole) {
  const std::shared_ptr<const models::ParamPlacement> placement = Placement(whole.Specs());
  models::ParamStore local;
  for (const models::Param& p : whole.params()) {
    const at::Tensor value = p.value.detach();
    at::Tensor kept = placement->Place({p.name, value.sizes().vec(), p.axes},
                                       [&] { return value; });
    // A parameter kept whole is still a copy of its own.
    if (kept.is_same(value)) kept = value.clone();
    local.Add(p.name, kept, p.axes);
  }
  InstallHooks(local);
  return local;
}

void PjitPartitioner::InstallHooks(models::ParamStore& local) {
  specs_.clear();
  for (const models::Param& p : local.params()) specs_[p.name] = LogicalToMeshAxes(p.axes, rules_);
  if (mesh_.size() == 1) return;  // one process: single-device math
  // t5x's activation rules for the residual stream ('batch', 'length',
  // 'embed'): under activation_partitioning_dims = 2 'embed' is on 'model'.
  const PartitionSpec residual = LogicalToMeshAxes({"batch", "length", "embed"}, rules_);
  const bool split_embed = residual[2] && *residual[2] == "model";
  local.set_hooks(std::make_shared<PartitionedHooks>(local, specs_, mesh_, coords_, data_group_,
                                                     model_group_, reshard_after_forward_,
                                                     split_embed));
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

struct PjitPartitioner::PendingGradients {
  struct Bucket {
    std::vector<models::Param*> params;
    std::vector<at::Tensor> grads;  // flattened totals, in arrival order
    int64_t bytes = 0;
    at::Tensor flat;
    std::function<void()> wait;  // set once started
  };
  std::vector<std::pair<models::Param*, unsigned>> hooks;
  std::map<const models::Param*, int> arrivals;
  std::vector<Bucket> buckets{1};
  bool split_arrival = false;  // a gradient came in two parts

  void Start(Bucket& b, const Communicator& group) {
    b.flat = at::cat(b.grads);
    b.grads.clear();  // the flat copy is all the bucket needs (1x, not 2x the gradients)
    b.wait = group.StartAllReduceSum(b.flat);
  }
};

void PjitPartitioner::BeforeBackward(models::ParamStore& params, bool last_microbatch) const {
  if (const auto* hooks = dynamic_cast<const PartitionedHooks*>(&params.hooks())) {
    hooks->EndForward();
  }
  if (!last_microbatch || mesh_.data == 1) return;
  auto pending = std::make_shared<PendingGradients>();
  const Communicator* group = data_group_.get();
  for (models::Param& p : params.params()) {
    auto it = specs_.find(p.name);
    if ((it != specs_.end() && UsesAxis(it->second, "data")) || !p.value.requires_grad()) continue;
    models::Param* param = &p;
    PendingGradients* state = pending.get();
    const unsigned index = p.value.register_hook([state, param, group](const at::Tensor& grad) {
      if (++state->arrivals[param] > 1) {
        state->split_arrival = true;  // ReduceGradients falls back to the flat path
        return;
      }
      // The step's whole gradient: earlier microbatches' .grad plus this.
      const at::Tensor& before = param->value.grad();
      const at::Tensor total = before.defined() ? before + grad : grad.clone();
      PendingGradients::Bucket& b = state->buckets.back();
      b.params.push_back(param);
      b.grads.push_back(total.reshape({-1}));
      b.bytes += total.numel() * total.element_size();
      if (b.bytes >= kGradientBucketBytes) {
        state->Start(b, *group);
        state->buckets.emplace_back();
      }
    });
    pending->hooks.emplace_back(param, index);
  }
  pending_ = std::move(pending);
}

void PjitPartitioner::ReduceGradients(models::ParamStore& params) const {
  if (const auto* hooks = dynamic_cast<const PartitionedHooks*>(&params.hooks())) {
    hooks->FinishGradients();
  }
  if (mesh_.data == 1) return;  // single replica: gradients are complete
  std::set<const models::Param*> done;
  if (std::shared_ptr<PendingGradients> pending = std::move(pending_)) {
    for (auto& [param, index] : pending->hooks) param->value.remove_hook(index);
    PendingGradients::Bucket& last = pending->buckets.back();
    if (!last.grads.empty()) pending->Start(last, *data_group_);
    for (PendingGradients::Bucket& b : pending->buckets) {
      if (b.wait) b.wait();  // every process waits for every bucket it started
    }
    if (!pending->split_arrival) {
      for (PendingGradients::Bucket& b : pending->buckets) {
        if (!b.flat.defined()) continue;  // the empty last bucket
        CopyIntoGrads(b.flat, b.params);
        done.insert(b.params.begin(), b.params.end());
      }
    }
  }
  // One flat buffer, one all-reduce over the data group for the rest.
  std::vector<models::Param*> reduced;
  std::vector<at::Tensor> grads;
  for (auto& p : params.params()) {
    const at::Tensor& g = p.value.grad();
    T5XX_CHECK(g.defined(), "ReduceGradients: parameter " + p.name + " has no gradient");
    auto it = specs_.find(p.name);
    if (it != specs_.end() && UsesAxis(it->second, "data")) continue;
    if (done.count(&p)) continue;
    reduced.push_back(&p);
    grads.push_back(g.reshape({-1}));
  }
  if (grads.empty()) return;
  at::Tensor flat = at::cat(grads);
  data_group_->AllReduceSum(flat);
  CopyIntoGrads(flat, reduced);
}

void PjitPartitioner::ReduceMetrics(at::Tensor& sums) const {
  if (mesh_.data > 1) data_group_->AllReduceSum(sums);
}

void PjitPartitioner::ReduceOverModel(at::Tensor& t) const {
  if (mesh_.model > 1) model_group_->AllReduceSum(t);
}

}  // namespace t5xx::partitioning
