// See simulated_partitioner.h.
#include "t5xx/partitioning/simulated_partitioner.h"

#include <algorithm>

#include "t5xx/util/error.h"

namespace t5xx::partitioning {

SimulatedCollective::SimulatedCollective(int size) : size_(size), slots_(size) {
  T5XX_CHECK(size >= 1, "SimulatedCollective needs at least one rank, got " + std::to_string(size));
}

at::Tensor SimulatedCollective::Sum(int rank, const at::Tensor& t) {
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t my_generation = generation_;
  slots_[static_cast<size_t>(rank)] = t.clone();
  if (++arrived_ == size_) {
    // Summed in rank order, so every shard sees the same bits.
    at::Tensor sum = slots_[0];
    for (int r = 1; r < size_; ++r) sum = sum + slots_[static_cast<size_t>(r)];
    result_ = sum;
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return result_.clone();
  }
  cv_.wait(lock, [&] { return generation_ != my_generation; });
  return result_.clone();
}

namespace {

class SimulatedCommunicator final : public Communicator {
 public:
  SimulatedCommunicator(std::shared_ptr<SimulatedCollective> c, int rank)
      : c_(std::move(c)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return c_->size(); }
  void AllReduceSum(at::Tensor& t) const override { t = c_->Sum(rank_, t); }

 private:
  std::shared_ptr<SimulatedCollective> c_;
  int rank_;
};

// Sums a partial statistic across the shards when it ran over the dim its
// parameter is split along.
class SimulatedReducer final : public Reducer {
 public:
  SimulatedReducer(std::shared_ptr<const Communicator> comm,
                   const std::map<std::string, int64_t>* split_dims)
      : comm_(std::move(comm)), split_dims_(split_dims) {}
  void AllReduceSum(at::Tensor& partial, const ReduceContext& ctx) const override {
    auto it = split_dims_->find(ctx.param);
    if (it == split_dims_->end()) return;
    if (std::find(ctx.dims.begin(), ctx.dims.end(), it->second) == ctx.dims.end()) return;
    comm_->AllReduceSum(partial);
  }
  std::vector<int64_t> GlobalShape(const std::string& param,
                                   at::IntArrayRef local_shape) const override {
    std::vector<int64_t> s = local_shape.vec();
    auto it = split_dims_->find(param);
    if (it != split_dims_->end()) s[static_cast<size_t>(it->second)] *= comm_->size();
    return s;
  }

 private:
  std::shared_ptr<const Communicator> comm_;
  const std::map<std::string, int64_t>* split_dims_;
};

}  // namespace

SimulatedShardsPartitioner::SimulatedShardsPartitioner(
    std::shared_ptr<SimulatedCollective> collective, int rank,
    std::map<std::string, int64_t> split_dims, LogicalAxisRules rules)
    : collective_(std::move(collective)),
      rank_(rank),
      split_dims_(std::move(split_dims)),
      rules_(std::move(rules)) {
  T5XX_CHECK(rank >= 0 && rank < collective_->size(),
             "rank " + std::to_string(rank) + " is outside [0, " +
                 std::to_string(collective_->size()) + ")");
  mesh_.model = collective_->size();
  communicator_ = std::make_shared<SimulatedCommunicator>(collective_, rank);
  reducer_ = std::make_shared<SimulatedReducer>(communicator_, &split_dims_);
}

std::map<std::string, int64_t> SimulatedShardsPartitioner::SplitEveryTensor(
    const models::ParamStore& params, const LogicalAxisRules& rules, int num_shards) {
  std::map<std::string, int64_t> dims;
  for (const auto& p : params.params()) {
    const PartitionSpec spec = LogicalToMeshAxes(p.axes, rules);
    std::optional<int64_t> chosen;
    for (int64_t d = 0; d < p.value.dim() && !chosen; ++d) {
      if (spec[static_cast<size_t>(d)] && p.value.size(d) % num_shards == 0) chosen = d;
    }
    for (int64_t d = 0; d < p.value.dim() && !chosen; ++d) {
      if (p.value.size(d) % num_shards == 0) chosen = d;
    }
    if (chosen) dims[p.name] = *chosen;
  }
  return dims;
}

at::Tensor SimulatedShardsPartitioner::Shard(const std::string& param,
                                             const at::Tensor& whole) const {
  auto it = split_dims_.find(param);
  if (it == split_dims_.end()) return whole.clone();
  const int64_t n = collective_->size();
  const int64_t piece = whole.size(it->second) / n;
  return whole.narrow(it->second, rank_ * piece, piece).contiguous().clone();
}

models::ParamStore SimulatedShardsPartitioner::ShardParams(const models::ParamStore& whole) {
  models::ParamStore out;
  for (const auto& p : whole.params()) out.Add(p.name, Shard(p.name, p.value.detach()), p.axes);
  return out;
}

}  // namespace t5xx::partitioning
