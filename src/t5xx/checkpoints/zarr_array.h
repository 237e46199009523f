// zarr v2 array store: one directory per array with its .zarray metadata
// (JSON) and C-order chunk files "i.j..." (raw, or gzip/zlib compressed).
// Behaviour of TensorStore's zarr driver as t5x uses it
// (t5x/checkpoints.py, _get_spec / _run_future_tree).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/checkpoints/array.h"

namespace t5xx::checkpoints {

// t5x's chunk choice: starting from `shape`, repeatedly lower the currently
// largest chunk dimension to its next smaller divisor of the full dimension
// until the chunk has <= target_elements elements.
std::vector<int64_t> ChooseChunkShape(const std::vector<int64_t>& shape,
                                      int64_t target_elements);

// Chunk shape SaveCheckpoint writes `array` with: ChooseChunkShape when the
// array has more than max_chunk_bytes bytes (and max_chunk_bytes > 0), else
// one chunk (the shape, with 0-sized dimensions as 1).
std::vector<int64_t> ChunkShapeFor(const ArrayRef& array,
                                   int64_t max_chunk_bytes);

// Writes `array` as zarr directory `dir` (created): .zarray, then one chunk
// file per chunk of shape `chunks` (edge chunks full-size, zero padded),
// gzip-compressed at `gzip_level` or raw when nullopt. Throws t5xx::Error
// naming the file on I/O failure.
void WriteZarrArray(const std::filesystem::path& dir, const ArrayRef& array,
                    const std::vector<int64_t>& chunks,
                    std::optional<int> gzip_level);

// Reads zarr directory `dir` (any chunking; compressor null, gzip or zlib;
// '.' or '/' dimension separator; missing chunks read as fill_value). `at`
// (the dotted checkpoint path) names the array in errors; `spec_dtype` and
// `spec_shape`, when given, must agree with the .zarray. Throws t5xx::Error
// for missing or malformed files, unsupported dtypes/compressors/filters/order
// and chunk size mismatches.
LoadedArray ReadZarrArray(
    const std::filesystem::path& dir, const std::string& at,
    std::optional<DType> spec_dtype,
    const std::optional<std::vector<int64_t>>& spec_shape);

}  // namespace t5xx::checkpoints
