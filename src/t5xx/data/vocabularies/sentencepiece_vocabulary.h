// SentencePiece vocabulary with T5 sentinels — seqio's
// SentencePieceVocabulary (seqio/vocabularies.py) on libsentencepiece.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "t5xx/data/vocabularies/vocabulary.h"

namespace t5xx::seqio::spm {
class Model;
}

namespace t5xx::seqio {

// Token ids are int32. Layout (T5 convention, validated at load):
//   0 = pad, 1 = eos (</s>), 2 = unk, no bos;
//   [0, base_vocab_size)                 SentencePiece pieces of the model;
//   [base_vocab_size, vocab_size)        extra ids (sentinels), in reverse:
//   <extra_id_N> = vocab_size - 1 - N, so <extra_id_0> is the highest id
//   (seqio reverse_extra_ids=True; T5: 32000 + 100 -> <extra_id_0> = 32099).
//
// Encode(text): the literal markers "<extra_id_N>" (0 <= N < extra_ids) map
// to their ids; the text between markers is encoded by SentencePiece
// separately (each stretch gets SentencePiece's usual dummy-prefix space and
// whitespace normalisation). Never appends EOS.
//
// Decode(ids): ids after the first EOS are dropped; negative ids and ids
// >= vocab_size decode as unk (" ⁇ " from SentencePiece); extra ids decode
// as the literal text "<extra_id_N>" (seqio appends them as user-defined
// pieces "▁<extra_id_N>", which decode with a space before them); runs of
// ordinary ids are detokenised by SentencePiece. Pieces and sentinels are
// joined with one space. Control ids (pad, eos) decode to nothing.
//
// Thread-safe: Encode/Decode are const and may run concurrently.
class SentencePieceVocabulary : public Vocabulary {
 public:
  // Loads a SentencePiece model file (a serialized ModelProto).
  // Throws t5xx::Error:
  //  * naming `model_file` when it does not exist or does not parse;
  //  * naming the file, the ids found (pad/eos/unk/bos) and the retraining
  //    flags (--pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1) when the model
  //    does not follow the T5 convention (t5 issues #566, #246);
  //  * when extra_ids < 0.
  explicit SentencePieceVocabulary(const std::string& model_file,
                                   int32_t extra_ids = 0);
  ~SentencePieceVocabulary() override;

  int32_t pad_id() const override { return 0; }
  int32_t eos_id() const override { return 1; }
  int32_t unk_id() const override { return 2; }
  int32_t vocab_size() const override { return base_vocab_size_ + extra_ids_; }
  int32_t base_vocab_size() const override { return base_vocab_size_; }
  int32_t extra_ids() const override { return extra_ids_; }

  std::vector<int32_t> Encode(const std::string& text) const override;
  std::string Decode(const std::vector<int32_t>& ids) const override;

  // Id of <extra_id_n> (vocab_size - 1 - n). Throws t5xx::Error when n is
  // outside [0, extra_ids).
  int32_t ExtraId(int32_t n) const;
  // The SentencePiece piece string of an id in [0, base_vocab_size), or
  // "<extra_id_N>" for an extra id. Throws t5xx::Error when out of range.
  std::string IdToPiece(int32_t id) const;
  const std::string& model_file() const { return model_file_; }

 private:
  std::string model_file_;
  int32_t extra_ids_ = 0;
  int32_t base_vocab_size_ = 0;
  std::unique_ptr<spm::Model> sp_;
};

}  // namespace t5xx::seqio
