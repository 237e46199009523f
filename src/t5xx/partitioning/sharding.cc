// See sharding.h.
#include "t5xx/partitioning/sharding.h"

#include <algorithm>

#include "t5xx/util/error.h"

namespace t5xx::partitioning {

int64_t MeshCoordinates::Of(const std::string& axis) const {
  if (axis == "data") return data;
  if (axis == "model") return model;
  throw Error("unknown mesh axis '" + axis + "' (the mesh axes are 'data' and 'model')");
}

MeshCoordinates MeshCoordinates::OfRank(int64_t rank, const Mesh& mesh) {
  return MeshCoordinates{rank / mesh.model, rank % mesh.model};
}

ShardBox LocalShardBox(const std::vector<int64_t>& global_shape, const PartitionSpec& spec,
                       const Mesh& mesh, const MeshCoordinates& coords, const std::string& what) {
  T5XX_CHECK(spec.size() == global_shape.size(),
             what + ": partition spec " + PartitionSpecToString(spec) + " has " +
                 std::to_string(spec.size()) + " entries for " +
                 std::to_string(global_shape.size()) + " dimensions");
  ShardBox box{std::vector<int64_t>(global_shape.size(), 0), global_shape};
  for (size_t d = 0; d < global_shape.size(); ++d) {
    if (!spec[d]) continue;
    const int64_t n = mesh.AxisSize(*spec[d]);
    T5XX_CHECK(global_shape[d] % n == 0,
               what + ": dimension " + std::to_string(d) + " of size " +
                   std::to_string(global_shape[d]) + " is sharded over mesh axis '" + *spec[d] +
                   "' of size " + std::to_string(n) +
                   " but does not divide by it; choose sizes that divide, or map its logical "
                   "axis to None in logical_axis_rules");
    box.shape[d] = global_shape[d] / n;
    box.origin[d] = coords.Of(*spec[d]) * box.shape[d];
  }
  return box;
}

std::vector<int64_t> GlobalShapeOf(const std::vector<int64_t>& local_shape,
                                   const PartitionSpec& spec, const Mesh& mesh) {
  std::vector<int64_t> g = local_shape;
  for (size_t d = 0; d < g.size() && d < spec.size(); ++d) {
    if (spec[d]) g[d] *= mesh.AxisSize(*spec[d]);
  }
  return g;
}

bool IsPrimaryReplica(const PartitionSpec& spec, const Mesh& mesh, const MeshCoordinates& coords) {
  for (const std::string axis : {"data", "model"}) {
    const bool used = std::any_of(spec.begin(), spec.end(),
                                  [&](const auto& a) { return a && *a == axis; });
    if (!used && mesh.AxisSize(axis) > 1 && coords.Of(axis) != 0) return false;
  }
  return true;
}

bool UsesAxis(const PartitionSpec& spec, const std::string& axis) {
  return std::any_of(spec.begin(), spec.end(), [&](const auto& a) { return a && *a == axis; });
}

}  // namespace t5xx::partitioning
