// TFRecord framing: the bytes written around each record of a TFRecord file
// (tf.Example data files, TensorBoard event files).
//
// Behaviour source: tensorflow/core/lib/io/record_writer.cc. Layout,
// little-endian:
//   uint64 length | uint32 masked_crc32c(length bytes) |
//   byte data[length] | uint32 masked_crc32c(data)
// Framework-free: no libtorch.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace t5xx {

// Bytes of the header (length + its masked CRC) and of the footer.
inline constexpr size_t kTFRecordHeaderSize = 12;
inline constexpr size_t kTFRecordFooterSize = 4;

// Appends `data` framed as one TFRecord (data.size() + 16 bytes).
void AppendTFRecordFrame(std::string* out, std::string_view data);

// `data` framed as one TFRecord.
std::string TFRecordFrame(std::string_view data);

}  // namespace t5xx
