// Registry of configurables -- the implementation of registry.h.
#include "t5xx/config/registry.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "t5xx/util/error.h"
#include "t5xx/util/names.h"
#include "t5xx/util/utf8.h"

namespace t5xx::gin {

namespace {

bool IsOptional(ParamType t) {
  switch (t) {
    case ParamType::kOptionalBool:
    case ParamType::kOptionalInt:
    case ParamType::kOptionalFloat:
    case ParamType::kOptionalString:
    case ParamType::kOptionalReference:
    case ParamType::kOptionalList:
    case ParamType::kOptionalDict:
      return true;
    default:
      return false;
  }
}

ParamType BaseType(ParamType t) {
  switch (t) {
    case ParamType::kOptionalBool: return ParamType::kBool;
    case ParamType::kOptionalInt: return ParamType::kInt;
    case ParamType::kOptionalFloat: return ParamType::kFloat;
    case ParamType::kOptionalString: return ParamType::kString;
    case ParamType::kOptionalReference: return ParamType::kReference;
    case ParamType::kOptionalList: return ParamType::kList;
    case ParamType::kOptionalDict: return ParamType::kDict;
    default: return t;
  }
}

bool IsValidDottedName(const std::string& name) {
  if (name.empty()) return false;
  bool at_start = true;
  for (char c : name) {
    if (c == '.') {
      if (at_start) return false;
      at_start = true;
      continue;
    }
    if (at_start && std::isdigit(static_cast<unsigned char>(c))) return false;
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    at_start = false;
  }
  return !at_start;
}

std::string JoinDots(const std::vector<std::string>& parts, size_t begin, size_t end) {
  std::string s;
  for (size_t i = begin; i < end; ++i) s += (i > begin ? "." : "") + parts[i];
  return s;
}

}  // namespace

std::string ParamTypeName(ParamType type) {
  std::string base;
  switch (BaseType(type)) {
    case ParamType::kAny: return "any value";
    case ParamType::kBool: base = "a bool"; break;
    case ParamType::kInt: base = "an int"; break;
    case ParamType::kFloat: base = "a float"; break;
    case ParamType::kString: base = "a string"; break;
    case ParamType::kReference: base = "a reference (@name or @name())"; break;
    case ParamType::kList: base = "a list or tuple"; break;
    case ParamType::kDict: base = "a dict"; break;
    default: base = "a value"; break;
  }
  return IsOptional(type) ? base + " or None" : base;
}

const ParamSpec* ConfigurableSpec::FindParam(const std::string& param) const {
  for (const ParamSpec& p : params) {
    if (p.name == param) return &p;
  }
  return nullptr;
}

std::string CheckParamValue(const ParamSpec& spec, const Value& value, const std::string& what) {
  using K = Value::Kind;
  const K k = value.kind();
  if (k == K::kString && !spec.allowed_strings.empty()) {
    for (const std::string& s : spec.allowed_strings) {
      if (value.AsString() == s) return "";
    }
  }
  bool ok = false;
  if (k == K::kNone && IsOptional(spec.type)) {
    ok = true;
  } else {
    switch (BaseType(spec.type)) {
      case ParamType::kAny: ok = k != K::kMacro && k != K::kRequired; break;
      case ParamType::kBool: ok = k == K::kBool; break;
      case ParamType::kInt: ok = k == K::kInt; break;
      case ParamType::kFloat: ok = k == K::kFloat || k == K::kInt; break;
      case ParamType::kString: ok = k == K::kString; break;
      case ParamType::kReference: ok = k == K::kReference; break;
      case ParamType::kList: ok = k == K::kList || k == K::kTuple; break;
      case ParamType::kDict: ok = k == K::kDict; break;
      default: break;
    }
  }
  if (ok) return "";
  std::string expected = ParamTypeName(spec.type);
  if (!spec.allowed_strings.empty()) {
    expected += " or one of";
    for (size_t i = 0; i < spec.allowed_strings.size(); ++i) {
      expected += (i ? ", '" : " '") + spec.allowed_strings[i] + "'";
    }
  }
  std::string text = value.ToGinString();
  if (text.size() > 80) text = std::string(TruncateUtf8(text, 77)) + "...";
  if (k != K::kString) text = "'" + text + "'";
  if (!what.empty()) expected += " for " + what;
  return "expected " + expected + ", got " + text + " (" + Value::KindName(k) + ")";
}

void Registry::Register(ConfigurableSpec spec) {
  if (!IsValidDottedName(spec.name)) {
    throw Error("gin registry: invalid configurable name '" + spec.name + "'");
  }
  if (specs_.count(spec.name)) {
    throw Error("gin registry: configurable '" + spec.name + "' is registered twice");
  }
  std::set<std::string> seen;
  for (const ParamSpec& p : spec.params) {
    if (!IsValidDottedName(p.name) || p.name.find('.') != std::string::npos) {
      throw Error("gin registry: invalid parameter name '" + p.name + "' in '" + spec.name + "'");
    }
    if (!seen.insert(p.name).second) {
      throw Error("gin registry: parameter '" + p.name + "' of '" + spec.name + "' is registered twice");
    }
    if (!p.required) {
      std::string err = CheckParamValue(p, p.default_value);
      if (!err.empty()) {
        throw Error("gin registry: default of '" + spec.name + "." + p.name + "': " + err);
      }
    }
  }
  std::string name = spec.name;
  specs_.emplace(std::move(name), std::move(spec));
}

const ConfigurableSpec* Registry::Find(const std::string& full_name) const {
  auto it = specs_.find(full_name);
  return it == specs_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> out;
  for (const auto& kv : specs_) out.push_back(kv.first);
  return out;
}

Registry::Resolution Registry::Resolve(const std::string& name,
                                       const std::map<std::string, std::string>& aliases) const {
  Resolution r;
  if (specs_.count(name)) {
    r.full_name = name;
    return r;
  }
  std::vector<std::string> parts = SplitName(name);
  // Longest alias prefix first ("t5x.utils" before "t5x").
  for (size_t n = parts.size() - 1; n >= 1; --n) {
    auto it = aliases.find(JoinDots(parts, 0, n));
    if (it == aliases.end()) continue;
    std::string expanded = it->second + "." + JoinDots(parts, n, parts.size());
    if (specs_.count(expanded)) {
      r.full_name = expanded;
      return r;
    }
  }
  std::vector<std::string> matches;
  const std::string suffix = "." + name;
  for (const auto& kv : specs_) {
    const std::string& full = kv.first;
    if (full.size() > suffix.size() &&
        full.compare(full.size() - suffix.size(), suffix.size(), suffix) == 0) {
      matches.push_back(full);
    }
  }
  if (matches.size() == 1) {
    r.full_name = matches[0];
    return r;
  }
  if (matches.size() > 1) {
    r.error = "ambiguous configurable name '" + name + "': it could be";
    for (size_t i = 0; i < matches.size(); ++i) r.error += (i ? ", '" : " '") + matches[i] + "'";
    r.error += "; write more of the name";
    return r;
  }
  r.error = "unknown configurable '" + name + "'";
  std::string suggestion = SuggestName(name, aliases);
  if (!suggestion.empty()) r.error += "; did you mean '" + suggestion + "'?";
  return r;
}

std::string Registry::SuggestName(const std::string& name,
                                  const std::map<std::string, std::string>& aliases) const {
  // Compare the name as written against every registered name written the
  // same way: with the alias the user used, or as a suffix of equal length.
  std::vector<std::string> parts = SplitName(name);
  std::string best;
  size_t best_d = std::max<size_t>(2, name.size() / 3) + 1;
  auto consider = [&](const std::string& written, const std::string& shown) {
    const size_t d = EditDistanceWithin(name, written, best_d - 1);
    if (d < best_d) {
      best_d = d;
      best = shown;
    }
  };
  for (const auto& kv : specs_) {
    const std::string& full = kv.first;
    consider(full, full);
    std::vector<std::string> fparts = SplitName(full);
    if (fparts.size() >= parts.size()) {
      consider(JoinDots(fparts, fparts.size() - parts.size(), fparts.size()),
               JoinDots(fparts, fparts.size() - parts.size(), fparts.size()));
    }
    for (const auto& [alias, module] : aliases) {
      if (full.rfind(module + ".", 0) == 0) {
        std::string written = alias + full.substr(module.size());
        consider(written, written);
      }
    }
  }
  return best;
}

void Registry::RefuseModule(const std::string& module, std::string reason) {
  refused_modules_[module] = std::move(reason);
}

std::string Registry::ModuleRefusal(const std::string& module) const {
  for (const auto& [prefix, reason] : refused_modules_) {
    if (module == prefix || module.rfind(prefix + ".", 0) == 0) return reason;
  }
  return "";
}

}  // namespace t5xx::gin
