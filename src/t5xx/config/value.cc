// t5xx::gin::Value and Location -- the implementation of value.h.
#include "t5xx/config/value.h"

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "t5xx/util/error.h"
#include "t5xx/util/utf8.h"

namespace t5xx::gin {

std::string Location::ToString() const {
  if (line > 0) {
    std::string s = file + ":" + std::to_string(line);
    if (column > 0) s += ":" + std::to_string(column);
    return s;
  }
  if (column > 0) return file + ", column " + std::to_string(column);
  return file;
}

// Each factory starts from a None value and sets the private fields.
#define T5XX_GIN_FACTORY_BEGIN(KIND) \
  Value v;                           \
  v.kind_ = Kind::KIND;              \
  v.loc_ = std::move(loc);

Value Value::None(Location loc) {
  T5XX_GIN_FACTORY_BEGIN(kNone)
  return v;
}
Value Value::Bool(bool b, Location loc) {
  T5XX_GIN_FACTORY_BEGIN(kBool)
  v.bool_ = b;
  return v;
}
Value Value::Int(int64_t i, Location loc) {
  T5XX_GIN_FACTORY_BEGIN(kInt)
  v.int_ = i;
  return v;
}
Value Value::Float(double f, Location loc) {
  T5XX_GIN_FACTORY_BEGIN(kFloat)
  v.float_ = f;
  return v;
}
Value Value::String(std::string s, Location loc) {
  T5XX_GIN_FACTORY_BEGIN(kString)
  v.str_ = std::move(s);
  return v;
}
Value Value::List(std::vector<Value> items, Location loc) {
  T5XX_GIN_FACTORY_BEGIN(kList)
  v.items_ = std::move(items);
  return v;
}
Value Value::Tuple(std::vector<Value> items, Location loc) {
  T5XX_GIN_FACTORY_BEGIN(kTuple)
  v.items_ = std::move(items);
  return v;
}
Value Value::Dict(std::vector<std::pair<Value, Value>> items, Location loc) {
  T5XX_GIN_FACTORY_BEGIN(kDict)
  v.dict_ = std::move(items);
  return v;
}
Value Value::Reference(std::string name, std::string scope, bool evaluated,
                       Location loc) {
  T5XX_GIN_FACTORY_BEGIN(kReference)
  v.str_ = std::move(name);
  v.scope_ = std::move(scope);
  v.evaluated_ = evaluated;
  return v;
}
Value Value::Macro(std::string name, Location loc) {
  T5XX_GIN_FACTORY_BEGIN(kMacro)
  v.str_ = std::move(name);
  return v;
}
Value Value::Required(Location loc) {
  T5XX_GIN_FACTORY_BEGIN(kRequired)
  return v;
}
#undef T5XX_GIN_FACTORY_BEGIN

const char* Value::KindName(Kind kind) {
  switch (kind) {
    case Kind::kNone: return "None";
    case Kind::kBool: return "a bool";
    case Kind::kInt: return "an int";
    case Kind::kFloat: return "a float";
    case Kind::kString: return "a string";
    case Kind::kList: return "a list";
    case Kind::kTuple: return "a tuple";
    case Kind::kDict: return "a dict";
    case Kind::kReference: return "a reference";
    case Kind::kMacro: return "a macro";
    case Kind::kRequired: return "%gin.REQUIRED";
  }
  return "a value";
}

void Value::ThrowWrongKind(const char* expected) const {
  std::string text = ToGinString();
  if (text.size() > 80) text = std::string(TruncateUtf8(text, 77)) + "...";
  std::string msg = loc_.ToString();
  if (!msg.empty()) msg += ": ";
  msg += std::string("expected ") + expected;
  if (!description_.empty()) msg += " for " + description_;
  msg += ", got ";
  msg += kind_ == Kind::kString ? text : "'" + text + "'";
  msg += std::string(" (") + KindName(kind_) + ")";
  throw Error(msg);
}

bool Value::AsBool() const {
  if (kind_ != Kind::kBool) ThrowWrongKind("a bool");
  return bool_;
}
int64_t Value::AsInt() const {
  if (kind_ != Kind::kInt) ThrowWrongKind("an int");
  return int_;
}
double Value::AsFloat() const {
  if (kind_ == Kind::kInt) return static_cast<double>(int_);
  if (kind_ != Kind::kFloat) ThrowWrongKind("a float");
  return float_;
}
const std::string& Value::AsString() const {
  if (kind_ != Kind::kString) ThrowWrongKind("a string");
  return str_;
}
const std::vector<Value>& Value::AsList() const {
  if (kind_ != Kind::kList && kind_ != Kind::kTuple) ThrowWrongKind("a list or tuple");
  return items_;
}
const std::vector<std::pair<Value, Value>>& Value::AsDict() const {
  if (kind_ != Kind::kDict) ThrowWrongKind("a dict");
  return dict_;
}
const std::string& Value::reference_name() const {
  if (kind_ != Kind::kReference) ThrowWrongKind("a reference");
  return str_;
}
const std::string& Value::reference_scope() const {
  if (kind_ != Kind::kReference) ThrowWrongKind("a reference");
  return scope_;
}
bool Value::reference_evaluated() const {
  if (kind_ != Kind::kReference) ThrowWrongKind("a reference");
  return evaluated_;
}
const std::string& Value::macro_name() const {
  if (kind_ != Kind::kMacro) ThrowWrongKind("a macro");
  return str_;
}

std::string QuoteGinString(const std::string& s) {
  // Python repr style: prefer single quotes unless the text has ' and no ".
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char q = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c == static_cast<unsigned char>(q)) {
          out += '\\';
          out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);  // UTF-8 bytes pass through
        }
    }
  }
  out += q;
  return out;
}

std::string FormatGinFloat(double v) {
  if (std::isnan(v)) return "float('nan')";  // not parseable; never produced by the parser
  if (std::isinf(v)) return v > 0 ? "1e999" : "-1e999";
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string Value::ToGinString() const {
  switch (kind_) {
    case Kind::kNone: return "None";
    case Kind::kBool: return bool_ ? "True" : "False";
    case Kind::kInt: return std::to_string(int_);
    case Kind::kFloat: return FormatGinFloat(float_);
    case Kind::kString: return QuoteGinString(str_);
    case Kind::kList:
    case Kind::kTuple: {
      bool list = kind_ == Kind::kList;
      std::string out = list ? "[" : "(";
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) out += ", ";
        out += items_[i].ToGinString();
      }
      if (!list && items_.size() == 1) out += ",";
      out += list ? "]" : ")";
      return out;
    }
    case Kind::kDict: {
      std::string out = "{";
      for (size_t i = 0; i < dict_.size(); ++i) {
        if (i) out += ", ";
        out += dict_[i].first.ToGinString() + ": " + dict_[i].second.ToGinString();
      }
      return out + "}";
    }
    case Kind::kReference: {
      std::string out = "@";
      if (!scope_.empty()) out += scope_ + "/";
      out += str_;
      if (evaluated_) out += "()";
      return out;
    }
    case Kind::kMacro: return "%" + str_;
    case Kind::kRequired: return "%gin.REQUIRED";
  }
  return "None";
}

bool Value::operator==(const Value& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::kNone:
    case Kind::kRequired: return true;
    case Kind::kBool: return bool_ == o.bool_;
    case Kind::kInt: return int_ == o.int_;
    case Kind::kFloat: return float_ == o.float_;
    case Kind::kString:
    case Kind::kMacro: return str_ == o.str_;
    case Kind::kList:
    case Kind::kTuple: return items_ == o.items_;
    case Kind::kDict: return dict_ == o.dict_;
    case Kind::kReference:
      return str_ == o.str_ && scope_ == o.scope_ && evaluated_ == o.evaluated_;
  }
  return false;
}

// Whether two dict keys are one key of a Python dict: equal numbers (True,
// 1 and 1.0 are one key), equal strings, None, or tuples of such keys.
bool SamePythonDictKey(const Value& a, const Value& b) {
  using K = Value::Kind;
  auto number = [](const Value& v, double* out) {
    if (v.kind() == K::kBool) *out = v.AsBool() ? 1.0 : 0.0;
    else if (v.kind() == K::kInt) *out = static_cast<double>(v.AsInt());
    else if (v.kind() == K::kFloat) *out = v.AsFloat();
    else return false;
    return true;
  };
  double x = 0, y = 0;
  if (number(a, &x) && number(b, &y)) {
    if (a.kind() == K::kInt && b.kind() == K::kInt) return a.AsInt() == b.AsInt();
    return x == y;
  }
  if (a.kind() != b.kind()) return false;
  if (a.kind() == K::kTuple) {
    const auto& l = a.AsList();
    const auto& r = b.AsList();
    if (l.size() != r.size()) return false;
    for (size_t i = 0; i < l.size(); ++i) {
      if (!SamePythonDictKey(l[i], r[i])) return false;
    }
    return true;
  }
  if (a.kind() == K::kString || a.kind() == K::kNone || a.kind() == K::kMacro) return a == b;
  // gin's references compare by configurable and hash by their text.
  if (a.kind() == K::kReference) return a.ToGinString() == b.ToGinString();
  return false;  // lists and dicts cannot be keys
}

std::vector<std::pair<Value, Value>> PythonDictItems(const std::vector<std::pair<Value, Value>>& items) {
  std::vector<std::pair<Value, Value>> out;
  for (const auto& kv : items) {
    auto same = std::find_if(out.begin(), out.end(),
                             [&](const auto& o) { return SamePythonDictKey(o.first, kv.first); });
    if (same != out.end()) {
      same->second = kv.second;
    } else {
      out.push_back(kv);
    }
  }
  return out;
}

}  // namespace t5xx::gin
