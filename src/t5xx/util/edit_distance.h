// Levenshtein distance, for "did you mean" suggestions in error messages.
#pragma once

#include <cstddef>
#include <string>

namespace t5xx {

// Minimum number of single-character insertions, deletions and
// substitutions turning a into b (bytes, not code points).
size_t EditDistance(const std::string& a, const std::string& b);

}  // namespace t5xx
