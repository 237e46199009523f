// How gin bindings are named and found: keys, scope fallback, locations.
#include "t5xx/config/binding_key.h"

#include "t5xx/util/names.h"

namespace t5xx::gin {

std::string KeyName(const std::string& scope, const std::string& configurable,
                    const std::string& param) {
  return JoinName(scope, configurable + "." + param);
}

std::vector<std::string> ScopePrefixes(const std::string& scope) {
  std::vector<std::string> out;
  std::string s = scope;
  while (!s.empty()) {
    out.push_back(s);
    size_t slash = s.rfind('/');
    s = slash == std::string::npos ? "" : s.substr(0, slash);
  }
  out.push_back("");
  return out;
}

std::string LineOf(const Location& loc) {
  return loc.line > 0 ? loc.file + ":" + std::to_string(loc.line) : loc.file;
}

void ForEachLeaf(const Value& v, const std::function<void(const Value&)>& fn) {
  if (v.kind() == Value::Kind::kList || v.kind() == Value::Kind::kTuple) {
    for (const Value& item : v.AsList()) ForEachLeaf(item, fn);
  } else if (v.kind() == Value::Kind::kDict) {
    for (const auto& [k, val] : v.AsDict()) {
      ForEachLeaf(k, fn);
      ForEachLeaf(val, fn);
    }
  } else {
    fn(v);
  }
}

}  // namespace t5xx::gin
