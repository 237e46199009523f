// Feature accessors and TF string ops for t5's catalog preprocessors (see
// catalog_features.h).
#include "t5xx/data/preprocessors/catalog_features.h"

#include <set>

#include "t5xx/util/error.h"
#include "t5xx/util/utf8.h"

namespace t5xx::seqio::catalog {

std::string Where(const char* who, uint64_t index) {
  return std::string(who) + ": example " + std::to_string(index);
}

const FeatureValue& Require(const Example& ex, const std::string& key,
                            const char* who, uint64_t index) {
  auto it = ex.find(key);
  if (it == ex.end()) {
    std::string keys;
    for (const auto& kv : ex) keys += (keys.empty() ? "" : ", ") + kv.first;
    throw Error(Where(who, index) + " has no feature '" + key + "' (it has [" + keys +
                "])");
  }
  return it->second;
}

namespace {
[[noreturn]] void WrongType(const FeatureValue& v, const std::string& key,
                            const char* who, uint64_t index, const char* want) {
  throw Error(Where(who, index) + " feature '" + key + "' must be " + want +
              ", but holds " + DescribeValue(v));
}
}  // namespace

const std::string& RequireText(const Example& ex, const std::string& key,
                               const char* who, uint64_t index) {
  const FeatureValue& v = Require(ex, key, who, index);
  if (const std::string* s = std::get_if<std::string>(&v)) return *s;
  WrongType(v, key, who, index, "a string");
}

const std::vector<std::string>& RequireTexts(const Example& ex, const std::string& key,
                                             const char* who, uint64_t index) {
  const FeatureValue& v = Require(ex, key, who, index);
  const Array* a = std::get_if<Array>(&v);
  if (a == nullptr || a->dtype != Array::DType::kString || a->shape.size() != 1 ||
      !a->row_lengths.empty())
    WrongType(v, key, who, index, "a rank-1 string array");
  return a->strings;
}

int64_t RequireInt(const Example& ex, const std::string& key, const char* who,
                   uint64_t index) {
  const FeatureValue& v = Require(ex, key, who, index);
  if (const Tokens* t = std::get_if<Tokens>(&v)) {
    if (t->size() == 1) return (*t)[0];
  } else if (const Array* a = std::get_if<Array>(&v)) {
    if (a->shape.empty() && a->dtype != Array::DType::kString &&
        a->dtype != Array::DType::kFloat32 && a->ints.size() == 1)
      return a->ints[0];
  }
  WrongType(v, key, who, index, "an integer scalar");
}

float RequireFloat(const Example& ex, const std::string& key, const char* who,
                   uint64_t index) {
  const FeatureValue& v = Require(ex, key, who, index);
  if (const Array* a = std::get_if<Array>(&v)) {
    if (a->shape.empty() && a->dtype == Array::DType::kFloat32 && a->floats.size() == 1)
      return a->floats[0];
  }
  if (!std::holds_alternative<std::string>(v)) {
    try {
      return static_cast<float>(RequireInt(ex, key, who, index));
    } catch (const Error&) {
    }
  }
  WrongType(v, key, who, index, "a float32 scalar");
}

const Tokens& RequireTokens(const Example& ex, const std::string& key, const char* who,
                            uint64_t index) {
  const FeatureValue& v = Require(ex, key, who, index);
  if (const Tokens* t = std::get_if<Tokens>(&v)) return *t;
  WrongType(v, key, who, index, "int32 tokens (run seqio.preprocessors.tokenize first)");
}

bool HasTopLevel(const Example& ex, const std::string& name) {
  if (ex.count(name)) return true;
  auto it = ex.lower_bound(name + "/");
  return it != ex.end() && it->first.compare(0, name.size() + 1, name + "/") == 0;
}

std::vector<std::string> TopLevelNames(const Example& ex) {
  std::set<std::string> names;
  for (const auto& kv : ex) names.insert(kv.first.substr(0, kv.first.find('/')));
  return {names.begin(), names.end()};
}

namespace {
bool IsRe2Space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}
bool IsAsciiPunct(unsigned char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
         (c >= '{' && c <= '~');
}
bool IsWordChar(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         c == '_';
}
}  // namespace

std::string CollapseWhitespace(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (IsRe2Space(s[i])) {
      out += ' ';
      while (i < s.size() && IsRe2Space(s[i])) ++i;
    } else {
      out += s[i++];
    }
  }
  return out;
}

std::string PadPunctuation(const std::string& s) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  for (char c : s) {
    if (IsAsciiPunct(static_cast<unsigned char>(c))) {
      out += ' ';
      out += c;
      out += ' ';
    } else {
      out += c;
    }
  }
  return CollapseWhitespace(out);
}

std::string StringJoin(const std::vector<std::string>& parts) {
  return CollapseWhitespace(JoinOnSpace(parts));
}

std::string AsciiLower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

std::string NonWordToSpace(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += IsWordChar(c) ? s[i] : ' ';
      ++i;
      continue;
    }
    const Utf8Char u = DecodeUtf8Char(s, i);
    out += ' ';
    i += u.length == 0 ? 1 : u.length;
  }
  return out;
}

std::vector<std::string> SplitOnSpace(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(' ', start);
    if (pos == std::string::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string JoinOnSpace(const std::vector<std::string>& pieces, size_t begin, size_t end) {
  std::string out;
  end = std::min(end, pieces.size());
  for (size_t i = begin; i < end; ++i) {
    if (i > begin) out += ' ';
    out += pieces[i];
  }
  return out;
}

std::string ReplaceAll(const std::string& s, const std::string& from, const std::string& to) {
  T5XX_CHECK(!from.empty(), "ReplaceAll: empty pattern");
  std::string out;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(from, start);
    if (pos == std::string::npos) break;
    out.append(s, start, pos - start);
    out += to;
    start = pos + from.size();
  }
  out.append(s, start, std::string::npos);
  return out;
}

}  // namespace t5xx::seqio::catalog
