// seqio's Vocabulary contract (seqio/vocabularies.py).
//
// pad_id is 0, eos_id 1, unk_id 2 for the T5 convention. vocab_size() includes
// extra ids (sentinels). Encode never appends EOS. Decode maps ids >=
// base_vocab_size() to unk, cuts after the first EOS, then detokenizes.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace t5xx::seqio {

class Vocabulary {
 public:
  virtual ~Vocabulary() = default;
  virtual int32_t pad_id() const { return 0; }
  virtual int32_t eos_id() const = 0;
  virtual int32_t unk_id() const = 0;
  // Base vocabulary size plus extra ids.
  virtual int32_t vocab_size() const = 0;
  virtual int32_t base_vocab_size() const = 0;
  virtual int32_t extra_ids() const = 0;
  virtual std::vector<int32_t> Encode(const std::string& text) const = 0;
  virtual std::string Decode(const std::vector<int32_t>& ids) const = 0;
};

using VocabularyPtr = std::shared_ptr<const Vocabulary>;

}  // namespace t5xx::seqio
