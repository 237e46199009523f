// seqio's PassThroughVocabulary: token ids as they are (see
// passthrough_vocabulary.h).
#include "t5xx/data/vocabularies/passthrough_vocabulary.h"

#include "t5xx/util/error.h"

namespace t5xx::seqio {

PassThroughVocabulary::PassThroughVocabulary(int32_t size, int32_t eos_id)
    : size_(size), eos_id_(eos_id) {
  T5XX_CHECK(size >= 1, "PassThroughVocabulary: size must be >= 1, got " +
                       std::to_string(size));
  T5XX_CHECK(eos_id >= -1 && eos_id < size,
        "PassThroughVocabulary: eos_id must be in [0, size=" +
            std::to_string(size) + ") or -1 for none, got " +
            std::to_string(eos_id));
}

std::vector<int32_t> PassThroughVocabulary::Encode(const std::string&) const {
  throw Error(
      "PassThroughVocabulary cannot encode text: it takes token ids as they "
      "are (seqio's encode is the identity on ids); give the task features "
      "that are already token ids, or use a SentencePiece/Byte vocabulary");
}

std::vector<int32_t> PassThroughVocabulary::DecodeIds(
    const std::vector<int32_t>& ids) const {
  std::vector<int32_t> out;
  out.reserve(ids.size());
  for (int32_t id : ids) {
    out.push_back(id);
    if (eos_id_ >= 0 && id == eos_id_) break;
  }
  return out;
}

std::vector<int32_t> PassThroughVocabulary::DecodeIdsPadded(
    const std::vector<int32_t>& ids) const {
  std::vector<int32_t> out = DecodeIds(ids);
  out.resize(ids.size(), pad_id());
  return out;
}

std::string PassThroughVocabulary::Decode(
    const std::vector<int32_t>& ids) const {
  std::string text;
  for (int32_t id : DecodeIds(ids)) {
    if (!text.empty()) text.push_back(' ');
    text += std::to_string(id);
  }
  return text;
}

}  // namespace t5xx::seqio
