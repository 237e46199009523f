// Levenshtein distance and the "did you mean" suggestions built on it, for
// error messages about unknown names (gin configurables, tasks, mixtures,
// preprocessors, flags).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace t5xx {

// Minimum number of single-character insertions, deletions and
// substitutions turning a into b (bytes, not code points).
size_t EditDistance(const std::string& a, const std::string& b);

// min(EditDistance(a, b), limit + 1), computed without finishing the table
// once every path costs more than `limit` (and not at all when the lengths
// alone differ by more): suggestions scan every registered name, so an
// input full of unknown names must not cost a full table per pair.
size_t EditDistanceWithin(const std::string& a, const std::string& b, size_t limit);

// The largest distance a suggestion may be at: a typo is a few edits, and
// the banded table costs (2 * limit + 1) cells per character, so a limit
// growing with the word (size / 3) made a 50 KB name cost its square per
// candidate (found by fuzzing the gin engine).
inline constexpr size_t kMaxSuggestionDistance = 16;

// Up to `max_count` candidates within EditDistance
// min(kMaxSuggestionDistance, max(min_limit, word.size() / 3)) of `word`,
// nearest first (ties keep the candidates' order); a candidate equal to
// `word` is skipped. Empty when none is close.
std::vector<std::string> ClosestNames(const std::string& word,
                                      const std::vector<std::string>& candidates,
                                      size_t max_count = 3,
                                      size_t min_limit = 3);

// The one candidate closest to `word` (the first on ties) if within
// min(kMaxSuggestionDistance, max(2, word.size() / 3)), else "".
std::string ClosestName(const std::string& word,
                        const std::vector<std::string>& candidates);

}  // namespace t5xx
