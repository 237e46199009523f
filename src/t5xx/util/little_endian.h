// Fixed-width little-endian integers in byte buffers: the encoding of
// OCDBT's lengths and CRCs, zarr v3 shard indexes and safetensors' header
// length. Byte by byte, so any host order and any alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace t5xx {

// The unsigned integer T stored little-endian at p[0 .. sizeof(T)).
template <typename T>
T LoadLittleEndian(const uint8_t* p) {
  static_assert(std::is_unsigned_v<T>, "unsigned integers only");
  T v = 0;
  for (size_t i = sizeof(T); i-- > 0;) v = static_cast<T>((v << 8) | p[i]);
  return v;
}

}  // namespace t5xx
