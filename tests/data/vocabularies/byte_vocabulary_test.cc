// ByteVocabulary against seqio's ByteVocabulary semantics
// (seqio/vocabularies.py, vocabularies_test.py).
#include "t5xx/data/vocabularies/byte_vocabulary.h"

#include <memory>
#include <string>
#include <vector>

#include "test_util.h"

namespace t5xx::seqio {
namespace {

using Ids = std::vector<int32_t>;

TEST(ByteVocabularyTest, EncodesBytesPlusThree) {
  ByteVocabulary v;
  EXPECT_EQ(v.Encode("hi"), (Ids{107, 108}));
  EXPECT_EQ(v.Encode(""), Ids{});
  EXPECT_EQ(v.Encode(std::string("\x00\xff", 2)), (Ids{3, 258}));
}

TEST(ByteVocabularyTest, SpecialIdsAndSizes) {
  ByteVocabulary v;
  EXPECT_EQ(v.pad_id(), 0);
  EXPECT_EQ(v.eos_id(), 1);
  EXPECT_EQ(v.unk_id(), 2);
  EXPECT_EQ(v.vocab_size(), 259);
  EXPECT_EQ(v.base_vocab_size(), 259);
  EXPECT_EQ(v.extra_ids(), 0);
  ByteVocabulary x(100);
  EXPECT_EQ(x.vocab_size(), 359);
  EXPECT_EQ(x.base_vocab_size(), 259);
  EXPECT_EQ(x.extra_ids(), 100);
  // Usable through the base interface.
  VocabularyPtr p = std::make_shared<ByteVocabulary>(3);
  EXPECT_EQ(p->vocab_size(), 262);
}

TEST(ByteVocabularyTest, RejectsNegativeExtraIds) {
  EXPECT_ERROR_CONTAINS(ByteVocabulary(-1), "extra_ids must be >= 0");
}

TEST(ByteVocabularyTest, DecodeStopsAtFirstEos) {
  ByteVocabulary v;
  EXPECT_EQ(v.Decode({107, 108, 1, 107, 108}), "hi");
  EXPECT_EQ(v.Decode({1, 107}), "");
  EXPECT_EQ(v.Decode({107, 108}), "hi");
}

TEST(ByteVocabularyTest, DecodeDropsSpecialsAndExtraIds) {
  ByteVocabulary v(10);
  // pad, unk, extra ids (259..268), out-of-range and negative ids vanish.
  EXPECT_EQ(v.Decode({0, 107, 2, 259, 268, 108, 1000, -5, 0}), "hi");
}

TEST(ByteVocabularyTest, DecodeDropsInvalidUtf8) {
  ByteVocabulary v;
  const auto ids_of = [](const std::string& bytes) {
    Ids ids;
    for (unsigned char c : bytes) ids.push_back(c + 3);
    return ids;
  };
  // Lone continuation byte, invalid lead bytes.
  EXPECT_EQ(v.Decode(ids_of("a\x80" "b\xff" "c\xc0\xc1")), "abc");
  // Truncated 3-byte sequence (first two bytes of 你) before ASCII.
  EXPECT_EQ(v.Decode(ids_of("x\xe4\xbd" "y")), "xy");
  // Truncated 4-byte sequence at the end.
  EXPECT_EQ(v.Decode(ids_of("ok\xf0\x9f\xa4")), "ok");
  // Overlong "/" and an encoded surrogate (U+D800) are invalid.
  EXPECT_EQ(v.Decode(ids_of("\xc0\xaf" "a\xed\xa0\x80" "b")), "ab");
  // Above U+10FFFF.
  EXPECT_EQ(v.Decode(ids_of("\xf4\x90\x80\x80" "z")), "z");
  // A valid character right after a broken one survives.
  EXPECT_EQ(v.Decode(ids_of("\xe4\xbd\xe4\xbd\xa0")), "\xe4\xbd\xa0");
}

TEST(ByteVocabularyTest, MultiByteRoundTrip) {
  // seqio PR #415's bug class: multi-byte characters must survive.
  ByteVocabulary v;
  const std::string text = "Hello 🤗 你好";
  const Ids ids = v.Encode(text);
  EXPECT_EQ(ids.size(), text.size());  // one id per byte
  EXPECT_EQ(ids.size(), 6u + 4u + 1u + 6u);
  EXPECT_EQ(v.Decode(ids), text);
  Ids with_eos = ids;
  with_eos.push_back(1);
  with_eos.push_back(107);
  EXPECT_EQ(v.Decode(with_eos), text);
  const std::string mixed = "héllo wörld ∑ 𝄞";
  EXPECT_EQ(v.Decode(v.Encode(mixed)), mixed);
}

}  // namespace
}  // namespace t5xx::seqio
