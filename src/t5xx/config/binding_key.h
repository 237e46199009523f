// How gin bindings are named and found: "scope/configurable.param" keys,
// gin's scope fallback order, and where a binding was written. Shared by the
// Config implementation files (config.cc, config_finalize.cc,
// config_report.cc).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "t5xx/config/lexer.h"
#include "t5xx/config/value.h"
#include "t5xx/util/error.h"

namespace t5xx::gin {

// A macro that reaches itself (%A -> %B -> %A). gin evaluates macros only
// when a called configurable reads them, so this is an error only there: a
// binding whose value holds one keeps the message for its readers.
class MacroCycleError : public Error {
 public:
  using Error::Error;
};

// A macro no definition names; Finalize reports each one where it is
// written (Config::CheckMacros), so resolution only stops at it.
class UndefinedMacroError : public Error {
 public:
  using Error::Error;
};

// "scope/configurable.param" ("configurable.param" in the root scope).
std::string KeyName(const std::string& scope, const std::string& configurable,
                    const std::string& param);

// The scopes a query in `scope` falls back to, most specific first:
// "a/b" -> {"a/b", "a", ""} (gin's scoped lookup).
std::vector<std::string> ScopePrefixes(const std::string& scope);

// "file:line" of a binding ("--gin.X flag" for a flag), for the lists of
// unused and ignored bindings.
std::string LineOf(const Location& loc);

// Calls fn on every value in `v` that is not a list, tuple or dict (dict
// keys included), depth first.
void ForEachLeaf(const Value& v, const std::function<void(const Value&)>& fn);

}  // namespace t5xx::gin
