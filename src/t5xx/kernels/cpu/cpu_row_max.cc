// See cpu_row_max.h. Compiled with -ffinite-math-only -fno-signed-zeros
// (src/t5xx/device/CMakeLists.txt).
#include "t5xx/kernels/cpu/cpu_row_max.h"

#include <algorithm>

#include "t5xx/kernels/cpu/cpu_vector_math.h"

namespace t5xx::device {

T5XX_CPU_CLONES
float RowMax(const float* x, int64_t n) {
  float m = -3.0e38f;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

}  // namespace t5xx::device
