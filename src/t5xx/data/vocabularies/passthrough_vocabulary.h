// Identity vocabulary over token ids — seqio's PassThroughVocabulary
// (seqio/vocabularies.py), for tasks whose features are already token ids.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/data/vocabularies/vocabulary.h"

namespace t5xx::seqio {

// Token ids are int32 in [0, size); pad is 0; eos is `eos_id` (or none when
// eos_id is -1); there is no unk (unk_id() returns -1) and no extra ids, so
// vocab_size() == base_vocab_size() == size, extra_ids() == 0.
//
// seqio's encode is the identity on ids, so there is no text to encode:
// Encode(text) throws t5xx::Error. Feed ids directly instead.
//
// Decoding follows seqio's Vocabulary.decode/decode_tf without unk mapping
// (ids are never checked against size, as in seqio):
//   DecodeIds(ids):       ids up to and including the first EOS (all ids when
//                         eos_id is -1 or no EOS occurs);
//   DecodeIdsPadded(ids): same length as ids, pad_id (0) written over every
//                         position after the first EOS;
//   Decode(ids):          DecodeIds(ids) as decimal text joined by one space
//                         ("2 3 4 1"), for logs and text metrics.
// Example (seqio/vocabularies_test.py, size 128, eos 1):
//   [2,3,4,1,5,6,7,8,9] -> DecodeIds [2,3,4,1],
//                          DecodeIdsPadded [2,3,4,1,0,0,0,0,0].
//
// Thread-safe: stateless after construction.
class PassThroughVocabulary : public Vocabulary {
 public:
  // Throws t5xx::Error when size < 1, or when eos_id >= size or eos_id < -1.
  explicit PassThroughVocabulary(int32_t size, int32_t eos_id = -1);

  int32_t pad_id() const override { return 0; }
  // -1 when the vocabulary has no EOS.
  int32_t eos_id() const override { return eos_id_; }
  // Always -1: PassThroughVocabulary has no unk (seqio: unk_id is None).
  int32_t unk_id() const override { return -1; }
  int32_t vocab_size() const override { return size_; }
  int32_t base_vocab_size() const override { return size_; }
  int32_t extra_ids() const override { return 0; }

  // Always throws t5xx::Error: PassThroughVocabulary takes token ids, not
  // text.
  std::vector<int32_t> Encode(const std::string& text) const override;
  // DecodeIds(ids) joined by single spaces.
  std::string Decode(const std::vector<int32_t>& ids) const override;

  // seqio decode: ids cut after the first EOS (kept), when eos_id >= 0.
  std::vector<int32_t> DecodeIds(const std::vector<int32_t>& ids) const;
  // seqio decode_tf: ids with pad_id (0) after the first EOS; same length.
  std::vector<int32_t> DecodeIdsPadded(const std::vector<int32_t>& ids) const;

 private:
  int32_t size_ = 0;
  int32_t eos_id_ = -1;
};

}  // namespace t5xx::seqio
