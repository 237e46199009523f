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

namespace {

// The digit zeros of Unicode's decimal digits (category Nd, unicodedata
// 14.0.0 as Python 3.11's int() reads them): each is followed by 1..9.
constexpr char32_t kDecimalZeros[] = {
    0x30,    0x660,   0x6F0,   0x7C0,   0x966,   0x9E6,   0xA66,   0xAE6,   0xB66,   0xBE6,
    0xC66,   0xCE6,   0xD66,   0xDE6,   0xE50,   0xED0,   0xF20,   0x1040,  0x1090,  0x17E0,
    0x1810,  0x1946,  0x19D0,  0x1A80,  0x1A90,  0x1B50,  0x1BB0,  0x1C40,  0x1C50,  0xA620,
    0xA8D0,  0xA900,  0xA9D0,  0xA9F0,  0xAA50,  0xABF0,  0xFF10,  0x104A0, 0x10D30, 0x11066,
    0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0,
    0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2,
    0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0};

}  // namespace

int DecimalValue(char32_t c) {
  for (char32_t zero : kDecimalZeros) {
    if (c >= zero && c <= zero + 9) return static_cast<int>(c - zero);
  }
  return -1;
}


}  // namespace t5xx::seqio::unicode
