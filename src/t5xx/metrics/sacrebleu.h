// sacrebleu's corpus BLEU (sacrebleu.corpus_bleu -> metrics/bleu.py BLEU,
// metrics/base.py Metric.corpus_score, metrics/helpers.py), computed in the
// same order of double operations so that scores equal sacrebleu's bit for
// bit on the same C library. Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/metrics/sacrebleu_tokenizers.h"

namespace t5xx::seqio::sacrebleu {

// corpus_bleu's keyword arguments (sacrebleu's defaults except tokenize,
// whose sacrebleu default is '13a' as here).
struct BleuOptions {
  // 'none', 'floor', 'add-k' or 'exp' (Chen & Cherry 2014's methods 0-3).
  std::string smooth_method = "exp";
  // For 'floor' (default 0.1) and 'add-k' (default 1); unused otherwise.
  std::optional<double> smooth_value;
  // Python str.lower() on every line before tokenizing.
  bool lowercase = false;
  Tokenizer tokenize = Tokenizer::k13a;
  // Average only the n-gram orders up to the last with any hypothesis n-gram.
  bool use_effective_order = false;
  int max_ngram_order = 4;
};

// sacrebleu's BLEUScore: score in [0, 100]; counts/totals per n-gram order
// (matched, hypothesis n-grams; summed over the corpus; 'add-k' adds k to
// orders >= 2); precisions in percent; bp the brevity penalty; sys_len and
// ref_len the summed hypothesis and closest-reference lengths in tokens.
struct BleuScore {
  double score = 0.0;
  std::vector<double> counts, totals, precisions;
  double bp = 1.0;
  int64_t sys_len = 0, ref_len = 0;
};

// sacrebleu.corpus_bleu(hypotheses, references, ...): `references` are
// reference *streams*: references[k][i] is the k-th reference of
// hypotheses[i]. As in sacrebleu, the segments scored are the first
// min(hypotheses.size(), every references[k].size()) (Python's zip), and
// each line is rstrip()ped, optionally lowercased, then tokenized.
// Per segment: hypothesis n-grams (1..max_ngram_order over the tokens of
// Python's str.split()) are clipped by their maximum count in any one
// reference; the reference length is the closest to the hypothesis length
// (the shorter on ties). Over the corpus: precision_n = 100 * matched_n /
// total_n ('exp': a zero matched_n gives 100 / (2^k * total_n) for the k-th
// such order; 'floor': 100 * value / total_n; orders with total_n == 0 stop
// the loop and keep precision 0), bp = exp(1 - ref_len / sys_len) when
// sys_len < ref_len (0 when sys_len == 0), score = bp * exp(mean of
// log(precision_n)) with log(0) taken as -9999999999; 0 when nothing at all
// matched.
// Throws t5xx::Error when there is no hypothesis, no reference stream, no
// segment left to score, or an unknown smooth_method.
BleuScore CorpusBleu(const std::vector<std::string>& hypotheses,
                     const std::vector<std::vector<std::string>>& references,
                     const BleuOptions& options = {});

// sacrebleu BLEU.compute_bleu: the score from corpus statistics (counts and
// totals have max_ngram_order entries; they are taken by value as
// 'add-k' changes them).
BleuScore ComputeBleu(std::vector<double> correct, std::vector<double> total, int64_t sys_len,
                      int64_t ref_len, const BleuOptions& options);

}  // namespace t5xx::seqio::sacrebleu
