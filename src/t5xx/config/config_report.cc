// What a finalized Config reports after the run: the operative config
// (gin.operative_config_str) and the bindings no query read, split into
// unused (likely typos) and ignored (configurables or scopes never called).
#include <algorithm>
#include <map>
#include <tuple>

#include "t5xx/config/binding_key.h"
#include "t5xx/config/config.h"
#include "t5xx/util/edit_distance.h"
#include "t5xx/util/names.h"

namespace t5xx::gin {
namespace {

// The messages of (order written, message) pairs, sorted by that order.
std::vector<std::string> InWrittenOrder(std::vector<std::pair<size_t, std::string>> entries) {
  std::sort(entries.begin(), entries.end());
  std::vector<std::string> out;
  for (auto& e : entries) out.push_back(std::move(e.second));
  return out;
}

}  // namespace

std::string Config::OperativeConfigString() const {
  RequireFinalized("OperativeConfigString");
  std::string out;
  std::string group;
  for (const auto& [key, value] : operative_) {
    const auto& [configurable, scope, param] = key;
    std::string this_group = JoinName(scope, configurable);
    if (this_group != group) {
      if (!out.empty()) out += "\n";
      out += "# Parameters for " + this_group + ":\n";
      group = this_group;
    }
    out += KeyName(scope, configurable, param) + " = " + value.ToGinString() + "\n";
  }
  return out;
}

std::map<std::string, std::string> Config::OperativeValues() const {
  RequireFinalized("OperativeValues");
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : operative_) {
    const auto& [configurable, scope, param] = key;
    out[KeyName(scope, configurable, param)] = value.ToGinString();
  }
  return out;
}

bool Config::Binds(const std::string& full_name) const {
  for (const Record& rec : records_) {
    if (rec.st.kind != Statement::Kind::kBinding) continue;
    const Registry::Resolution r = ResolveName(rec.st.configurable, rec.aliases);
    if (r.ok() && r.full_name == full_name) return true;
  }
  return false;
}

bool Config::Called(const std::string& configurable, const std::string& binding_scope) const {
  auto it = queried_.find(configurable);
  if (it == queried_.end()) return false;
  for (const std::string& q : it->second) {
    for (const std::string& s : ScopePrefixes(q)) {
      if (s == binding_scope) return true;
    }
  }
  return false;
}

bool Config::Shadowed(const Key& key) const {
  const auto& [scope, configurable, param] = key;
  for (const auto& [other, b] : bindings_) {
    const auto& [s2, c2, p2] = other;
    if (!b.used || c2 != configurable || p2 != param || s2 == scope) continue;
    for (const std::string& prefix : ScopePrefixes(s2)) {
      if (prefix == scope) return true;
    }
  }
  return false;
}

bool Config::ScopeEntered(const std::string& scope) const {
  return scope.empty() || entered_scopes_.count(scope) > 0;
}

bool Config::Ignored(const Key& key, const Bound& b) const {
  const auto& [scope, configurable, param] = key;
  if (b.used) return false;
  return (!Called(configurable, scope) && ScopeEntered(scope)) || Shadowed(key);
}

std::vector<std::string> Config::IgnoredBindings() const {
  RequireFinalized("IgnoredBindings");
  std::vector<std::pair<size_t, std::string>> ignored;
  for (const auto& [key, b] : bindings_) {
    if (!Ignored(key, b)) continue;
    const auto& [scope, configurable, param] = key;
    const std::string where = LineOf(b.loc);
    ignored.emplace_back(b.order, where + ": " + KeyName(scope, configurable, param));
  }
  return InWrittenOrder(std::move(ignored));
}

std::vector<std::string> Config::IgnoredConfigurables() const {
  RequireFinalized("IgnoredConfigurables");
  // [scope/]configurable -> (first order, count, first location).
  std::map<std::string, std::tuple<size_t, int, std::string>> groups;
  for (const auto& [key, b] : bindings_) {
    if (!Ignored(key, b)) continue;
    const auto& [scope, configurable, param] = key;
    const std::string name = JoinName(scope, configurable);
    const std::string where = LineOf(b.loc);
    auto it = groups.find(name);
    if (it == groups.end()) {
      groups[name] = {b.order, 1, where};
    } else {
      auto& [order, count, first] = it->second;
      ++count;
      if (b.order < order) {
        order = b.order;
        first = where;
      }
    }
  }
  std::vector<std::pair<size_t, std::string>> sorted;
  for (const auto& [name, g] : groups) {
    const auto& [order, count, first] = g;
    sorted.emplace_back(order, name + " (" + std::to_string(count) +
                                   (count == 1 ? " binding, at " : " bindings, first at ") +
                                   first + ")");
  }
  return InWrittenOrder(std::move(sorted));
}

std::vector<std::string> Config::UnusedBindings() const {
  RequireFinalized("UnusedBindings");
  std::vector<std::pair<size_t, std::string>> unused;
  for (const auto& [key, b] : bindings_) {
    if (b.used || Ignored(key, b)) continue;
    const auto& [scope, configurable, param] = key;
    const std::string where = LineOf(b.loc);
    std::string why;
    if (!ScopeEntered(scope)) {
      std::vector<std::string> known(entered_scopes_.begin(), entered_scopes_.end());
      const std::string near = ClosestName(scope, known);
      why = " (no reference enters scope '" + scope + "'" +
            (near.empty() ? "" : "; did you mean '" + near + "'?") + ")";
    }
    unused.emplace_back(b.order, where + ": " + KeyName(scope, configurable, param) + why);
  }
  return InWrittenOrder(std::move(unused));
}

std::vector<std::string> Config::UnreadMacros() const {
  RequireFinalized("UnreadMacros");
  // Read: named by a binding a configurable read, or asked for by name,
  // and every macro those name in turn.
  std::set<std::string> read(macros_asked_.begin(), macros_asked_.end());
  for (const auto& [key, b] : bindings_) {
    if (b.used) read.insert(b.macros.begin(), b.macros.end());
  }
  std::vector<std::string> frontier(read.begin(), read.end());
  while (!frontier.empty()) {
    auto it = macros_.find(frontier.back());
    frontier.pop_back();
    if (it == macros_.end()) continue;
    for (const std::string& m : it->second.macros) {
      if (read.insert(m).second) frontier.push_back(m);
    }
  }
  std::vector<std::string> lines;
  for (const Record& rec : records_) {  // in the order written
    if (rec.st.kind != Statement::Kind::kMacro) continue;
    const std::string& name = rec.st.param;
    const MacroDef& def = macros_.at(name);
    if (read.count(name) || def.loc.ToString() != rec.st.loc.ToString()) continue;  // read, or overridden
    std::string line = def.loc.ToString() + ": macro " + name + " is never read";
    const std::string scoped = ScopedMacroHint(name);
    line += scoped.empty() ? " (no configurable this run calls reads %" + name + ")" : scoped;
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace t5xx::gin
