// UTF-8 well-formedness: which byte strings are well-formed UTF-8 (the
// Unicode Standard, section 3.9, Table 3-7: no overlong forms, no surrogates
// U+D800..U+DFFF, nothing above U+10FFFF) and what t5xx does with bytes that
// are not.
//
// t5xx's one rule for text that is not UTF-8: data sources pass bytes through
// unchanged (seqio's features are tf.string bytes), so examples, tokens and
// metrics see the file's bytes; wherever text must be written as UTF-8 (JSON
// output, TensorBoard summaries) ToValidUtf8 replaces each ill-formed
// sequence by U+FFFD, as Python's bytes.decode('utf-8', errors='replace').
// ByteVocabulary's Decode instead drops them (DropInvalidUtf8), as seqio's.
//
// Framework-free.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace t5xx {

// The well-formed UTF-8 character that starts at s[pos]: its length in bytes
// (1 to 4) and its code point. length is 0 when none starts there (an
// invalid or truncated sequence, or pos >= s.size()).
struct Utf8Char {
  size_t length = 0;
  char32_t code_point = 0;
};
Utf8Char DecodeUtf8Char(std::string_view s, size_t pos);

// True when all of `s` is well-formed UTF-8 (the empty string is).
bool IsValidUtf8(std::string_view s);

// `s` with every ill-formed sequence replaced by U+FFFD (EF BF BD): one
// U+FFFD per "maximal subpart" (Unicode section 3.9, U+FFFD substitution of
// maximal subparts), the longest run of bytes that starts like a
// well-formed sequence but does not finish it, or a single byte that cannot
// start one — exactly what Python's bytes.decode('utf-8', errors='replace')
// yields. Well-formed input is returned unchanged.
//   "a\xff\xfe" -> "a\uFFFD\uFFFD";  "\xe4\xbd" (truncated 你) -> "\uFFFD".
std::string ToValidUtf8(std::string_view s);

// `s` with every byte that is not part of a well-formed sequence dropped
// (Python's bytes.decode('utf-8', errors='ignore')).
std::string DropInvalidUtf8(std::string_view s);

// The longest prefix of `s` of at most max_bytes bytes that does not end
// inside a well-formed multi-byte character (for quoting user text in
// messages without cutting a character in half).
std::string_view TruncateUtf8(std::string_view s, size_t max_bytes);

// `s` for quoting in a message: well-formed characters as they are, each
// byte that is not part of one as the four characters \xNN (lower-case hex).
//   "a\xff\xe2\x80\x98" -> "a\\xff‘"
std::string EscapeInvalidUtf8(std::string_view s);

// Appends the UTF-8 encoding of `code_point`, which must be a Unicode scalar
// value (<= U+10FFFF and not a surrogate); throws t5xx::Error otherwise.
void AppendUtf8(std::string& out, char32_t code_point);

// "U+2018": a code point in Unicode notation (at least 4 hex digits).
std::string CodePointName(char32_t code_point);

}  // namespace t5xx
