// Where a sharded variable's pieces live on the ('data', 'model') mesh: this
// process's mesh coordinates, the box (origin and shape per dimension) of a
// variable it holds under a PartitionSpec, the global shape of a local
// piece, and which replica of a box is the one that writes it. The layout
// follows t5x's mesh (t5x/partitioning.py: devices reshaped to
// (data, model), model varying fastest, so process r sits at data = r /
// model, model = r % model), and a dimension mapped to a mesh axis of size
// n splits into n equal contiguous blocks in coordinate order, as GSPMD
// splits it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/partitioning/logical_axis_rules.h"
#include "t5xx/partitioning/mesh.h"

namespace t5xx::partitioning {

// This process's position on each mesh axis.
struct MeshCoordinates {
  int64_t data = 0;
  int64_t model = 0;
  // The coordinate on 'data' or 'model'; t5xx::Error for another name.
  int64_t Of(const std::string& axis) const;
  // Process `rank` of mesh.size() on `mesh` (model fastest).
  static MeshCoordinates OfRank(int64_t rank, const Mesh& mesh);
};

// A hyper-rectangle of a variable: origin and shape per dimension (rank 0:
// both empty).
struct ShardBox {
  std::vector<int64_t> origin;
  std::vector<int64_t> shape;
  bool operator==(const ShardBox& o) const { return origin == o.origin && shape == o.shape; }
};

// The box of a variable of `global_shape` sharded by `spec` that the process
// at `coords` holds. Throws t5xx::Error naming `what`, the dimension and the
// axis when a sharded dimension does not divide by its mesh axis size.
ShardBox LocalShardBox(const std::vector<int64_t>& global_shape, const PartitionSpec& spec,
                       const Mesh& mesh, const MeshCoordinates& coords,
                       const std::string& what = "variable");

// The global shape of a local piece of `local_shape` under `spec`: each
// sharded dimension times its mesh axis size.
std::vector<int64_t> GlobalShapeOf(const std::vector<int64_t>& local_shape,
                                   const PartitionSpec& spec, const Mesh& mesh);

// Whether the process at `coords` is the one replica that writes its box:
// coordinate 0 on every mesh axis that `spec` does not use (a variable
// replicated over 'model' is written by model index 0 only), so each
// distinct box is written exactly once.
bool IsPrimaryReplica(const PartitionSpec& spec, const Mesh& mesh, const MeshCoordinates& coords);

// Whether some dimension of `spec` is sharded over mesh axis `axis`.
bool UsesAxis(const PartitionSpec& spec, const std::string& axis);

}  // namespace t5xx::partitioning
