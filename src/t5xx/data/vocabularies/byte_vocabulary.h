// Byte-level vocabulary — seqio's ByteVocabulary (seqio/vocabularies.py).
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/data/vocabularies/vocabulary.h"

namespace t5xx::seqio {

// Token ids are int32. Layout (as seqio's ByteVocabulary, ByT5):
//   0 = pad, 1 = eos, 2 = unk;
//   [3, 259)                      the 256 byte values: byte b is id b + 3;
//   [259, 259 + extra_ids)        extra ids (sentinels), no text of their own.
// base_vocab_size() = 259, vocab_size() = 259 + extra_ids.
//
// Encode(text): each byte of the (UTF-8) string, in order, maps to byte + 3.
// Never appends EOS; never produces specials or extra ids. "hi" -> [107, 108].
//
// Decode(ids): seqio's decode semantics — ids after the first EOS are
// dropped; then only ids in [3, 259) are kept (pad, eos, unk, extra ids and
// out-of-range/negative ids disappear), 3 is subtracted, and the bytes are
// decoded as UTF-8 with Python's errors='ignore' (t5xx::DropInvalidUtf8,
// util/utf8.h): every well-formed UTF-8 sequence is kept byte-exact, every
// invalid or truncated byte is dropped — seqio's ByteVocabulary does the same
// (bytes.decode("utf-8", errors="ignore")), unlike the U+FFFD that t5xx's
// JSON and TensorBoard output put in place of such bytes. Multi-byte
// characters round-trip exactly (fixes seqio PR #415's bug class):
// Decode(Encode("Hello 🤗 你好")) == "Hello 🤗 你好".
//
// Thread-safe: stateless after construction.
class ByteVocabulary : public Vocabulary {
 public:
  static constexpr int32_t kNumSpecialTokens = 3;  // pad, eos, unk
  static constexpr int32_t kByteSize = 256;
  static constexpr int32_t kBaseVocabSize = kNumSpecialTokens + kByteSize;

  // Throws t5xx::Error when extra_ids < 0 or vocab_size would overflow int32.
  explicit ByteVocabulary(int32_t extra_ids = 0);

  int32_t pad_id() const override { return 0; }
  int32_t eos_id() const override { return 1; }
  int32_t unk_id() const override { return 2; }
  int32_t vocab_size() const override { return kBaseVocabSize + extra_ids_; }
  int32_t base_vocab_size() const override { return kBaseVocabSize; }
  int32_t extra_ids() const override { return extra_ids_; }

  std::vector<int32_t> Encode(const std::string& text) const override;
  std::string Decode(const std::vector<int32_t>& ids) const override;

 private:
  int32_t extra_ids_ = 0;
};

}  // namespace t5xx::seqio
