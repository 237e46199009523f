// See pjit_partitioner.h.
#include "t5xx/partitioning/pjit_partitioner.h"

#include "t5xx/util/error.h"

namespace t5xx::partitioning {

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
}

PjitPartitioner::PjitPartitioner(int64_t num_partitions, LogicalAxisRules rules,
                                 std::shared_ptr<const Communicator> communicator)
    : PjitPartitioner(num_partitions, std::move(rules), communicator->size()) {
  T5XX_CHECK(num_partitions == 1 || communicator->size() == 1,
             "partitioning.PjitPartitioner.num_partitions = " + std::to_string(num_partitions) +
                 " across " + std::to_string(communicator->size()) +
                 " processes: tensor (model) parallelism across processes is not implemented "
                 "yet; set num_partitions = 1 for data parallelism");
  communicator_ = std::move(communicator);
  data_index_ = communicator_->rank() / num_partitions;
}

seqio::ShardInfo PjitPartitioner::data_shard_info() const {
  // Every process reads the whole global batch and ShardBatch keeps its
  // rows, so that N processes train on exactly the examples one process
  // does (reading only a shard per process comes with sharded input).
  return seqio::ShardInfo{};
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
  // One flat buffer, one all-reduce: fewer, larger messages than one per
  // parameter (bucketing as DDP does, with a single bucket).
  std::vector<at::Tensor> grads;
  for (auto& p : params.params()) {
    const at::Tensor& g = p.value.grad();
    T5XX_CHECK(g.defined(), "ReduceGradients: parameter " + p.name + " has no gradient");
    grads.push_back(g.reshape({-1}));
  }
  at::Tensor flat = at::cat(grads);
  communicator_->AllReduceSum(flat);
  int64_t offset = 0;
  for (auto& p : params.params()) {
    at::Tensor g = p.value.mutable_grad();
    const int64_t n = g.numel();
    g.copy_(flat.narrow(0, offset, n).view(g.sizes()));
    offset += n;
  }
}

void PjitPartitioner::ReduceMetrics(at::Tensor& sums) const {
  if (mesh_.data > 1) communicator_->AllReduceSum(sums);
}

}  // namespace t5xx::partitioning
