// See tensor_offsets.h.
#include "t5xx/kernels/cpu/tensor_offsets.h"

#include <string>

#include "t5xx/util/error.h"

namespace t5xx::device {

std::vector<int64_t> LeadingOffsets(const at::Tensor& t, int64_t trailing_dims) {
  T5XX_CHECK(trailing_dims >= 0 && trailing_dims <= t.dim(),
             "LeadingOffsets: " + std::to_string(trailing_dims) + " trailing dimensions of a " +
                 std::to_string(t.dim()) + "-dimensional tensor");
  const int64_t dims = t.dim() - trailing_dims;
  int64_t count = 1;
  for (int64_t d = 0; d < dims; ++d) count *= t.size(d);
  std::vector<int64_t> offsets(static_cast<size_t>(count), 0);
  std::vector<int64_t> index(static_cast<size_t>(dims), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (int64_t d = 0; d < dims; ++d) offset += index[d] * t.stride(d);
    offsets[static_cast<size_t>(i)] = offset;
    for (int64_t d = dims - 1; d >= 0; --d) {
      if (++index[d] < t.size(d)) break;
      index[d] = 0;
    }
  }
  return offsets;
}

}  // namespace t5xx::device
