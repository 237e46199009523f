// Parser for gin files: tokens -> statements.
//
// Grammar (gin-config's syntax as t5x uses it; see docs/gin.md):
//   statement := 'from' dotted 'import' NAME ['as' NAME] (',' ...)*
//              | 'import' dotted ['as' NAME]
//              | 'include' STRING
//              | key '=' value                      # binding or macro
//              | selector ':' NEWLINE (INDENT NAME '=' value NEWLINE)+   # block
//   key       := [scope '/']* dotted               # last dotted part = param
//   value     := None | True | False | ['-'|'+'] number | STRING+
//              | '(' ')' | '(' value ')' | '(' value ',' [value (',' value)*] [','] ')'
//              | '[' [value (',' value)* [',']] ']'
//              | '{' [value ':' value (',' ...)* [',']] '}'
//              | '@' [scope '/']* dotted ['(' ')']  # reference
//              | '%' [scope '/']* dotted             # macro, or %gin.REQUIRED
// A key without a '.' ("NAME = value", "scope/NAME = value") defines a macro;
// a scoped macro's name includes its scope ("scope/NAME", read as
// %scope/NAME). A dict literal keeps one entry per key, as Python's does: a
// repeated key keeps its first place and its last value.
//
// The parser checks syntax only; names are resolved against the registry by
// Config::Finalize. Errors throw t5xx::Error "<file:line:col>: <what>, got '<text>'".
#pragma once

#include <string>
#include <vector>

#include "t5xx/config/value.h"

namespace t5xx::gin {

// The deepest a value may nest ([...], (...), {...}); deeper is a parse
// error (no config needs it, and it bounds the parser's recursion).
inline constexpr int kMaxGinValueDepth = 100;

struct Statement {
  enum class Kind {
    kDynamicRegistration,  // from __gin__ import dynamic_registration
    kImport,               // module, alias
    kInclude,              // path
    kBinding,              // scope, configurable, param, value
    kMacro,                // param holds the macro name, value
  };
  Kind kind = Kind::kBinding;
  Location loc;  // start of the statement (the key for bindings)

  std::string module;  // kImport: "t5x.models"
  std::string alias;   // kImport: name it is visible under ("models")
  std::string path;    // kInclude

  std::string scope;         // kBinding: "" or "train" or "a/b"
  std::string configurable;  // kBinding: as written, e.g. "utils.DatasetConfig"
  std::string param;         // kBinding: parameter; kMacro: macro name
  Value value;
};

// Parses a whole gin file/string. `flag_source`: see Tokenize().
std::vector<Statement> ParseGinText(const std::string& text, const std::string& source_name,
                                    bool flag_source = false);

// Parses `text` as exactly one gin value (nothing may follow it).
Value ParseGinValue(const std::string& text, const std::string& source_name,
                    bool flag_source = false);

// Parses a binding key such as "train/utils.DatasetConfig.split" or
// "MODEL_DIR" into a kBinding or kMacro statement with no value.
Statement ParseGinKey(const std::string& text, const std::string& source_name,
                      bool flag_source = false);

}  // namespace t5xx::gin
