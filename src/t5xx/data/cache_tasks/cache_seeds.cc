// seqio_cache_tasks' seeds in exact arithmetic (see cache_seeds.h).
#include "t5xx/data/cache_tasks/cache_seeds.h"

#include <algorithm>

#include "t5xx/util/md5.h"

namespace t5xx::seqio {
namespace {

using u128 = unsigned __int128;

// int.from_bytes(bytes[0:n], "little").
u128 LittleEndian(const Md5Digest& d, size_t n) {
  u128 v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | d[i];
  return v;
}

// a + b for exact seeds (high parts stay tiny: at most a few units).
CacheSeed Add(const CacheSeed& a, const CacheSeed& b) {
  CacheSeed out;
  out.low = a.low + b.low;
  out.high = a.high + b.high + (out.low < a.low ? 1 : 0);
  return out;
}

CacheSeed FromUnsigned(u128 v) { return CacheSeed{0, v}; }

CacheSeed FromSigned(int64_t v) {
  // Two's complement across the 128-bit boundary: -5 = -1 * 2^128 + (2^128 - 5).
  return CacheSeed{v < 0 ? -1 : 0, static_cast<u128>(static_cast<__int128>(v))};
}

// value > 2^63 - 1.
bool AboveInt64Max(const CacheSeed& s) {
  if (s.high != 0) return s.high > 0;
  return s.low > static_cast<u128>(INT64_MAX);
}

}  // namespace

std::string CacheSeed::ToString() const {
  // Magnitude as three 64-bit limbs (most significant first), then long
  // division by 10.
  bool negative = high < 0;
  uint64_t limbs[3];
  if (negative) {
    // high == -1 (values never go below -2^63): magnitude = 2^128 - low.
    const u128 mag = ~low + 1;
    limbs[0] = 0;
    limbs[1] = static_cast<uint64_t>(mag >> 64);
    limbs[2] = static_cast<uint64_t>(mag);
  } else {
    limbs[0] = static_cast<uint64_t>(high);
    limbs[1] = static_cast<uint64_t>(low >> 64);
    limbs[2] = static_cast<uint64_t>(low);
  }
  std::string digits;
  while (limbs[0] != 0 || limbs[1] != 0 || limbs[2] != 0) {
    u128 rem = 0;
    for (uint64_t& limb : limbs) {
      const u128 cur = (rem << 64) | limb;
      limb = static_cast<uint64_t>(cur / 10);
      rem = cur % 10;
    }
    digits.push_back(static_cast<char>('0' + static_cast<int>(rem)));
  }
  if (digits.empty()) digits = "0";
  if (negative) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

std::optional<CacheSeed> CacheTaskSeed(const std::string& task_name,
                                       std::optional<int64_t> base_seed) {
  if (!base_seed || *base_seed == 0 || *base_seed == -1) return std::nullopt;
  return Add(FromUnsigned(LittleEndian(Md5(task_name), 16)), FromSigned(*base_seed));
}

CacheSeed CacheShardSeed(const std::string& task_name, int64_t shard_index,
                         const std::optional<CacheSeed>& task_seed) {
  const Md5Digest digest = Md5(task_name + "shard" + std::to_string(shard_index));
  const CacheSeed base = task_seed.value_or(CacheSeed{});
  CacheSeed seed = Add(FromUnsigned(LittleEndian(digest, 16)), base);
  if (AboveInt64Max(seed)) seed = Add(FromUnsigned(LittleEndian(digest, 7)), base);
  return seed;
}

}  // namespace t5xx::seqio
