// See edit_distance.h.
#include "t5xx/util/edit_distance.h"

#include <algorithm>
#include <utility>

namespace t5xx {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

size_t EditDistanceWithin(const std::string& a, const std::string& b, size_t limit) {
  const size_t over = limit + 1;
  const size_t length_gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (length_gap > limit) return over;
  // Only cells with |i - j| <= limit can hold a cost <= limit (each step off
  // the diagonal costs 1): a band of 2 * limit + 1 cells per row, the rest
  // standing at `over`.
  std::vector<size_t> prev(b.size() + 1, over), cur(b.size() + 1, over);
  for (size_t j = 0; j <= std::min(b.size(), limit); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    const size_t lo = i > limit ? i - limit : 1;
    const size_t hi = std::min(b.size(), i + limit);
    cur[lo - 1] = lo == 1 && i <= limit ? i : over;
    size_t row_min = cur[lo - 1];
    for (size_t j = lo; j <= hi; ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({std::min(prev[j] + 1, over), std::min(cur[j - 1] + 1, over), sub});
      row_min = std::min(row_min, cur[j]);
    }
    if (hi < b.size()) cur[hi + 1] = over;
    if (row_min > limit) return over;  // costs never fall from row to row
    std::swap(prev, cur);
  }
  return std::min(prev[b.size()], over);
}

std::vector<std::string> ClosestNames(const std::string& word,
                                      const std::vector<std::string>& candidates,
                                      size_t max_count, size_t min_limit) {
  const size_t limit = std::min(kMaxSuggestionDistance, std::max(min_limit, word.size() / 3));
  std::vector<std::pair<size_t, const std::string*>> scored;
  scored.reserve(candidates.size());
  for (const auto& c : candidates) {
    if (c == word) continue;  // never "did you mean" the word itself
    const size_t d = EditDistanceWithin(word, c, limit);
    if (d <= limit) scored.emplace_back(d, &c);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [d, c] : scored) {
    if (d > limit || out.size() >= max_count) break;
    out.push_back(*c);
  }
  return out;
}

std::string ClosestName(const std::string& word,
                        const std::vector<std::string>& candidates) {
  std::vector<std::string> best = ClosestNames(word, candidates, 1, 2);
  return best.empty() ? "" : best[0];
}

}  // namespace t5xx
