// Tests for util/hash.h: splitmix64 against the reference generator's
// published outputs, FNV-1a against its published test vectors, and
// HashSeed pinned (every seeded shuffle and dropout mask depends on it).
#include "t5xx/util/hash.h"

#include <gtest/gtest.h>

namespace t5xx {
namespace {

TEST(HashTest, SplitMix64MatchesTheReferenceStream) {
  // splitmix64.c (Vigna) seeded with 0: its first three outputs.
  uint64_t state = 0;
  EXPECT_EQ(SplitMix64Next(&state), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(SplitMix64Next(&state), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(SplitMix64Next(&state), 0x06C45D188009454FULL);
  EXPECT_EQ(state, 3 * kSplitMix64Gamma);
  // The pure step is the stateful one without the state.
  EXPECT_EQ(SplitMix64(0), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(SplitMix64(kSplitMix64Gamma), 0x6E789E6AA1B965F4ULL);
}

TEST(HashTest, HashSeedIsPinned) {
  EXPECT_EQ(HashSeed(0, 0, 0), 0xEC0FDAB872BC6EE0ULL);
  EXPECT_EQ(HashSeed(42, 7, 3), 0xAE78F2BC6357463EULL);
  EXPECT_EQ(HashSeed(42, 7), HashSeed(42, 7, 0));
  EXPECT_NE(HashSeed(42, 7, 1), HashSeed(42, 8, 1));
  EXPECT_NE(HashSeed(42, 7, 1), HashSeed(43, 7, 1));
}

TEST(HashTest, Fnv1a64MatchesPublishedVectors) {
  EXPECT_EQ(Fnv1a64(""), 0xCBF29CE484222325ULL);
  EXPECT_EQ(Fnv1a64("a"), 0xAF63DC4C8601EC8CULL);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171F73967E8ULL);
}

}  // namespace
}  // namespace t5xx
