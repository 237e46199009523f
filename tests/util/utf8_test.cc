// Tests for util/utf8.h. Every expected value is worked out by hand from the
// Unicode Standard's Table 3-7 (well-formed byte sequences) and its "U+FFFD
// substitution of maximal subparts" (section 3.9), which is what Python's
// bytes.decode('utf-8', errors='replace') does; the comment beside each case
// says how.
#include "t5xx/util/utf8.h"

#include <gtest/gtest.h>

#include <string>

#include "t5xx/util/error.h"

namespace t5xx {
namespace {

const std::string kFFFD = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

TEST(Utf8Test, DecodesWellFormedCharacters) {
  // "a" = U+0061, one byte.
  EXPECT_EQ(DecodeUtf8Char("a", 0).length, 1u);
  EXPECT_EQ(DecodeUtf8Char("a", 0).code_point, U'a');
  // é = C3 A9: 110 00011, 10 101001 -> 00011 101001 = 0xE9.
  EXPECT_EQ(DecodeUtf8Char("\xC3\xA9", 0).length, 2u);
  EXPECT_EQ(DecodeUtf8Char("\xC3\xA9", 0).code_point, 0xE9u);
  // ‘ = E2 80 98: 0010 000000 011000 = 0x2018.
  EXPECT_EQ(DecodeUtf8Char("x\xE2\x80\x98", 1).length, 3u);
  EXPECT_EQ(DecodeUtf8Char("x\xE2\x80\x98", 1).code_point, 0x2018u);
  // 🤗 = F0 9F A4 97: 000 011111 100100 010111 = 0x1F917.
  EXPECT_EQ(DecodeUtf8Char("\xF0\x9F\xA4\x97", 0).length, 4u);
  EXPECT_EQ(DecodeUtf8Char("\xF0\x9F\xA4\x97", 0).code_point, 0x1F917u);
  // The extremes: U+10FFFF = F4 8F BF BF; U+0000 is a character too.
  EXPECT_EQ(DecodeUtf8Char("\xF4\x8F\xBF\xBF", 0).code_point, 0x10FFFFu);
  EXPECT_EQ(DecodeUtf8Char(std::string(1, '\0'), 0).length, 1u);
  // Past the end: nothing.
  EXPECT_EQ(DecodeUtf8Char("a", 1).length, 0u);
}

TEST(Utf8Test, RejectsIllFormedSequences) {
  EXPECT_EQ(DecodeUtf8Char("\xFF", 0).length, 0u);          // never a lead byte
  EXPECT_EQ(DecodeUtf8Char("\x80", 0).length, 0u);          // lone continuation
  EXPECT_EQ(DecodeUtf8Char("\xC0\xAF", 0).length, 0u);      // overlong '/'
  EXPECT_EQ(DecodeUtf8Char("\xE0\x80\xAF", 0).length, 0u);  // overlong '/', 3 bytes
  EXPECT_EQ(DecodeUtf8Char("\xED\xA0\x80", 0).length, 0u);  // surrogate U+D800
  EXPECT_EQ(DecodeUtf8Char("\xF4\x90\x80\x80", 0).length, 0u);  // U+110000
  EXPECT_EQ(DecodeUtf8Char("\xE4\xBD", 0).length, 0u);      // 你 without its last byte

  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("Hello \xF0\x9F\xA4\x97 \xE4\xBD\xA0\xE5\xA5\xBD"));  // Hello 🤗 你好
  EXPECT_FALSE(IsValidUtf8("bad \xFF\xFE byte line"));
  EXPECT_FALSE(IsValidUtf8("ok\xF0\x9F\xA4"));  // truncated at the end
}

TEST(Utf8Test, ToValidUtf8ReplacesEachMaximalSubpart) {
  // Valid text is returned unchanged.
  EXPECT_EQ(ToValidUtf8("Hello \xF0\x9F\xA4\x97 \xE4\xBD\xA0"), "Hello \xF0\x9F\xA4\x97 \xE4\xBD\xA0");
  // FF and FE can start nothing: one U+FFFD each.
  EXPECT_EQ(ToValidUtf8("bad \xFF\xFE byte line"), "bad " + kFFFD + kFFFD + " byte line");
  // E4 BD is a proper prefix of 你 (E4 BD A0), cut by 'a': one maximal
  // subpart, one U+FFFD; then 'a'.
  EXPECT_EQ(ToValidUtf8("\xE4\xBD" "a"), kFFFD + "a");
  // The same prefix at the end of the string: one U+FFFD.
  EXPECT_EQ(ToValidUtf8("\xE4\xBD"), kFFFD);
  // F0 9F A4 is a prefix of 🤗 (F0 9F A4 97): one U+FFFD.
  EXPECT_EQ(ToValidUtf8("ok\xF0\x9F\xA4"), "ok" + kFFFD);
  // Overlong C0 AF: C0 starts nothing, AF is a lone continuation: two.
  EXPECT_EQ(ToValidUtf8("\xC0\xAF"), kFFFD + kFFFD);
  // Overlong E0 80 AF: after E0 the next byte must be A0..BF, so E0 alone is
  // the maximal subpart; 80 and AF are lone continuations: three.
  EXPECT_EQ(ToValidUtf8("\xE0\x80\xAF"), kFFFD + kFFFD + kFFFD);
  // Surrogate ED A0 80: after ED the next byte must be 80..9F: three.
  EXPECT_EQ(ToValidUtf8("\xED\xA0\x80"), kFFFD + kFFFD + kFFFD);
  // F4 90 80 80 (above U+10FFFF): after F4 the next byte must be 80..8F: four.
  EXPECT_EQ(ToValidUtf8("\xF4\x90\x80\x80"), kFFFD + kFFFD + kFFFD + kFFFD);
  // A broken prefix right before a good character: E4 BD, then 你 whole.
  EXPECT_EQ(ToValidUtf8("\xE4\xBD\xE4\xBD\xA0"), kFFFD + "\xE4\xBD\xA0");
  // The result is always valid.
  EXPECT_TRUE(IsValidUtf8(ToValidUtf8("\x80\xC2\xE1\x80\xF1\x80\x80\xFF")));
}

TEST(Utf8Test, DropInvalidUtf8DropsWhatToValidUtf8Replaces) {
  // errors='ignore': the same subparts vanish.
  EXPECT_EQ(DropInvalidUtf8("bad \xFF\xFE byte line"), "bad  byte line");
  EXPECT_EQ(DropInvalidUtf8("\xE4\xBD" "a"), "a");
  EXPECT_EQ(DropInvalidUtf8("\xC0\xAF" "a\xED\xA0\x80" "b"), "ab");
  EXPECT_EQ(DropInvalidUtf8("\xE4\xBD\xA0\xE5\xA5\xBD"), "\xE4\xBD\xA0\xE5\xA5\xBD");  // 你好
}

TEST(Utf8Test, TruncateNeverCutsACharacter) {
  // "a你" = 61 E4 BD A0 (4 bytes). At most 3 bytes: 你 does not fit whole.
  EXPECT_EQ(TruncateUtf8("a\xE4\xBD\xA0", 3), "a");
  EXPECT_EQ(TruncateUtf8("a\xE4\xBD\xA0", 4), "a\xE4\xBD\xA0");
  EXPECT_EQ(TruncateUtf8("abc", 2), "ab");
  // Invalid bytes hold no character: cut between any two of them.
  EXPECT_EQ(TruncateUtf8("\xFF\xFE\xFD", 2), "\xFF\xFE");
}

TEST(Utf8Test, EscapeInvalidUtf8ShowsBytesAsHex) {
  // a, then FF (invalid), then ‘ (E2 80 98, valid) kept whole.
  EXPECT_EQ(EscapeInvalidUtf8("a\xFF\xE2\x80\x98"), "a\\xff\xE2\x80\x98");
  // The truncated prefix E4 BD: two invalid bytes.
  EXPECT_EQ(EscapeInvalidUtf8("\xE4\xBD"), "\\xe4\\xbd");
}

TEST(Utf8Test, AppendUtf8EncodesScalarValuesOnly) {
  std::string out;
  AppendUtf8(out, 0x2018);  // -> E2 80 98 (the inverse of the decode above)
  AppendUtf8(out, 0xFF);    // -> C3 BF
  AppendUtf8(out, 0x1F917);  // -> F0 9F A4 97
  EXPECT_EQ(out, "\xE2\x80\x98\xC3\xBF\xF0\x9F\xA4\x97");
  EXPECT_THROW(AppendUtf8(out, 0xD800), Error);
  EXPECT_THROW(AppendUtf8(out, 0x110000), Error);
  EXPECT_EQ(CodePointName(0x2018), "U+2018");
  EXPECT_EQ(CodePointName(0x1F917), "U+1F917");
  EXPECT_EQ(CodePointName(0xE9), "U+00E9");
}

}  // namespace
}  // namespace t5xx
