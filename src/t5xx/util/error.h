// t5xx::Error — the one exception type for user-facing errors.
//
// Every error a user can cause (a bad flag, a missing file, an unknown gin
// name, malformed data) is thrown as t5xx::Error with a message that names the
// file/line/key/flag and says how to fix it. The CLI catches it, prints the
// message on one line prefixed with "t5xx: error: " and exits with status 2.
// Internal invariant violations use other exception types (and exit 1).
#pragma once

#include <stdexcept>
#include <string>

namespace t5xx {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws t5xx::Error(message) if !condition.
void Check(bool condition, const std::string& message);

}  // namespace t5xx
