// Unicode text as Python sees it (see unicode_properties.h); the tables are
// generated into unicode_tables.inc by make_unicode_tables.py.
#include "t5xx/metrics/unicode_properties.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "t5xx/util/utf8.h"

namespace t5xx::seqio::unicode {
namespace {

struct CodePointRange {
  char32_t first, last;
};
// Code points first, first + stride, ..., last lower to themselves + delta.
struct LowerRun {
  char32_t first, last;
  int32_t stride, delta;
};

#include "t5xx/metrics/unicode_tables.inc"

template <size_t N>
bool InTable(const CodePointRange (&table)[N], char32_t c) {
  // The first range whose last >= c; c is in it when first <= c.
  const CodePointRange* it = std::lower_bound(
      std::begin(table), std::end(table), c,
      [](const CodePointRange& r, char32_t v) { return r.last < v; });
  return it != std::end(table) && it->first <= c;
}

constexpr char32_t kCapitalSigma = 0x3A3;
constexpr char32_t kSmallSigma = 0x3C3;
constexpr char32_t kFinalSigma = 0x3C2;

char32_t LowerSimple(char32_t c) {
  const LowerRun* it = std::lower_bound(
      std::begin(kPythonLower), std::end(kPythonLower), c,
      [](const LowerRun& r, char32_t v) { return r.last < v; });
  if (it == std::end(kPythonLower) || it->first > c) return c;
  if ((c - it->first) % static_cast<char32_t>(it->stride) != 0) return c;
  return static_cast<char32_t>(static_cast<int64_t>(c) + it->delta);
}

bool IsCaseIgnorable(char32_t c) { return InTable(kPythonCaseIgnorable, c); }
bool IsCased(char32_t c) { return InTable(kPythonCased, c); }

// CPython's handle_capital_sigma: final when, skipping case-ignorable
// characters, a cased one precedes position i and none follows it.
bool IsFinalSigma(std::u32string_view s, size_t i) {
  size_t j = i;
  while (j > 0 && IsCaseIgnorable(s[j - 1])) --j;
  if (j == 0 || !IsCased(s[j - 1])) return false;
  size_t k = i + 1;
  while (k < s.size() && IsCaseIgnorable(s[k])) ++k;
  return k == s.size() || !IsCased(s[k]);
}

}  // namespace

std::u32string Decode(std::string_view utf8) {
  const std::string valid = ToValidUtf8(utf8);
  std::u32string out;
  out.reserve(valid.size());
  for (size_t pos = 0; pos < valid.size();) {
    const Utf8Char ch = DecodeUtf8Char(valid, pos);
    out.push_back(ch.code_point);
    pos += ch.length;  // ToValidUtf8 left only well-formed characters
  }
  return out;
}

std::string Encode(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) AppendUtf8(out, c);
  return out;
}

bool IsSpace(char32_t c) { return InTable(kPythonSpace, c); }
bool IsWord(char32_t c) { return InTable(kPythonWord, c); }
bool IsPunctuation(char32_t c) { return InTable(kRegexPunctuation, c); }
bool IsSymbol(char32_t c) { return InTable(kRegexSymbol, c); }
bool IsNumber(char32_t c) { return InTable(kRegexNumber, c); }

std::u32string Lower(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i];
    if (c < 0x80) {
      out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
    } else if (c == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE
      out.push_back(U'i');
      out.push_back(0x307);
    } else if (c == kCapitalSigma) {
      out.push_back(IsFinalSigma(text, i) ? kFinalSigma : kSmallSigma);
    } else {
      out.push_back(LowerSimple(c));
    }
  }
  return out;
}

std::vector<std::u32string> Split(std::u32string_view text) {
  std::vector<std::u32string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    size_t j = i;
    while (j < text.size() && !IsSpace(text[j])) ++j;
    if (j > i) out.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

std::u32string_view Rstrip(std::u32string_view text) {
  size_t n = text.size();
  while (n > 0 && IsSpace(text[n - 1])) --n;
  return text.substr(0, n);
}

}  // namespace t5xx::seqio::unicode
