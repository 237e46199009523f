// Tokenizer for gin text.
//
// Splits gin source into names, numbers, strings, punctuation and logical
// line ends. Newlines inside (), [] and {} do not end a line (values may span
// lines there), `#` starts a comment, and a backslash at the end of a line
// joins it to the next, as in Python (gin-config tokenizes with Python's
// tokenizer; this is a hand-written equivalent for the subset gin uses).
//
// Errors (unterminated string, bad number, stray or unmatched bracket,
// unexpected character) throw t5xx::Error "<file:line:col>: ... '<text>'".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/config/value.h"

namespace t5xx::gin {

enum class TokenKind {
  kName,     // identifier: [A-Za-z_][A-Za-z0-9_]* (dots are separate tokens)
  kInt,      // int_value
  kFloat,    // float_value
  kString,   // string_value (escapes decoded)
  kPunct,    // one of ( ) [ ] { } @ % = : , / . - +
  kNewline,  // end of a logical line
  kEnd,      // end of input
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  // the source text of the token ("" for kNewline/kEnd)
  std::string string_value;
  int64_t int_value = 0;
  double float_value = 0.0;
  Location loc;
  bool first_on_line = false;  // first token of a logical line

  // "'text'", "end of line" or "end of input", for error messages.
  std::string Describe() const;
};

// Tokenizes `text`. `source_name` goes into every Location. When
// `flag_source` is true (text from a command-line flag), locations carry
// line 0 so they print as "<source_name>, column N".
std::vector<Token> Tokenize(const std::string& text, const std::string& source_name,
                            bool flag_source = false);

}  // namespace t5xx::gin
