// See hash.h.
#include "t5xx/util/hash.h"

namespace t5xx {

uint64_t SplitMix64(uint64_t x) {
  x += kSplitMix64Gamma;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

uint64_t SplitMix64Next(uint64_t* state) {
  const uint64_t out = SplitMix64(*state);
  *state += kSplitMix64Gamma;
  return out;
}

uint64_t HashSeed(uint64_t seed, uint64_t index, uint64_t purpose) {
  uint64_t h = SplitMix64(seed);
  h = SplitMix64(h ^ SplitMix64(index + 0x632BE59BD9B4E019ULL));
  h = SplitMix64(h ^ SplitMix64(purpose + 0x8CB92BA72F3D8DD7ULL));
  return h;
}

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ULL;
  }
  return h;
}

}  // namespace t5xx
