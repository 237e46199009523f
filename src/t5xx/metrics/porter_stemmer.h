// NLTK's Porter stemmer (nltk/stem/porter.py PorterStemmer, checked against
// NLTK 3.10), which rouge-score's tokenizer applies with use_stemmer=True
// (rouge_score/tokenizers.py builds porter.PorterStemmer() in its default
// NLTK_EXTENSIONS mode). Porter, "An algorithm for suffix stripping",
// Program 14.3 (1980), steps 1a..5b, with NLTK's mode switches.
// Framework-free: no libtorch.
#pragma once

#include <string>
#include <string_view>

namespace t5xx::seqio {

class PorterStemmer {
 public:
  enum class Mode {
    // NLTK's default: Martin Porter's extensions plus NLTK's (irregular
    // forms such as "dying" -> "die", "ies"/"ied" on 4-letter words,
    // "fulli", "logi", the 2-letter *o rule, y -> i only after a consonant
    // that is not the whole stem).
    kNltkExtensions,
    // Only the changes in Martin Porter's own implementations ("bli" ->
    // "ble", "logi" -> "log", words of 1-2 letters untouched).
    kMartinExtensions,
    // The 1980 paper as published.
    kOriginalAlgorithm,
  };

  explicit PorterStemmer(Mode mode = Mode::kNltkExtensions) : mode_(mode) {}

  // PorterStemmer.stem(word, to_lowercase=True): the stem of the UTF-8
  // `word` after Python's str.lower(). Letters other than a, e, i, o, u, y
  // (digits and non-ASCII included) count as consonants.
  std::string stem(std::string_view word) const;

  // stem() in kNltkExtensions mode, as rouge-score uses it.
  static std::string Stem(std::string_view word);

 private:
  Mode mode_;
};

}  // namespace t5xx::seqio
