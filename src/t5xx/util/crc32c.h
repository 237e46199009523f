// CRC-32C (Castagnoli) and TFRecord's masked form of it.
//
// Behaviour source: tensorflow/core/lib/hash/crc32c.h (Value, Extend, Mask),
// used by TFRecord files (tensorflow/core/lib/io/record_writer.cc) and so by
// TensorBoard event files. Framework-free: no libtorch.
#pragma once

#include <cstddef>
#include <cstdint>

namespace t5xx {

// CRC-32C (reflected polynomial 0x82F63B78), table-driven, over `size` bytes
// at `data`. `crc` continues a previous value (0 to start), so
// Crc32c("6789", 4, Crc32c("12345", 5)) == Crc32c("123456789", 9) ==
// 0xE3069283. Never throws.
uint32_t Crc32c(const void* data, size_t size, uint32_t crc = 0);

// TFRecord's masked CRC: ((c >> 15) | (c << 17)) + 0xa282ead8 with
// c = Crc32c(data, size) (crc32c::Mask). Never throws.
uint32_t MaskedCrc32c(const void* data, size_t size);

}  // namespace t5xx
