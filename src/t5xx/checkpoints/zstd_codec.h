// zstd (RFC 8878) frames: the chunk compressor Orbax's zarr arrays use
// ({"id": "zstd", "level": 1}) and the compression of OCDBT manifests and
// B+tree nodes (ocdbt.h). Through libzstd's streaming API, because
// TensorStore's zarr v2 chunks are frames without a content size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace t5xx::checkpoints {

// One zstd frame of `data` at `level` (1..19; TensorStore's default zarr
// level is 1), with its content size recorded. Throws t5xx::Error for a
// level outside libzstd's range.
std::vector<uint8_t> ZstdCompress(const void* data, size_t size, int level);

// Decompresses the zstd frame(s) in `data`. `max_size` is the most it may
// decompress to (a zarr chunk's bytes, an OCDBT node's
// max_decoded_node_bytes): data that would come out longer is refused once
// max_size + 1 bytes have come out, never decompressed whole. `what` names
// the source in errors. Throws t5xx::Error naming `what` for corrupt,
// truncated or oversized data.
std::vector<uint8_t> ZstdDecompress(const void* data, size_t size, const std::string& what,
                                    size_t max_size);

}  // namespace t5xx::checkpoints
