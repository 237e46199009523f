// Reading typed values out of a finalized gin Config: the checks that every
// reader of configurables shares -- a reference to the expected configurable
// (in the scope gin calls it in), numbers in range, options refused as not yet
// supported -- each error naming the binding's file:line. Knows no
// configurable by name.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "t5xx/config/config.h"
#include "t5xx/config/value.h"

namespace t5xx::gin {

// "file:line:col (train.total_steps)", or the description alone when the
// value has no location (a default).
std::string Where(const Value& v);

// The location alone ("file:line:col"), else the description, else "gin".
std::string WhereShort(const Value& v);

// Checks that `v` is a reference to `expected` -- evaluated (`@x()`) unless
// `evaluated` is false (`@x`) -- and returns the scope gin calls it in when
// the configurable holding `v` was called in `outer` (CallScope: a scoped
// reference's own scope, an unscoped @x() inherits `outer`, an unscoped @x
// is called at top level). Throws t5xx::Error naming Where(v).
std::string ExpectReference(const Value& v, const std::string& expected, bool evaluated = true,
                            const std::string& outer = "");

// `v` must be a reference to one of `kinds` (`what` names the role, e.g.
// "a data source"); returns the configurable's name. Throws t5xx::Error
// listing the known kinds.
const std::string& ExpectOneOf(const Value& v, const std::vector<std::string>& kinds,
                               const std::string& what);

// None -> nullopt, else the int.
std::optional<int64_t> OptionalInt(const Value& v);

// The int, which must be >= minimum (t5xx::Error otherwise).
int64_t AtLeast(const Value& v, int64_t minimum);

// None -> nullopt, else AtLeast(v, minimum).
std::optional<int64_t> NoneOrAtLeast(const Value& v, int64_t minimum);

// An int held as int32 in C++: in [minimum, 2^31 - 1], or a t5xx::Error
// naming the binding (never a silent wrap-around).
int32_t Int32(const Value& v, int64_t minimum);

// Throws t5xx::Error "<where> = <value> is not supported yet; <what_to_do>"
// when `bad`.
void Refuse(bool bad, const Value& v, const std::string& what_to_do);

// A dict of strings (e.g. split_to_filepattern) as a map.
std::map<std::string, std::string> StringMap(const Value& v);

// A list of strings; None gives an empty list.
std::vector<std::string> StringList(const Value& v);

// Throws t5xx::Error listing the bindings no Query read (t5x would ignore
// them silently; a typo must not be), and writes one note to `notes` naming
// the bindings of configurables the command never calls (ignored, as gin
// does). `command` names the t5xx command in both.
void RequireAllBindingsRead(const Config& config, const std::string& command,
                            std::ostream& notes);

}  // namespace t5xx::gin
