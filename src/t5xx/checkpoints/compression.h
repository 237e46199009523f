// zarr chunk compression: gzip (RFC 1952) out, gzip or zlib in — the
// compressors numcodecs and TensorStore write for t5x checkpoints. Through
// libdeflate when it can, else zlib (same formats; libdeflate's level-1
// bytes differ from zlib's, and every gzip reader reads both).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace t5xx::checkpoints {

// gzip (RFC 1952) stream, as numcodecs' GZip / TensorStore's gzip compressor.
// Throws t5xx::Error for a level outside 0-9.
std::vector<uint8_t> GzipCompress(const void* data, size_t size, int level);
// The most bytes Inflate returns when it is given no expected size.
inline constexpr size_t kMaxInflatedBytes = size_t{1} << 32;

// Inflates a gzip or zlib stream (auto-detected). `what` names the source in
// errors. `expected_size` (0: unknown) is the most it may inflate to (a
// zarr chunk's size): the output buffer is sized for it up front, and a
// stream that would inflate to more -- a corrupt chunk, or one made to
// inflate to gigabytes -- is refused once that many bytes have come out,
// never inflated whole. Without it the limit is kMaxInflatedBytes. Throws
// t5xx::Error naming `what` for corrupt or truncated data and for output
// over the limit.
std::vector<uint8_t> Inflate(const void* data, size_t size,
                             const std::string& what,
                             size_t expected_size = 0);

}  // namespace t5xx::checkpoints
