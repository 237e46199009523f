// Unicode text as the reference Python metric libraries see it: Python's
// str.isspace / str.split() / str.rstrip() / str.lower() and re's \w, and the
// `regex` module's \p{P}, \p{S}, \p{N} (used by sacrebleu's 'intl'
// tokenizer). The character tables are generated from those libraries by
// make_unicode_tables.py into unicode_tables.inc (its header names the
// Python, unicodedata and regex versions). Framework-free: no libtorch.
//
// Text is UTF-8 in and out. Bytes that are not well-formed UTF-8 decode to
// U+FFFD, one per maximal ill-formed subpart, as Python's
// bytes.decode('utf-8', errors='replace') (util/utf8.h's ToValidUtf8).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace t5xx::seqio::unicode {

// UTF-8 -> code points (ill-formed bytes -> U+FFFD, see above).
std::u32string Decode(std::string_view utf8);
// Code points -> UTF-8. Throws t5xx::Error on a surrogate or a value above
// U+10FFFF (Decode never yields one).
std::string Encode(std::u32string_view text);

// Python str.isspace() of one character (the whitespace of str.split()).
bool IsSpace(char32_t c);
// Python re's \w for str patterns (letters, digits and other numerics, '_').
bool IsWord(char32_t c);
// The `regex` module's \p{P} (punctuation), \p{S} (symbols), \p{N} (numbers).
bool IsPunctuation(char32_t c);
bool IsSymbol(char32_t c);
bool IsNumber(char32_t c);

// The decimal digit value (0-9) of a Unicode decimal digit (category Nd,
// what Python's int() and float() read as a digit), else -1.
int DecimalValue(char32_t c);

// Python str.lower(): the full lowercase mapping (U+0130 becomes "i" U+0307)
// with the final-sigma rule (U+03A3 becomes U+03C2 when a cased character
// precedes it and none follows it, case-ignorable characters skipped;
// otherwise U+03C3).
std::u32string Lower(std::u32string_view text);

// Python str.split() with no arguments: the runs of non-whitespace.
std::vector<std::u32string> Split(std::u32string_view text);

// Python str.rstrip() with no arguments: trailing whitespace removed.
std::u32string_view Rstrip(std::u32string_view text);

}  // namespace t5xx::seqio::unicode
