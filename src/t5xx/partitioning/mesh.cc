// See mesh.h.
#include "t5xx/partitioning/mesh.h"

#include "t5xx/util/error.h"

namespace t5xx::partitioning {

int64_t Mesh::AxisSize(const std::string& axis) const {
  if (axis == "data") return data;
  if (axis == "model") return model;
  throw Error("unknown mesh axis '" + axis + "' (mesh axes are 'data', 'model')");
}

}  // namespace t5xx::partitioning
