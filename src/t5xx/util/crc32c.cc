// See crc32c.h.
#include "t5xx/util/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define T5XX_CRC32C_SSE42 1
#endif

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

uint32_t TableCrc32c(const unsigned char* p, size_t size, uint32_t crc) {
  static const std::array<uint32_t, 256> table = MakeCrc32cTable();
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

#ifdef T5XX_CRC32C_SSE42
// The SSE4.2 crc32 instruction computes the same polynomial, 8 bytes at a
// time (checkpoint chunks are checked at disk speed); used only where the
// CPU has it.
__attribute__((target("sse4.2"))) uint32_t Sse42Crc32c(const unsigned char* p, size_t size,
                                                        uint32_t crc) {
  uint64_t c = ~crc;
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  for (; size > 0; --size, ++p) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
}
#endif

}  // namespace

uint32_t Crc32c(const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
#ifdef T5XX_CRC32C_SSE42
  static const bool has_sse42 = __builtin_cpu_supports("sse4.2");
  if (has_sse42) return Sse42Crc32c(p, size, crc);
#endif
  return TableCrc32c(p, size, crc);
}

uint32_t MaskedCrc32c(const void* data, size_t size) {
  const uint32_t c = Crc32c(data, size);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

}  // namespace t5xx
