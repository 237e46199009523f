// Python's str semantics and the regex module's categories
// (unicode_properties.h) on hand-picked characters; metrics_live_test.py
// compares every code point with Python.
#include "t5xx/metrics/unicode_properties.h"

#include <gtest/gtest.h>

namespace t5xx::seqio::unicode {
namespace {

std::string Lower8(const std::string& s) { return Encode(Lower(Decode(s))); }

TEST(UnicodeProperties, DecodeReplacesIllFormedBytes) {
  EXPECT_EQ(Decode("a\xC3\xA9"), (std::u32string{U'a', 0xE9}));
  // One U+FFFD per maximal ill-formed subpart, as Python's errors='replace'.
  EXPECT_EQ(Decode("a\xFF\xE4\xBD"), (std::u32string{U'a', 0xFFFD, 0xFFFD}));
  EXPECT_EQ(Encode(U"\u00e9\U0001F600"), "\xC3\xA9\xF0\x9F\x98\x80");
}

TEST(UnicodeProperties, Classes) {
  EXPECT_TRUE(IsSpace(U' ') && IsSpace(0x1F) && IsSpace(0x85) && IsSpace(0xA0) &&
              IsSpace(0x3000) && IsSpace(0x2028));
  EXPECT_FALSE(IsSpace(0x200B));  // ZERO WIDTH SPACE is not whitespace in Python
  EXPECT_TRUE(IsWord(U'_') && IsWord(0xE9) && IsWord(0xB2) && IsWord(0x4E2D));
  EXPECT_FALSE(IsWord(U'-') || IsWord(0x301) || IsWord(0x1F642));  // combining mark, emoji
  EXPECT_TRUE(IsPunctuation(U'!') && IsPunctuation(0x201C) && IsPunctuation(0x3002) &&
              IsPunctuation(U'_'));
  EXPECT_FALSE(IsPunctuation(U'$') || IsPunctuation(U'+'));
  EXPECT_TRUE(IsSymbol(U'$') && IsSymbol(U'+') && IsSymbol(U'^') && IsSymbol(0x20AC) &&
              IsSymbol(0x1F600));
  EXPECT_TRUE(IsNumber(U'7') && IsNumber(0xBD) && IsNumber(0x2163) && IsNumber(0x0663));
  EXPECT_FALSE(IsNumber(U'a'));
}

TEST(UnicodeProperties, LowerIsPythons) {
  EXPECT_EQ(Lower8("MiXeD \xC3\x80\xC3\x89"), "mixed \xC3\xA0\xC3\xA9");
  // U+0130 -> "i" + U+0307; Kelvin sign -> ASCII k; Ohm sign -> omega.
  EXPECT_EQ(Lower8("\xC4\xB0"), "i\xCC\x87");
  EXPECT_EQ(Lower8("\xE2\x84\xAA"), "k");
  EXPECT_EQ(Lower8("\xE2\x84\xA6"), "\xCF\x89");
  // Final sigma: after a cased letter and not before one.
  EXPECT_EQ(Lower8("\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3"), "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82");
  EXPECT_EQ(Lower8("\xCE\xA3"), "\xCF\x83");                  // alone: not final
  EXPECT_EQ(Lower8("\xCE\x91\xCE\xA3\xCE\x91"), "\xCE\xB1\xCF\x83\xCE\xB1");  // medial
  // Case-ignorable characters (the apostrophe) are skipped both ways.
  EXPECT_EQ(Lower8("\xCE\x91'\xCE\xA3"), "\xCE\xB1'\xCF\x82");
  EXPECT_EQ(Lower8("\xCE\x91\xCE\xA3'\xCE\x91"), "\xCE\xB1\xCF\x83'\xCE\xB1");
}

TEST(UnicodeProperties, SplitAndRstrip) {
  const auto parts = Split(U"  a\u00a0b\u3000\tc  ");
  EXPECT_EQ(parts, (std::vector<std::u32string>{U"a", U"b", U"c"}));
  EXPECT_TRUE(Split(U" \u2003 ").empty());
  EXPECT_EQ(Rstrip(U"x y \u2029\n"), U"x y");
}

}  // namespace
}  // namespace t5xx::seqio::unicode
