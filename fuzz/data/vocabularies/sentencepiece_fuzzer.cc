// Fuzz target: loading a SentencePiece model file
// (data/vocabularies/sentencepiece_vocabulary.h over the SentencePiece module) and, when
// it loads, encoding and decoding with it. Input: the model file's bytes.
// (SentencePiece's own parser is fuzzed in OSS-Fuzz; this covers t5xx's
// checks of what it returns: special ids, the piece count, extra ids.)
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "t5xx/data/vocabularies/sentencepiece_vocabulary.h"
#include "t5xx/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace t5xx;
  fuzz::ClearScratchDir();
  const std::string path = fuzz::WriteScratchFile(
      "spiece.model", fuzz::InputBytes(data, size));
  try {
    seqio::SentencePieceVocabulary vocab(path, 3);
    const std::vector<int32_t> ids = vocab.Encode("Hello world, \xe2\x96\x81 <extra_id_0> 12");
    std::vector<int32_t> all = ids;
    for (int32_t id : {0, 1, 2, 3, vocab.vocab_size() - 1, vocab.vocab_size(), -1}) {
      all.push_back(id);
    }
    vocab.Decode(all);
  } catch (const Error& e) {
    fuzz::ExpectNamedError(e.what(), {path});
  }
  return 0;
}
