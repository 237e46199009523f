// The demo corpus's SentencePiece step: sentences from the train documents,
// a seeded sample of them, and the unigram model trained on it (T5's
// conventions: pad 0, eos 1, unk 2, byte fallback).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/demo/corpus_builder.h"

namespace t5xx::seqio {

// Appends the non-empty lines of `text` to *out, lines over 4000 bytes cut
// at spaces (SentencePiece skips longer sentences instead of using them).
void AppendSentences(const std::string& text, std::vector<std::string>* out);

// Keeps `cap` of *sentences chosen by a hash of (seed, index), in their
// original order; all of them when cap is 0 or not exceeded.
void SampleSentences(std::vector<std::string>* sentences, size_t cap,
                     uint64_t seed);

// Trains the unigram model in memory and writes <model_path> and the
// matching .vocab ("piece<TAB>score" lines) atomically. Returns the number of
// pieces. Throws t5xx::Error when training or writing fails.
int32_t TrainSentencePiece(const CorpusOptions& o,
                           const std::vector<std::string>& sentences,
                           const std::string& model_path);

}  // namespace t5xx::seqio
