// Tests for util/names.h and the "did you mean" helpers of
// util/edit_distance.h.
#include "t5xx/util/names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "t5xx/util/edit_distance.h"

namespace t5xx {
namespace {

TEST(NamesTest, JoinName) {
  EXPECT_EQ(JoinName("", "b"), "b");
  EXPECT_EQ(JoinName("a", "b"), "a/b");
  EXPECT_EQ(JoinName("train/eval", "trainer.Trainer"), "train/eval/trainer.Trainer");
  EXPECT_EQ(JoinName("decoder", "layers_0", '.'), "decoder.layers_0");
  EXPECT_EQ(JoinName("a", "", '.'), "a.");
}

TEST(NamesTest, SplitName) {
  EXPECT_EQ(SplitName("decoder.layers_0.mlp"),
            (std::vector<std::string>{"decoder", "layers_0", "mlp"}));
  EXPECT_EQ(SplitName("a..b"), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(SplitName(""), std::vector<std::string>{""});
  EXPECT_EQ(SplitName("train/trainer.Trainer", '/'),
            (std::vector<std::string>{"train", "trainer.Trainer"}));
}

TEST(NamesTest, Lists) {
  EXPECT_EQ(QuotedList({}), "");
  EXPECT_EQ(QuotedList({"train"}), "'train'");
  EXPECT_EQ(QuotedList({"train", "validation"}), "'train', 'validation'");
  EXPECT_EQ(BracketedList({}), "[]");
  EXPECT_EQ(BracketedList({"a", "b"}), "[a, b]");
  EXPECT_EQ(BracketedList({"a", "b", "c", "d"}, 2), "[a, b, ... (2 more)]");
  EXPECT_EQ(BracketedList({"a", "b"}, 2), "[a, b]");
}

TEST(EditDistanceTest, Distances) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("abc", "abc"), 0u);
}

TEST(EditDistanceTest, ClosestName) {
  EXPECT_EQ(ClosestName("z_los", {"z_loss", "label_smoothing"}), "z_loss");
  EXPECT_EQ(ClosestName("completely_else", {"z_loss"}), "");
  // Ties: the first candidate wins.
  EXPECT_EQ(ClosestName("ab", {"ax", "ay"}), "ax");
  // The limit is max(2, size / 3): "abcdefghi" allows 3 edits.
  EXPECT_EQ(ClosestName("abcdefghi", {"abcdefxyz"}), "abcdefxyz");
  EXPECT_EQ(ClosestName("abcdefghi", {"abcdewxyz"}), "");
}

TEST(EditDistanceTest, ClosestNames) {
  const std::vector<std::string> names = {"c4_v1", "c4_v2", "c4_v3", "c4_v4", "wiki"};
  // Up to 3, nearest first, ties in the given order.
  EXPECT_EQ(ClosestNames("c4_v9", names), (std::vector<std::string>{"c4_v1", "c4_v2", "c4_v3"}));
  EXPECT_EQ(ClosestNames("wik", names), (std::vector<std::string>{"wiki"}));
  EXPECT_TRUE(ClosestNames("something_else_entirely", names).empty());
  EXPECT_EQ(ClosestNames("c4_v9", names, 1), (std::vector<std::string>{"c4_v1"}));
}

}  // namespace
}  // namespace t5xx
