// seqio's ByteVocabulary: UTF-8 bytes as token ids (see byte_vocabulary.h).
#include "t5xx/data/vocabularies/byte_vocabulary.h"

#include <limits>

#include "t5xx/util/error.h"
#include "t5xx/util/utf8.h"

namespace t5xx::seqio {

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
  // seqio (google/seqio, seqio/vocabularies.py, ByteVocabulary.
  // _convert_ids_to_strings) returns bytes(ids).decode("utf-8",
  // errors="ignore"), and its _decode_tf uses tf.strings.unicode_transcode(...,
  // errors="ignore"): invalid bytes are dropped, not replaced by U+FFFD.
  return DropInvalidUtf8(bytes);
}

}  // namespace t5xx::seqio
