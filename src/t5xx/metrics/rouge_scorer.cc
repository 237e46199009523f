// rouge-score's RougeScorer (see rouge_scorer.h).
#include "t5xx/metrics/rouge_scorer.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "t5xx/metrics/porter_stemmer.h"
#include "t5xx/metrics/unicode_properties.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio::rouge_scorer {
namespace {

using Ids = std::vector<int>;

// Tokens as small integers, for counting and LCS tables.
class Interner {
 public:
  Ids Intern(const std::vector<std::string>& tokens) {
    Ids ids;
    ids.reserve(tokens.size());
    for (const auto& t : tokens) ids.push_back(ids_.emplace(t, static_cast<int>(ids_.size())).first->second);
    return ids;
  }

 private:
  std::unordered_map<std::string, int> ids_;
};

bool IsAsciiAlnumLower(char32_t c) { return (c >= U'a' && c <= U'z') || (c >= U'0' && c <= U'9'); }

// rouge_scorer._score_ngrams over _create_ngrams of both sides.
Score ScoreNGrams(const Ids& target, const Ids& prediction, size_t n) {
  auto count = [n](const Ids& ids) {
    std::map<Ids, int64_t> counts;
    for (size_t i = 0; i + n <= ids.size(); ++i) ++counts[Ids(ids.begin() + i, ids.begin() + i + n)];
    return counts;
  };
  const auto t = count(target), p = count(prediction);
  int64_t intersection = 0, t_total = 0, p_total = 0;
  for (const auto& [ngram, c] : t) {
    auto it = p.find(ngram);
    intersection += std::min(c, it == p.end() ? int64_t{0} : it->second);
    t_total += c;
  }
  for (const auto& [ngram, c] : p) p_total += c;
  Score s;
  s.precision = static_cast<double>(intersection) / static_cast<double>(std::max<int64_t>(p_total, 1));
  s.recall = static_cast<double>(intersection) / static_cast<double>(std::max<int64_t>(t_total, 1));
  s.fmeasure = FMeasure(s.precision, s.recall);
  return s;
}

// rouge_scorer._lcs_table: table[i][j] = LCS length of ref[:i], can[:j].
std::vector<std::vector<int>> LcsTable(const Ids& ref, const Ids& can) {
  std::vector<std::vector<int>> t(ref.size() + 1, std::vector<int>(can.size() + 1, 0));
  for (size_t i = 1; i <= ref.size(); ++i) {
    for (size_t j = 1; j <= can.size(); ++j) {
      t[i][j] = ref[i - 1] == can[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
    }
  }
  return t;
}

// rouge_scorer._score_lcs.
Score ScoreLcs(const Ids& target, const Ids& prediction) {
  if (target.empty() || prediction.empty()) return {};
  const int lcs = LcsTable(target, prediction)[target.size()][prediction.size()];
  Score s;
  s.precision = static_cast<double>(lcs) / static_cast<double>(prediction.size());
  s.recall = static_cast<double>(lcs) / static_cast<double>(target.size());
  s.fmeasure = FMeasure(s.precision, s.recall);
  return s;
}

// rouge_scorer.lcs_ind / _backtrack_norec: the indices into `ref` of the
// one LCS this backtracking picks (ties move left in `can` only when that
// keeps a strictly longer LCS).
std::vector<size_t> LcsIndices(const Ids& ref, const Ids& can) {
  const auto t = LcsTable(ref, can);
  std::vector<size_t> lcs;
  size_t i = ref.size(), j = can.size();
  while (i > 0 && j > 0) {
    if (ref[i - 1] == can[j - 1]) {
      lcs.push_back(i - 1);
      --i, --j;
    } else if (t[i][j - 1] > t[i - 1][j]) {
      --j;
    } else {
      --i;
    }
  }
  std::reverse(lcs.begin(), lcs.end());
  return lcs;
}

// rouge_scorer._summary_level_lcs.
Score SummaryLevelLcs(const std::vector<Ids>& ref_sents, const std::vector<Ids>& can_sents) {
  if (ref_sents.empty() || can_sents.empty()) return {};
  size_t m = 0, n = 0;
  std::map<int, int64_t> ref_counts, can_counts;
  for (const Ids& s : ref_sents) {
    m += s.size();
    for (int t : s) ++ref_counts[t];
  }
  for (const Ids& s : can_sents) {
    n += s.size();
    for (int t : s) ++can_counts[t];
  }
  if (n == 0 || m == 0) return {};
  int64_t hits = 0;
  for (const Ids& r : ref_sents) {
    std::set<size_t> union_indices;  // _union_lcs: sorted union of the LCS indices
    for (const Ids& c : can_sents) {
      for (size_t i : LcsIndices(r, c)) union_indices.insert(i);
    }
    for (size_t i : union_indices) {
      const int t = r[i];
      if (can_counts[t] > 0 && ref_counts[t] > 0) {
        ++hits;
        --can_counts[t];
        --ref_counts[t];
      }
    }
  }
  Score s;
  s.recall = static_cast<double>(hits) / static_cast<double>(m);
  s.precision = static_cast<double>(hits) / static_cast<double>(n);
  s.fmeasure = FMeasure(s.precision, s.recall);
  return s;
}

// get_sents without split_summaries: text.split("\n"), empty lines dropped.
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t nl = text.find('\n', start);
    const std::string_view line = text.substr(start, nl == std::string_view::npos ? nl : nl - start);
    if (!line.empty()) out.push_back(line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return out;
}

int NGramOrder(const std::string& type) {
  if (type.size() == 6 && type.compare(0, 5, "rouge") == 0 && type[5] >= '0' && type[5] <= '9') {
    return type[5] - '0';
  }
  return -1;
}

}  // namespace

double FMeasure(double precision, double recall) {
  return precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0.0;
}

std::vector<std::string> Tokenize(std::string_view text, bool use_stemmer) {
  const std::u32string lower = unicode::Lower(unicode::Decode(text));
  std::vector<std::string> tokens;
  std::string current;
  auto flush = [&]() {
    if (current.empty()) return;
    tokens.push_back(use_stemmer && current.size() > 3 ? PorterStemmer::Stem(current) : current);
    current.clear();
  };
  for (char32_t c : lower) {
    if (IsAsciiAlnumLower(c)) {
      current.push_back(static_cast<char>(c));
    } else {
      flush();
    }
  }
  flush();
  // VALID_TOKEN_RE (^[a-z0-9]+$): the stemmer keeps tokens in [a-z0-9], so
  // only empty ones could fail it, and none are made.
  return tokens;
}

RougeScorer::RougeScorer(std::vector<std::string> rouge_types, bool use_stemmer)
    : rouge_types_(std::move(rouge_types)), use_stemmer_(use_stemmer) {
  T5XX_CHECK(!rouge_types_.empty(), "rouge: no rouge types; give e.g. [\"rouge1\", \"rouge2\", "
                                    "\"rougeLsum\"]");
  for (const std::string& type : rouge_types_) {
    T5XX_CHECK(type == "rougeL" || type == "rougeLsum" || NGramOrder(type) >= 1,
               "rouge: invalid rouge type '" + type +
                   "'; use rouge1 .. rouge9 (n-grams), rougeL or rougeLsum");
  }
}

std::map<std::string, Score> RougeScorer::score(std::string_view target,
                                                std::string_view prediction) const {
  Interner interner;
  const Ids target_ids = interner.Intern(Tokenize(target, use_stemmer_));
  const Ids prediction_ids = interner.Intern(Tokenize(prediction, use_stemmer_));
  std::map<std::string, Score> out;
  for (const std::string& type : rouge_types_) {
    if (type == "rougeL") {
      out[type] = ScoreLcs(target_ids, prediction_ids);
    } else if (type == "rougeLsum") {
      auto sentences = [&](std::string_view text) {
        std::vector<Ids> sents;
        for (std::string_view line : Lines(text)) {
          sents.push_back(interner.Intern(Tokenize(line, use_stemmer_)));
        }
        return sents;
      };
      out[type] = SummaryLevelLcs(sentences(target), sentences(prediction));
    } else {
      out[type] = ScoreNGrams(target_ids, prediction_ids, static_cast<size_t>(NGramOrder(type)));
    }
  }
  return out;
}

}  // namespace t5xx::seqio::rouge_scorer
