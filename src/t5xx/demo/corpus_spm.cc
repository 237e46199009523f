// The demo corpus's SentencePiece step: sentences, sampling, training.
#include "t5xx/demo/corpus_spm.h"

#include <sys/stat.h>

#include <climits>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

#include "t5xx/data/vocabularies/sentencepiece_module.h"
#include "t5xx/demo/corpus_text.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/hash.h"

namespace t5xx::seqio {

// Sentences for SentencePiece: the non-empty lines of the train documents,
// lines over kMaxSentenceBytes cut at spaces (SentencePiece skips longer
// sentences instead of using them).
constexpr size_t kMaxSentenceBytes = 4000;

void AppendSentences(const std::string& text, std::vector<std::string>* out) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    while (line.size() > kMaxSentenceBytes) {
      size_t cut = line.rfind(' ', kMaxSentenceBytes);
      if (cut == std::string::npos || cut == 0) {
        cut = kMaxSentenceBytes;
        while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80)
          --cut;  // do not split a UTF-8 sequence
      }
      out->push_back(line.substr(0, cut));
      line = Trim(line.substr(cut));
    }
    if (!Trim(line).empty()) out->push_back(std::move(line));
    start = end + 1;
  }
}


// Keeps at most `cap` sentences: those with the smallest hash(seed, index),
// in their original order. Deterministic and platform-independent.
void SampleSentences(std::vector<std::string>* sentences, size_t cap,
                     uint64_t seed) {
  if (cap == 0 || sentences->size() <= cap) return;
  std::vector<std::pair<uint64_t, size_t>> keys(sentences->size());
  const uint64_t s = SplitMix64(seed ^ 0x5350u);
  for (size_t i = 0; i < sentences->size(); ++i) {
    keys[i] = {SplitMix64(s + i), i};
  }
  std::nth_element(keys.begin(), keys.begin() + cap, keys.end());
  keys.resize(cap);
  std::vector<size_t> idx;
  idx.reserve(cap);
  for (const auto& k : keys) idx.push_back(k.second);
  std::sort(idx.begin(), idx.end());
  std::vector<std::string> kept;
  kept.reserve(cap);
  for (size_t i : idx) kept.push_back(std::move((*sentences)[i]));
  sentences->swap(kept);
}

// Trains the unigram model in memory and writes <model_path> and the
// matching .vocab ("piece<TAB>score" lines) atomically. Training returns the
// serialized model (no model_prefix), so the model bytes do not depend on
// the output directory or process id.
// Returns the number of pieces.
int32_t TrainSentencePiece(const CorpusOptions& o,
                           const std::vector<std::string>& sentences,
                           const std::string& model_path) {
  const std::vector<std::pair<std::string, std::string>> args = {
      {"model_type", "unigram"},
      {"vocab_size", std::to_string(o.vocab_size)},
      {"hard_vocab_limit", "false"},
      {"pad_id", "0"},
      {"eos_id", "1"},
      {"unk_id", "2"},
      {"bos_id", "-1"},
      {"pad_piece", "<pad>"},
      {"eos_piece", "</s>"},
      {"unk_piece", "<unk>"},
      {"byte_fallback", "true"},
      {"character_coverage", "0.9999"},
      {"input_sentence_size", "0"},  // already sampled by SampleSentences
      {"shuffle_input_sentence", "false"},
      {"max_sentence_length", std::to_string(kMaxSentenceBytes + 96)},
      {"num_threads", std::to_string(std::max(1, o.spm_num_threads))},
  };
  std::string serialized;
  try {
    serialized = spm::Train(
        args, sentences,
        static_cast<unsigned int>((o.seed ^ (o.seed >> 32)) & 0xFFFFFFFFu),
        /*quiet=*/true);
  } catch (const Error& e) {
    const std::string msg = e.what();
    throw Error("SentencePiece training for '" + model_path + "' failed: " +
                msg +
                (msg.find("ocabulary size") != std::string::npos
                     ? " (vocab_size must cover 3 special + 256 byte pieces + "
                       "the distinct characters of the corpus, and not "
                       "exceed what the corpus can fill)"
                     : ""));
  }
  std::unique_ptr<spm::Model> sp = spm::Model::FromSerialized(serialized, model_path);
  std::ostringstream vocab;
  for (int i = 0; i < sp->piece_size(); ++i) {
    vocab << sp->IdToPiece(i) << '\t' << sp->Score(i) << '\n';
  }
  WriteStringToFileAtomic(
      model_path.substr(0, model_path.size() - 6) + ".vocab", vocab.str());
  WriteStringToFileAtomic(model_path, serialized);
  return sp->piece_size();
}

}  // namespace t5xx::seqio
