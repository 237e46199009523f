// Hashing and seed mixing: the one SplitMix64 mixer, the (seed, index,
// purpose) seed hash built on it, and FNV-1a for strings.
//
// Every random decision in t5xx is a pure function of a seed mixed here, so
// results never depend on batching, threads or read order. SplitMix64 is
// Steele, Lea & Flood's splitmix64 generator step (as in java.util.
// SplittableRandom); not bit-equal to TF's Philox, which seqio/t5x use.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <string_view>

namespace t5xx {

// splitmix64's increment (the golden ratio in 64-bit fixed point).
inline constexpr uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ULL;

// One splitmix64 step as a pure function: mixes x + kSplitMix64Gamma with
// the splitmix64 finaliser. A bijection on uint64.
uint64_t SplitMix64(uint64_t x);

// The stateful splitmix64 generator: returns SplitMix64(*state) and advances
// *state by kSplitMix64Gamma.
uint64_t SplitMix64Next(uint64_t* state);

// Hash of (seed, index, purpose) -> a 64-bit stream key: the key of the
// index-th example's randomness for one purpose (a tag per use site).
uint64_t HashSeed(uint64_t seed, uint64_t index, uint64_t purpose = 0);

// 64-bit FNV-1a of the bytes of s.
uint64_t Fnv1a64(std::string_view s);

}  // namespace t5xx
