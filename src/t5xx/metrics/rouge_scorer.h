// rouge-score's RougeScorer (rouge_score/rouge_scorer.py, tokenize.py,
// tokenizers.py, scoring.py, version 0.1.2): ROUGE-N, ROUGE-L and the
// summary-level ROUGE-Lsum of one target and one prediction, with its
// default tokenizer. Framework-free: no libtorch.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace t5xx::seqio::rouge_scorer {

// scoring.Score.
struct Score {
  double precision = 0.0;
  double recall = 0.0;
  double fmeasure = 0.0;
};

// scoring.fmeasure: 2 * p * r / (p + r), 0 when p + r == 0.
double FMeasure(double precision, double recall);

// tokenize.tokenize (the DefaultTokenizer): Python str.lower() of the UTF-8
// text (so only ASCII letters, U+0130 and the Kelvin sign U+212A lower to
// something ASCII), every run of characters other than [a-z0-9] replaced by
// one space, split on spaces; with use_stemmer, tokens longer than 3
// characters go through NLTK's Porter stemmer (NLTK_EXTENSIONS mode, as
// rouge-score builds it; porter_stemmer.h); empty tokens are dropped.
std::vector<std::string> Tokenize(std::string_view text, bool use_stemmer);

// rouge_scorer.RougeScorer(rouge_types, use_stemmer, split_summaries=False,
// tokenizer=None).
class RougeScorer {
 public:
  // rouge_types: "rouge1" .. "rouge9" (n-gram overlap), "rougeL" (longest
  // common subsequence of the token sequences), "rougeLsum" (summary-level
  // LCS over sentences = the text's "\n"-separated non-empty lines, union
  // LCS per target sentence, tokens counted at most as often as they occur
  // on both sides, as ROUGE-1.5.5). Throws t5xx::Error for an empty list or
  // another type (rouge-score raises ValueError only when scoring).
  explicit RougeScorer(std::vector<std::string> rouge_types, bool use_stemmer = false);

  // RougeScorer.score(target, prediction): each type's precision (over the
  // prediction), recall (over the target) and F-measure. Empty token lists
  // give all zeros. Output keys: the rouge types.
  std::map<std::string, Score> score(std::string_view target,
                                     std::string_view prediction) const;

  const std::vector<std::string>& rouge_types() const { return rouge_types_; }

 private:
  std::vector<std::string> rouge_types_;
  bool use_stemmer_;
};

}  // namespace t5xx::seqio::rouge_scorer
