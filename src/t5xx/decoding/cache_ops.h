// The cache's beam expansion and reordering (t5x's flat_batch_beam_expand
// over cache_map, and cache_gather_beams), shared by temperature_sample.cc
// and beam_search.cc. Internal to t5xx_decoding (and its tests).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

#include "t5xx/decoding/decoding.h"

namespace t5xx::decoding {

// FlatBatchBeamExpand (decoding.h) on every cache tensor with >= 1 dims but
// the per-example ones (kPerExampleSuffix: they keep one row per example);
// 0-dim tensors are left as they are. Throws std::invalid_argument when
// such a tensor's dim 0 is not `batch` (the cache contract in decoding.h).
void ExpandCache(Cache& cache, int64_t n, int64_t batch);

// cache[k] = cache[k].index_select(0, rows) for every tensor with >= 1 dims
// but the per-example ones (decoding.h's kPerExampleSuffix: `rows` only
// permutes an example's beams) -- t5x's cache_gather_beams on the flattened
// batch * beams axis.
void GatherCache(Cache& cache, const at::Tensor& rows);

}  // namespace t5xx::decoding
