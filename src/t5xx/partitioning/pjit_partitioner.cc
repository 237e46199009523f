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

seqio::ShardInfo PjitPartitioner::data_shard_info() const {
  seqio::ShardInfo info;
  info.index = static_cast<int>(data_index_);
  info.num_shards = static_cast<int>(mesh_.data);
  return info;
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
  throw Error("multi-replica gradient reduction needs the c10d communicator, "
              "which is not available yet");
}

}  // namespace t5xx::partitioning
