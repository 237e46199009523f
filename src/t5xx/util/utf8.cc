// UTF-8 well-formedness -- the implementation of utf8.h.
#include "t5xx/util/utf8.h"

#include <cstdio>

#include "t5xx/util/error.h"

namespace t5xx {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

int ByteAt(std::string_view s, size_t i) {
  return i < s.size() ? static_cast<unsigned char>(s[i]) : -1;
}

bool InRange(int b, int lo, int hi) { return b >= lo && b <= hi; }

// For a lead byte b0: the sequence length it announces (0 if it can start
// none) and the allowed range of the second byte (Table 3-7: E0 and F0 exclude
// overlongs, ED excludes surrogates, F4 stops at U+10FFFF).
struct Lead {
  int length = 0;
  int lo = 0x80;
  int hi = 0xBF;
};
Lead LeadOf(int b0) {
  if (b0 >= 0 && b0 < 0x80) return {1};
  if (InRange(b0, 0xC2, 0xDF)) return {2};
  if (b0 == 0xE0) return {3, 0xA0, 0xBF};
  if (b0 == 0xED) return {3, 0x80, 0x9F};
  if (InRange(b0, 0xE1, 0xEF)) return {3};
  if (b0 == 0xF0) return {4, 0x90, 0xBF};
  if (b0 == 0xF4) return {4, 0x80, 0x8F};
  if (InRange(b0, 0xF1, 0xF3)) return {4};
  return {0};  // 0x80..0xC1 and 0xF5..0xFF never start a character
}

// How many bytes from s[pos] begin a well-formed sequence: its full length
// when one is there, else the length of the maximal subpart (at least 1).
size_t PrefixLength(std::string_view s, size_t pos, bool* complete) {
  const Lead lead = LeadOf(ByteAt(s, pos));
  *complete = false;
  if (lead.length == 0) return 1;
  if (lead.length == 1) {
    *complete = true;
    return 1;
  }
  if (!InRange(ByteAt(s, pos + 1), lead.lo, lead.hi)) return 1;
  size_t n = 2;
  while (n < static_cast<size_t>(lead.length) && InRange(ByteAt(s, pos + n), 0x80, 0xBF)) ++n;
  *complete = n == static_cast<size_t>(lead.length);
  return n;
}

}  // namespace

Utf8Char DecodeUtf8Char(std::string_view s, size_t pos) {
  if (pos >= s.size()) return {};
  bool complete = false;
  const size_t n = PrefixLength(s, pos, &complete);
  if (!complete) return {};
  const unsigned char b0 = static_cast<unsigned char>(s[pos]);
  char32_t cp = n == 1 ? b0 : n == 2 ? (b0 & 0x1F) : n == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[pos + k]) & 0x3F);
  return {n, cp};
}

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = DecodeUtf8Char(s, i).length;
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string ToValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    bool complete = false;
    const size_t n = PrefixLength(s, i, &complete);
    if (complete) {
      out.append(s.substr(i, n));
    } else {
      out += kReplacement;
    }
    i += n;
  }
  return out;
}

std::string DropInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    bool complete = false;
    const size_t n = PrefixLength(s, i, &complete);
    if (complete) out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

std::string_view TruncateUtf8(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t end = 0;
  for (size_t i = 0; i < s.size();) {
    bool complete = false;
    size_t n = PrefixLength(s, i, &complete);
    // An ill-formed run is cut byte by byte: it holds no character to keep whole.
    if (!complete) n = 1;
    if (i + n > max_bytes) break;
    i += n;
    end = i;
  }
  return s.substr(0, end);
}

std::string EscapeInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = DecodeUtf8Char(s, i).length;
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(s[i]));
      out += buf;
      ++i;
    }
  }
  return out;
}

void AppendUtf8(std::string& out, char32_t cp) {
  T5XX_CHECK(cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF),
             CodePointName(cp) + " is not a Unicode scalar value (a surrogate, or above U+10FFFF); "
             "UTF-8 cannot encode it");
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string CodePointName(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  return buf;
}

}  // namespace t5xx
