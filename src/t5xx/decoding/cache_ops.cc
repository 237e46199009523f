// The implementation of cache_ops.h (and decoding.h's FlatBatchBeamExpand).
#include "t5xx/decoding/cache_ops.h"

#include <stdexcept>
#include <string>

namespace t5xx::decoding {

at::Tensor FlatBatchBeamExpand(const at::Tensor& x, int64_t n) {
  if (n == 1) return x;
  return x.repeat_interleave(n, 0);
}

void ExpandCache(Cache& cache, int64_t n, int64_t batch) {
  for (auto& [name, t] : cache) {
    if (!t.defined() || t.dim() == 0) continue;
    if (t.size(0) != batch) {
      throw std::invalid_argument("decoding cache tensor '" + name + "' has dim 0 of size " +
                                  std::to_string(t.size(0)) + ", not the batch size " +
                                  std::to_string(batch) +
                                  " (every cache tensor with dims is per example)");
    }
    if (!IsPerExampleEntry(name)) t = FlatBatchBeamExpand(t, n);
  }
}

bool IsPerExampleEntry(const std::string& name) {
  const size_t n = sizeof(kPerExampleSuffix) - 1;
  return name.size() >= n && name.compare(name.size() - n, n, kPerExampleSuffix) == 0;
}

void GatherCache(Cache& cache, const at::Tensor& rows) {
  for (auto& [name, t] : cache) {
    if (!t.defined() || t.dim() == 0 || IsPerExampleEntry(name)) continue;
    t = t.index_select(0, rows.device() == t.device() ? rows : rows.to(t.device()));
  }
}

}  // namespace t5xx::decoding
