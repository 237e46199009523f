// The ('data', 'model') device mesh of t5x's partitioner (t5x/partitioning.py):
// the sizes of its two axes.
#pragma once

#include <cstdint>
#include <string>

namespace t5xx::partitioning {

struct Mesh {
  int64_t data = 1;   // size of the 'data' axis
  int64_t model = 1;  // size of the 'model' axis
  int64_t size() const { return data * model; }
  // The size of mesh axis 'data' or 'model'; t5xx::Error for another name.
  int64_t AxisSize(const std::string& axis) const;
};

}  // namespace t5xx::partitioning
