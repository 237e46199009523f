#include "t5xx/data/byte_vocabulary.h"

#include <limits>

#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 if none
// starts there (Unicode Table 3-7, "Well-Formed UTF-8 Byte Sequences").
size_t ValidSequenceLength(const std::string& s, size_t i) {
  const auto at = [&](size_t k) -> int {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : -1;
  };
  const auto cont = [](int b, int lo = 0x80, int hi = 0xBF) {
    return b >= lo && b <= hi;
  };
  const int b0 = at(0);
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(at(1)) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    int lo = 0x80, hi = 0xBF;
    if (b0 == 0xE0) lo = 0xA0;  // no overlongs
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
    return cont(at(1), lo, hi) && cont(at(2)) ? 3 : 0;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    int lo = 0x80, hi = 0xBF;
    if (b0 == 0xF0) lo = 0x90;  // no overlongs
    if (b0 == 0xF4) hi = 0x8F;  // <= U+10FFFF
    return cont(at(1), lo, hi) && cont(at(2)) && cont(at(3)) ? 4 : 0;
  }
  return 0;  // 0x80..0xC1, 0xF5..0xFF never start a sequence
}

}  // namespace

std::string DropInvalidUtf8(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    const size_t n = ValidSequenceLength(bytes, i);
    if (n == 0) {
      // Skipping one byte at a time equals Python's skipping of the maximal
      // subpart: its trailing bytes are continuation bytes, which never start
      // a valid sequence either.
      ++i;
      continue;
    }
    out.append(bytes, i, n);
    i += n;
  }
  return out;
}

ByteVocabulary::ByteVocabulary(int32_t extra_ids) : extra_ids_(extra_ids) {
  T5XX_CHECK(extra_ids >= 0, "ByteVocabulary: extra_ids must be >= 0, got " +
                            std::to_string(extra_ids));
  T5XX_CHECK(extra_ids <= std::numeric_limits<int32_t>::max() - kBaseVocabSize,
        "ByteVocabulary: extra_ids " + std::to_string(extra_ids) +
            " is too large (vocab_size must fit in int32)");
}

std::vector<int32_t> ByteVocabulary::Encode(const std::string& text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (unsigned char c : text) {
    ids.push_back(static_cast<int32_t>(c) + kNumSpecialTokens);
  }
  return ids;
}

std::string ByteVocabulary::Decode(const std::vector<int32_t>& ids) const {
  std::string bytes;
  bytes.reserve(ids.size());
  for (int32_t id : ids) {
    if (id == eos_id()) break;  // everything after the first EOS is dropped
    if (id >= kNumSpecialTokens && id < kBaseVocabSize) {
      bytes.push_back(static_cast<char>(id - kNumSpecialTokens));
    }
  }
  return DropInvalidUtf8(bytes);
}

}  // namespace t5xx::seqio
