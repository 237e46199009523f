// JSON text holding byte strings: t5xx's strings are bytes (utf8.h), JSON
// text is UTF-8 (RFC 8259 section 8.1). DumpJson and ParseJsonKeepingBytes
// are the one way t5xx writes JSON that may hold user data, and the one way
// its JSON-lines sources read it, so both follow utf8.h's rule: bytes pass
// through sources unchanged, and output replaces what is not UTF-8 by
// U+FFFD. DumpJsonKeepingBytes is for t5xx's own state, read back by
// ParseJsonKeepingBytes byte for byte.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace t5xx {

// j.dump(indent), except that every string and object key that is not
// well-formed UTF-8 is written as ToValidUtf8 makes it (U+FFFD per
// ill-formed sequence, as Python's errors='replace') instead of throwing
// nlohmann's type_error 316. Non-ASCII text is written as UTF-8, not \u
// escapes. If two keys of one object become equal by the replacement, the
// value of the later key (in the object's order) is written.
std::string DumpJson(const nlohmann::json& j, int indent = -1);

// The inverse of ParseJsonKeepingBytes: j.dump(indent), except that strings
// and keys that are not well-formed UTF-8 are written with their bytes as
// they are (so the text is not UTF-8), where dump() would throw nlohmann's
// type_error 316. For t5xx's own state files, which hold user data that
// must come back byte for byte (a custom pipeline stage's position holding
// raw text). Throws t5xx::Error when a string holds both such bytes and
// code points in U+10FF80..U+10FFFF (see ParseJsonKeepingBytes).
std::string DumpJsonKeepingBytes(const nlohmann::json& j, int indent = -1);

// Parses `text` as nlohmann::json::parse does, except that bytes inside JSON
// strings (values or keys) that are not well-formed UTF-8 are kept in the
// parsed strings unchanged instead of failing the parse. Returns false and
// sets *error (nlohmann's message, invalid bytes shown as \xNN) when `text`
// is not JSON — including an invalid byte outside a string — or when it
// holds both invalid bytes and any of the code points U+10FF80..U+10FFFF
// (raw or as \u escapes), which the parse uses to carry the bytes.
// Both parsers refuse JSON nested more than kMaxJsonDepth arrays/objects
// deep (an error, not a stack overflow in whoever walks the value: dump()
// and t5xx's own walkers recurse).
bool ParseJsonKeepingBytes(std::string_view text, nlohmann::json* out, std::string* error);

// nlohmann::json::parse (well-formed UTF-8 only) with the depth limit;
// returns false and sets *error (nlohmann's message) when `text` is not
// JSON or nests too deep. For t5xx's own metadata files (.zarray,
// checksums), where bytes that are not UTF-8 are corruption.
bool ParseJson(std::string_view text, nlohmann::json* out, std::string* error);

inline constexpr int kMaxJsonDepth = 100;

// The value of `j` when it is a JSON integer (nlohmann's number_integer or
// number_unsigned) in [min, max]; nullopt for anything else. Readers of files
// use this instead of get<int64_t>(): that converts a float such as 1e300 by
// a cast whose overflow is undefined behaviour, and wraps an unsigned value
// over INT64_MAX (18446744073709551615 would read as -1). A float with an
// integral value (3.0) is not an integer here, as in Python's json.
std::optional<int64_t> JsonInteger(const nlohmann::json& j,
                                   int64_t min = std::numeric_limits<int64_t>::min(),
                                   int64_t max = std::numeric_limits<int64_t>::max());

}  // namespace t5xx
