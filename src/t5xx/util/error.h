// t5xx::Error — the one exception type for user-facing errors — and
// T5XX_CHECK, the check that builds its message only when it fails.
//
// Every error a user can cause (a bad flag, a missing file, an unknown gin
// name, malformed data) is thrown as t5xx::Error with a message that names the
// file/line/key/flag and says how to fix it. The CLI catches it, prints the
// message prefixed with "t5xx: error: " and exits with status 2. Internal
// invariant violations use other exception types (and exit 1).
#pragma once

#include <stdexcept>
#include <string>

namespace t5xx {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace t5xx

// T5XX_CHECK(condition, message): throws t5xx::Error(message) if !condition.
// `message` (any expression convertible to std::string) is evaluated only
// when the check fails: it costs nothing on the passing path (checks sit
// inside per-example loops) and cannot fault there by reading state that
// exists only on failure.
#define T5XX_CHECK(condition, ...)                                     \
  do {                                                                 \
    if (!(condition)) throw ::t5xx::Error(std::string(__VA_ARGS__));   \
  } while (false)
