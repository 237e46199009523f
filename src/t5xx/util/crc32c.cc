// See crc32c.h.
#include "t5xx/util/crc32c.h"

#include <array>

namespace t5xx {
namespace {

std::array<uint32_t, 256> MakeCrc32cTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}

}  // namespace

uint32_t Crc32c(const void* data, size_t size, uint32_t crc) {
  static const std::array<uint32_t, 256> table = MakeCrc32cTable();
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t MaskedCrc32c(const void* data, size_t size) {
  const uint32_t c = Crc32c(data, size);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

}  // namespace t5xx
