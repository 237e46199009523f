// EditDistance and its bounded form; values by hand (the classic Levenshtein
// examples: kitten -> sitting is 3: k->s, e->i, +g).
#include "t5xx/util/edit_distance.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace t5xx {
namespace {

TEST(EditDistanceTest, HandComputedValues) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("flaw", "lawn"), 2u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("same", "same"), 0u);
}

TEST(EditDistanceTest, WithinCapsAtLimitPlusOne) {
  EXPECT_EQ(EditDistanceWithin("kitten", "sitting", 5), 3u);
  EXPECT_EQ(EditDistanceWithin("kitten", "sitting", 3), 3u);
  EXPECT_EQ(EditDistanceWithin("kitten", "sitting", 2), 3u);  // limit + 1
  EXPECT_EQ(EditDistanceWithin("kitten", "sitting", 0), 1u);
  // Lengths alone differ by 5: over any limit below 5, without a table.
  EXPECT_EQ(EditDistanceWithin("a", "abcdef", 2), 3u);
  EXPECT_EQ(EditDistanceWithin("a", "abcdef", 9), 5u);
}

TEST(EditDistanceTest, WithinAgreesWithTheFullTableOnRandomPairs) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> len(0, 12), ch('a', 'd');
  for (int trial = 0; trial < 2000; ++trial) {
    std::string a(len(rng), 'a'), b(len(rng), 'a');
    for (char& c : a) c = static_cast<char>(ch(rng));
    for (char& c : b) c = static_cast<char>(ch(rng));
    const size_t full = EditDistance(a, b);
    for (size_t limit : {0u, 1u, 2u, 4u, 8u, 16u}) {
      ASSERT_EQ(EditDistanceWithin(a, b, limit), std::min(full, limit + 1))
          << a << " vs " << b << " limit " << limit;
    }
  }
}

TEST(EditDistanceTest, ClosestNamesKeepsNearestFirstWithinTheLimit) {
  const std::vector<std::string> names = {"batch_size", "batch_sizes", "learning_rate", "bach_size"};
  EXPECT_EQ(ClosestNames("batch_siz", names),
            (std::vector<std::string>{"batch_size", "batch_sizes", "bach_size"}));
  EXPECT_TRUE(ClosestNames("zzzzzzzzzzzz", names).empty());
  EXPECT_EQ(ClosestName("learning_rat", names), "learning_rate");
}

// Issue 17 (fuzzing the gin engine): the word itself is never suggested, and
// the distance limit stops at kMaxSuggestionDistance (16) however long the
// word: a 60-character name 17 edits from a candidate (60 / 3 = 20 would
// have allowed it) gets no suggestion, one 16 edits away does.
TEST(EditDistanceTest, ClosestNamesSkipsTheWordAndCapsTheLimit) {
  EXPECT_EQ(ClosestNames("batch_size", {"batch_size", "batch_sizes"}),
            std::vector<std::string>{"batch_sizes"});
  EXPECT_EQ(ClosestName("M1", {"M1"}), "");
  const std::string word(60, 'a');
  const std::string near16 = std::string(16, 'b') + std::string(44, 'a');
  const std::string near17 = std::string(17, 'b') + std::string(43, 'a');
  EXPECT_EQ(EditDistance(word, near16), 16u);
  EXPECT_EQ(EditDistance(word, near17), 17u);
  EXPECT_EQ(ClosestName(word, {near17}), "");
  EXPECT_EQ(ClosestName(word, {near17, near16}), near16);
}

}  // namespace
}  // namespace t5xx
