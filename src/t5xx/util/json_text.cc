// JSON text holding byte strings -- the implementation of json_text.h.
#include "t5xx/util/json_text.h"

#include <cctype>
#include <cstdio>

#include "t5xx/util/error.h"
#include "t5xx/util/utf8.h"

namespace t5xx {
namespace {

using json = nlohmann::json;

bool AllValid(const json& j) {
  if (j.is_string()) return IsValidUtf8(j.get_ref<const std::string&>());
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!IsValidUtf8(it.key()) || !AllValid(it.value())) return false;
    }
    return true;
  }
  if (j.is_array()) {
    for (const auto& x : j) {
      if (!AllValid(x)) return false;
    }
  }
  return true;
}

// A copy of `j` with its strings and keys passed through `fix`.
template <typename Fix>
json MapStrings(const json& j, const Fix& fix) {
  if (j.is_string()) return fix(j.get_ref<const std::string&>());
  if (j.is_object()) {
    json out = json::object();
    for (auto it = j.begin(); it != j.end(); ++it) out[fix(it.key())] = MapStrings(it.value(), fix);
    return out;
  }
  if (j.is_array()) {
    json out = json::array();
    for (const auto& x : j) out.push_back(MapStrings(x, fix));
    return out;
  }
  return j;
}

// ParseJsonKeepingBytes carries an invalid byte b (always >= 0x80: ASCII is
// well-formed) through nlohmann's parser as the code point U+10FF00 + b,
// UTF-8 F4 8F (BC | b >> 6) (80 | b & 3F), and maps it back afterwards.
void AppendPlaceholder(std::string& out, unsigned char b) {
  out += '\xF4';
  out += '\x8F';
  out += static_cast<char>(0xBC | (b >> 6));
  out += static_cast<char>(0x80 | (b & 0x3F));
}

// Whether s[i..] is a placeholder; if so, its byte.
bool PlaceholderAt(std::string_view s, size_t i, unsigned char* b) {
  if (i + 4 > s.size() || s[i] != '\xF4' || s[i + 1] != '\x8F') return false;
  const unsigned char third = static_cast<unsigned char>(s[i + 2]);
  const unsigned char fourth = static_cast<unsigned char>(s[i + 3]);
  if ((third != 0xBE && third != 0xBF) || (fourth & 0xC0) != 0x80) return false;
  *b = static_cast<unsigned char>(((third & 0x03) << 6) | (fourth & 0x3F));
  return true;
}

// Placeholders back to their bytes (as_text: to the text \xNN, for messages).
std::string Unmap(std::string_view s, bool as_text) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char b = 0;
    if (PlaceholderAt(s, i, &b)) {
      if (as_text) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", b);
        out += buf;
      } else {
        out += static_cast<char>(b);
      }
      i += 4;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// Whether `text` already holds a code point of the placeholder range
// U+10FF80..U+10FFFF: raw (F4 8F BE/BF ..) or escaped (\uDBFF followed by a
// low surrogate; any \uDBFF is taken as one, which errs on the safe side).
bool HoldsPlaceholderRange(std::string_view text) {
  for (size_t i = 0; i + 3 < text.size(); ++i) {
    if (text[i] == '\xF4' && text[i + 1] == '\x8F' &&
        (text[i + 2] == '\xBE' || text[i + 2] == '\xBF')) {
      return true;
    }
  }
  for (size_t i = 0; i + 5 < text.size(); ++i) {
    if (text[i] == '\\' && (text[i + 1] == 'u' || text[i + 1] == 'U') &&
        std::tolower(static_cast<unsigned char>(text[i + 2])) == 'd' &&
        std::tolower(static_cast<unsigned char>(text[i + 3])) == 'b' &&
        std::tolower(static_cast<unsigned char>(text[i + 4])) == 'f' &&
        std::tolower(static_cast<unsigned char>(text[i + 5])) == 'f') {
      return true;
    }
  }
  return false;
}

// json::parse with a parser callback that stops at kMaxJsonDepth. Throws
// json::parse_error, or TooDeep.
struct TooDeep {};
json ParseBounded(std::string_view text) {
  return json::parse(text, [](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth) throw TooDeep{};
    return true;
  });
}

const char kTooDeepMessage[] = "JSON nested more than 100 arrays/objects deep (the limit)";

}  // namespace

bool ParseJson(std::string_view text, json* out, std::string* error) {
  try {
    *out = ParseBounded(text);
    return true;
  } catch (const json::exception& e) {  // parse_error; out_of_range 406: a number beyond double
    *error = e.what();
  } catch (const TooDeep&) {
    *error = kTooDeepMessage;
  }
  return false;
}

std::string DumpJson(const json& j, int indent) {
  if (AllValid(j)) return j.dump(indent);
  return MapStrings(j, [](const std::string& s) { return ToValidUtf8(s); }).dump(indent);
}

std::string DumpJsonKeepingBytes(const json& j, int indent) {
  if (AllValid(j)) return j.dump(indent);
  bool clash = false;
  const json mapped = MapStrings(j, [&clash](const std::string& s) {
    if (IsValidUtf8(s)) return s;
    clash = clash || HoldsPlaceholderRange(s);
    std::string out;
    out.reserve(s.size() + 8);
    for (size_t i = 0; i < s.size();) {
      const size_t n = DecodeUtf8Char(s, i).length;
      if (n == 0) {
        AppendPlaceholder(out, static_cast<unsigned char>(s[i]));
        ++i;
      } else {
        out.append(s, i, n);
        i += n;
      }
    }
    return out;
  });
  if (clash) {
    throw Error("cannot write JSON keeping bytes: a string holds both bytes that are not "
                "UTF-8 and code points in U+10FF80..U+10FFFF, which t5xx uses to carry such "
                "bytes; the two could not be told apart when read back");
  }
  return Unmap(mapped.dump(indent), /*as_text=*/false);
}

bool ParseJsonKeepingBytes(std::string_view text, json* out, std::string* error) {
  if (IsValidUtf8(text)) return ParseJson(text, out, error);
  if (HoldsPlaceholderRange(text)) {
    *error = "the text holds bytes that are not UTF-8 and also code points in "
             "U+10FF80..U+10FFFF, which t5xx uses to carry such bytes through its JSON "
             "parser; re-encode the file as UTF-8";
    return false;
  }
  // Invalid bytes inside strings get placeholders; outside strings (where
  // they are a syntax error) they stay, for nlohmann to report.
  std::string mapped;
  mapped.reserve(text.size() + 8);
  bool in_string = false;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string && c == '\\' && i + 1 < text.size()) {  // an escape: \" does not end the string
      mapped.append(text.substr(i, 2));
      i += 2;
      continue;
    }
    if (c == '"') in_string = !in_string;
    const size_t n = DecodeUtf8Char(text, i).length;
    if (n == 0 && in_string) {
      AppendPlaceholder(mapped, static_cast<unsigned char>(c));
      ++i;
    } else {
      const size_t take = n == 0 ? 1 : n;
      mapped.append(text.substr(i, take));
      i += take;
    }
  }
  json parsed;
  try {
    parsed = ParseBounded(mapped);
  } catch (const json::exception& e) {  // parse_error; out_of_range 406: a number beyond double
    *error = EscapeInvalidUtf8(Unmap(e.what(), /*as_text=*/true));
    return false;
  } catch (const TooDeep&) {
    *error = kTooDeepMessage;
    return false;
  }
  *out = MapStrings(parsed, [](const std::string& s) { return Unmap(s, /*as_text=*/false); });
  return true;
}

std::optional<int64_t> JsonInteger(const nlohmann::json& j, int64_t min, int64_t max) {
  int64_t v = 0;
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    v = static_cast<int64_t>(u);
  } else if (j.is_number_integer()) {
    v = j.get<int64_t>();
  } else {
    return std::nullopt;
  }
  if (v < min || v > max) return std::nullopt;
  return v;
}

}  // namespace t5xx
