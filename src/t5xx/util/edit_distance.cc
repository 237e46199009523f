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

std::vector<std::string> ClosestNames(const std::string& word,
                                      const std::vector<std::string>& candidates,
                                      size_t max_count, size_t min_limit) {
  std::vector<std::pair<size_t, const std::string*>> scored;
  scored.reserve(candidates.size());
  for (const auto& c : candidates) scored.emplace_back(EditDistance(word, c), &c);
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const size_t limit = std::max(min_limit, word.size() / 3);
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
