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
// Inflates a gzip or zlib stream (auto-detected). `what` names the source in
// errors (corrupt or truncated data); `expected_size` (if known) sizes the
// output buffer up front.
std::vector<uint8_t> Inflate(const void* data, size_t size,
                             const std::string& what,
                             size_t expected_size = 0);

}  // namespace t5xx::checkpoints
