// Config::Finalize: resolving and checking every binding, macros set on the
// command line that nothing uses, and unset %gin.REQUIRED values a called
// configurable reads (gin/config.py: bind_parameter, finalize, REQUIRED).
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "t5xx/config/binding_key.h"
#include "t5xx/config/config.h"
#include "t5xx/util/edit_distance.h"
#include "t5xx/util/error.h"
#include "t5xx/util/error_list.h"

namespace t5xx::gin {
namespace {

void CollectMacroRefs(const Value& v, std::set<std::string>& out) {
  ForEachLeaf(v, [&out](const Value& leaf) {
    if (leaf.kind() == Value::Kind::kMacro) out.insert(leaf.macro_name());
  });
}

bool IsStringTyped(const ParamSpec& p) {
  return p.type == ParamType::kString || p.type == ParamType::kOptionalString ||
         !p.allowed_strings.empty();
}

}  // namespace

namespace {

// An error at `loc` (none: the message alone).
void Collect(std::vector<std::string>& errors, const Location& loc, const std::string& msg) {
  const std::string where = loc.ToString();
  errors.push_back(where.empty() ? msg : where + ": " + msg);
}

// "unknown parameter 'p' of 'C'" with the closest name or the list.
std::string UnknownParamMessage(const ConfigurableSpec& spec, const std::string& param,
                                const std::string& full_name, const std::string& written) {
  std::vector<std::string> names;
  for (const ParamSpec& p : spec.params) names.push_back(p.name);
  std::string msg = "unknown parameter '" + param + "' of '" + full_name + "' (in binding '" +
                    written + "')";
  std::string near = ClosestName(param, names);
  if (!near.empty()) {
    msg += "; did you mean '" + near + "'?";
  } else if (names.empty()) {
    msg += "; it takes no parameters";
  } else {
    msg += "; its parameters are";
    for (size_t i = 0; i < names.size(); ++i) msg += (i ? ", " : " ") + names[i];
  }
  return msg;
}

}  // namespace

void Config::Finalize(const std::vector<std::string>& called, bool require_overrides) {
  finalized_ = false;
  resolve_budget_ = kMaxResolvedValues;
  suggestions_left_ = kMaxSuggestions;
  bindings_.clear();
  macros_.clear();
  resolved_macros_.clear();
  operative_.clear();
  // Every error is collected and reported together, in the order written
  // (gin reports binding errors at parse time, before any REQUIRED one).
  std::vector<std::string> errors;
  ResolveMacroDefinitions(errors);

  // The record that binds each key last: only its value is resolved (gin
  // keeps the last binding; an earlier one's macros are never evaluated).
  std::map<Key, size_t> last;
  for (size_t i = 0; i < records_.size(); ++i) {
    const Statement& st = records_[i].st;
    if (st.kind != Statement::Kind::kBinding) continue;
    Registry::Resolution r = ResolveName(st.configurable, records_[i].aliases);
    if (r.ok()) last[Key{st.scope, r.full_name, st.param}] = i;
  }
  size_t order = 0;
  for (size_t index = 0; index < records_.size(); ++index) {
    if (records_[index].st.kind == Statement::Kind::kBinding) {
      BindRecord(index, last, order, errors);
    }
  }
  CollectEnteredScopes();

  // Macros set on the command line that no binding uses (typos).
  for (std::string& m : UnusedFlagMacros()) errors.push_back(std::move(m));
  // Reference cycles, and unset %gin.REQUIRED values the calls read.
  std::vector<std::pair<std::string, std::string>> missing = WalkCalls(called, &errors);
  if (require_overrides) AddUnsetRequired(&missing);
  if (!missing.empty()) errors.push_back(RequiredMessage(missing));
  ThrowIfAny(errors, "the gin config");
  finalized_ = true;
}

void Config::ResolveMacroDefinitions(std::vector<std::string>& errors) {
  // Macros first: later definitions win, and bindings may use macros defined
  // after them. An unset %gin.REQUIRED macro is not an error here: only a
  // called configurable reading it is (Query), as in gin.
  for (const Record& rec : records_) {
    if (rec.st.kind == Statement::Kind::kMacro) {
      MacroDef& def = macros_[rec.st.param];
      def = {rec.st.value, rec.st.loc, rec.aliases, {}};
      CollectMacroRefs(rec.st.value, def.macros);
    }
  }
  // gin builds every reference when it parses it: each must name a
  // configurable, even in a binding overridden later or a dict entry a
  // repeated key replaces.
  for (const Record& rec : records_) {
    if (!rec.string_fallback) CheckReferences(rec.st.value, rec.aliases, errors);
  }
  // gin's finalize validates every macro reference in the final bindings
  // and macro definitions (validate_macros_hook): an undefined macro is an
  // error here, read or not; a cycle only where a called configurable reads
  // it (see MacroCycleError).
  for (const auto& kv : macros_) CheckMacros(kv.second.value, errors);
  for (const auto& kv : macros_) {
    std::vector<std::string> stack{kv.first};
    try {
      resolved_macros_[kv.first] = ResolveValue(kv.second.value, stack, nullptr, kv.second.aliases);
    } catch (const MacroCycleError&) {
      // reported where it is read
    } catch (const UndefinedMacroError&) {
      // reported by CheckMacros
    } catch (const Error& e) {
      errors.push_back(e.what());
    }
  }
}

std::string Config::MacroValueNote(const Statement& st) const {
  if (st.value.kind() != Value::Kind::kMacro) return "";
  const MacroDef& def = macros_.at(st.value.macro_name());
  std::string note = " (from macro %" + st.value.macro_name() + " set at " + def.loc.ToString() + ")";
  // Set by a flag whose value was not gin (e.g. an integer too large for
  // int64): say why it became a string.
  for (auto r = records_.rbegin(); r != records_.rend(); ++r) {
    if (r->st.kind != Statement::Kind::kMacro || r->st.param != st.value.macro_name()) continue;
    if (!r->fallback_error.empty()) note += "; the flag's value is not gin: " + r->fallback_error;
    break;
  }
  return note;
}

void Config::BindRecord(size_t index, const std::map<Key, size_t>& last, size_t& order,
                        std::vector<std::string>& errors) {
  const Record& rec = records_[index];
  const Statement& st = rec.st;
  const std::string written = KeyName(st.scope, st.configurable, st.param);
  Registry::Resolution r = ResolveName(st.configurable, rec.aliases);
  if (!r.ok()) {
    Collect(errors, st.loc, r.error + " (in binding '" + written + "')");
    return;
  }
  const ConfigurableSpec* spec = registry_->Find(r.full_name);
  const ParamSpec* ps = spec->FindParam(st.param);
  if (ps == nullptr) {
    Collect(errors, st.loc, UnknownParamMessage(*spec, st.param, r.full_name, written));
    return;
  }
  const std::string full_param = KeyName(st.scope, r.full_name, st.param);
  if (last.at(Key{st.scope, r.full_name, st.param}) != index) return;
  Value value;
  std::vector<std::string> required;
  std::string lazy_error;
  if (rec.string_fallback) {
    if (!IsStringTyped(*ps)) {
      errors.push_back(rec.fallback_error + " (value for '" + written + "', which takes " +
                       ParamTypeName(ps->type) + ")");
      return;
    }
    value = st.value;
  } else {
    std::vector<std::string> stack;
    if (!CheckMacros(st.value, errors)) return;
    try {
      value = ResolveValue(st.value, stack, &required, rec.aliases);
    } catch (const UndefinedMacroError&) {
      return;  // reported by CheckMacros (a macro's own value)
    } catch (const MacroCycleError& e) {
      lazy_error = std::string(e.what()) + " (in the value of " + written + " at " +
                   st.loc.ToString() + "; gin would recurse without end)";
      required.clear();
    } catch (const Error& e) {
      errors.push_back(e.what());
      return;
    }
  }
  // A value holding %gin.REQUIRED is checked where it is read.
  if (required.empty() && lazy_error.empty()) {
    const std::string err = CheckParamValue(*ps, value, full_param);
    if (!err.empty()) {
      Collect(errors,
              st.value.kind() == Value::Kind::kMacro ? st.value.location() : value.location(),
              err + MacroValueNote(st));
      return;
    }
  }
  Bound& b = bindings_[Key{st.scope, r.full_name, st.param}];
  b.value = std::move(value);
  b.loc = st.loc;
  b.order = order++;
  b.used = false;
  b.required_macros = std::move(required);
  b.lazy_error = std::move(lazy_error);
  b.macros.clear();
  CollectMacroRefs(st.value, b.macros);
}

void Config::CollectEnteredScopes() {
  // Scopes some reference enters (@scope/x), in any value ever written
  // (overridden ones too: train_eval/ stays a known scope when
  // train_eval_dataset_cfg is set to None), with their outer scopes.
  entered_scopes_.clear();
  for (const Record& rec : records_) {
    ForEachLeaf(rec.st.value, [this](const Value& leaf) {
      // %M calls its value in scope M (gin's @M/gin.macro()).
      const bool macro = leaf.kind() == Value::Kind::kMacro;
      if (leaf.kind() != Value::Kind::kReference && !macro) return;
      for (const std::string& sc :
           ScopePrefixes(macro ? leaf.macro_name() : leaf.reference_scope())) {
        if (!sc.empty()) entered_scopes_.insert(sc);
      }
    });
  }
}

std::string Config::ScopedMacroHint(const std::string& name) const {
  const size_t slash = name.rfind('/');
  if (slash == std::string::npos) return "";
  const std::string scope = name.substr(0, slash), plain = name.substr(slash + 1);
  // The parameters %plain sets, in that scope (unscoped ones taken into it).
  std::set<std::string> params;
  for (const Record& rec : records_) {
    if (rec.st.kind != Statement::Kind::kBinding) continue;
    std::set<std::string> refs;
    CollectMacroRefs(rec.st.value, refs);
    const std::string& bscope = rec.st.scope;
    const bool in_scope = bscope.empty() || bscope == scope || bscope.rfind(scope + "/", 0) == 0;
    if (!refs.count(plain) || !in_scope) continue;
    const Registry::Resolution r = ResolveName(rec.st.configurable, rec.aliases);
    params.insert(KeyName(bscope.empty() ? scope : bscope,
                          r.ok() ? r.full_name : rec.st.configurable, rec.st.param));
  }
  std::string list;
  for (const std::string& p : params) list += (list.empty() ? "" : ", ") + p;
  return ": it is a scoped macro, and gin evaluates %" + plain + " in scope " + plain +
         " whatever scope reads it, so only %" + name + " would read it, and %" + plain +
         " keeps the value of '" + plain + " = ...'" +
         (list.empty() ? "" : "; to set it in scope " + scope + ", bind " + list);
}

std::vector<std::string> Config::UnusedFlagMacros() const {
  // Macros reachable from any binding, directly or through other macros.
  std::set<std::string> referenced;
  for (const Record& rec : records_) {
    if (rec.st.kind == Statement::Kind::kBinding) CollectMacroRefs(rec.st.value, referenced);
  }
  std::vector<std::string> frontier(referenced.begin(), referenced.end());
  while (!frontier.empty()) {
    const std::string name = frontier.back();
    frontier.pop_back();
    auto it = macros_.find(name);
    if (it == macros_.end()) continue;
    std::set<std::string> inner;
    CollectMacroRefs(it->second.value, inner);
    for (const auto& m : inner) {
      if (referenced.insert(m).second) frontier.push_back(m);
    }
  }
  std::vector<std::string> names;
  for (const auto& kv : macros_) names.push_back(kv.first);
  std::vector<std::string> out;
  for (const auto& [name, def] : macros_) {
    // Only --gin.NAME=VALUE flags (t5x's sugar, where a misspelt name is
    // easiest to miss): --gin_bindings text follows gin, which accepts an
    // unused macro.
    if (referenced.count(name) || def.loc.file.rfind("--gin.", 0) != 0) continue;
    std::string near;
    if (suggestions_left_ > 0) {  // see kMaxSuggestions
      --suggestions_left_;
      near = ClosestName(name, names);
    }
    const std::string scoped = ScopedMacroHint(name);
    out.push_back(def.loc.ToString() + ": macro " + name + " is never used" +
                  (!scoped.empty() ? scoped
                   : near.empty() ? ""
                                  : " (did you mean '" + near + "'?)"));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> Config::WalkCalls(
    const std::vector<std::string>& called, std::vector<std::string>* errors) const {
  // Depth first over (configurable, scope) -- the calls gin makes: `called`
  // at top level, each evaluated reference (@x(), through bound or default
  // values) while its caller's bindings are copied, in the scope CallScope
  // gives; a callable (@x) later, at top level, with a stack of its own.
  // A call reached again while it is on the stack is gin's endless
  // recursion (RecursionError): an error naming each link.
  std::vector<std::pair<std::string, std::string>> missing;
  using Node = std::pair<std::string, std::string>;  // (name, scope)
  std::set<Node> done;
  std::vector<Node> stack;
  std::vector<std::string> links;  // links[i]: how stack[i] called stack[i + 1]
  std::vector<Node> later;         // callables, called at top level
  std::set<std::string> reported;  // cycles already named (by their first node)
  std::function<void(const Node&)> visit = [&](const Node& node) {
    if (done.count(node)) return;
    auto on_stack = std::find(stack.begin(), stack.end(), node);
    if (on_stack != stack.end()) {
      const size_t first = static_cast<size_t>(on_stack - stack.begin());
      const std::string id = KeyName(node.second, node.first, "");
      if (!reported.insert(id).second) return;
      std::string chain;
      for (size_t i = first; i < links.size(); ++i) chain += (i > first ? "; then " : "") + links[i];
      errors->push_back("gin reference cycle: " + chain + ", which calls " +
                        (node.second.empty() ? "" : node.second + "/") + node.first +
                        " again (gin would recurse without end); break the cycle");
      return;
    }
    if (stack.size() >= kMaxCallDepth) {
      if (reported.insert("depth").second) {
        errors->push_back(links.back() + ": references are nested more than " +
                          std::to_string(kMaxCallDepth) + " calls deep (the limit)");
      }
      return;
    }
    const ConfigurableSpec* spec = registry_->Find(node.first);
    if (spec == nullptr) return;
    stack.push_back(node);
    for (const ParamSpec& p : spec->params) {
      const Bound* b = FindBound(node.first, p.name, node.second);
      const std::string key = KeyName(node.second, node.first, p.name);
      if (b != nullptr && !b->lazy_error.empty()) {
        if (reported.insert(b->lazy_error).second) errors->push_back(b->lazy_error);
        continue;
      }
      if (b != nullptr) {
        for (auto& entry : RequiredEntries(*b, key)) {
          if (std::find(missing.begin(), missing.end(), entry) == missing.end()) {
            missing.push_back(std::move(entry));
          }
        }
      }
      ForEachLeaf(b ? b->value : p.default_value, [&](const Value& leaf) {
        if (leaf.kind() != Value::Kind::kReference) return;
        const Node next{leaf.reference_name(), CallScope(node.second, leaf)};
        if (!leaf.reference_evaluated()) {
          later.push_back(next);
          return;
        }
        const std::string at = leaf.location().ToString();
        // Through a macro the reference is written elsewhere than the
        // binding: name both (the binding closes the loop).
        const std::string bound_at = b != nullptr ? b->loc.ToString() : "";
        links.push_back(key + " = " + leaf.ToGinString() + (at.empty() ? "" : " at " + at) +
                        (bound_at.empty() || bound_at == at ? "" : " (bound at " + bound_at + ")"));
        visit(next);
        links.pop_back();
      });
    }
    stack.pop_back();
    done.insert(node);
  };
  for (const std::string& c : called) visit(Node{c, ""});
  while (!later.empty()) {
    const Node node = later.back();
    later.pop_back();
    visit(node);
  }
  return missing;
}

void Config::CheckReferences(const Value& v, size_t aliases,
                             std::vector<std::string>& errors) const {
  ForEachLeaf(v, [&](const Value& leaf) {
    if (leaf.kind() != Value::Kind::kReference) return;
    const Registry::Resolution r = ResolveName(leaf.reference_name(), aliases);
    if (!r.ok()) {
      errors.push_back(leaf.location().ToString() + ": " + r.error + " (in reference '" +
                       leaf.ToGinString() + "')");
    }
  });
}

void Config::AddUnsetRequired(std::vector<std::pair<std::string, std::string>>* missing) const {
  // gin's finalize hook (find_missing_overrides_hook), which t5x runs: every
  // binding and macro whose final value is %gin.REQUIRED itself is an error,
  // read or not. (Inside a list or dict gin passes REQUIRED on; t5xx refuses
  // it where it is read, above.)
  auto listed = [&](const std::string& macro, const std::string& at) {
    for (const auto& [m, reader] : *missing) {
      if (!macro.empty() ? m == macro : (m.empty() && reader.rfind(at + ":", 0) == 0)) return true;
    }
    return false;
  };
  for (const auto& [name, def] : macros_) {
    if (def.value.kind() == Value::Kind::kRequired && !listed(name, "")) {
      missing->emplace_back(name, "");
    }
  }
  std::vector<std::pair<size_t, std::pair<std::string, std::string>>> direct;
  for (const auto& [key, b] : bindings_) {
    const auto& [scope, name, param] = key;
    if (b.value.kind() != Value::Kind::kRequired ||
        (!b.required_macros.empty() && !b.required_macros.front().empty())) {
      continue;
    }
    const std::string at = b.value.location().ToString();
    if (listed("", at)) continue;
    const std::string k = KeyName(scope, name, param);
    direct.push_back({b.order, {"", at + ": " + k + " is %gin.REQUIRED and was never overridden "
                                 "(t5x's gin refuses it even where nothing reads it); bind it "
                                 "in a gin file or with --gin." + k + "=<value>"}});
  }
  std::sort(direct.begin(), direct.end());
  for (auto& d : direct) missing->push_back(std::move(d.second));
}

std::vector<std::pair<std::string, std::string>> Config::RequiredEntries(
    const Bound& b, const std::string& key) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& m : b.required_macros) {
    if (m.empty()) {  // bound directly: the whole message, at its %gin.REQUIRED
      out.emplace_back("", b.value.location().ToString() + ": " + key +
                               " is %gin.REQUIRED and was never overridden; bind it in a gin "
                               "file or with --gin." + key + "=<value>");
    } else {
      out.emplace_back(m, key + " at " + b.loc.ToString());
    }
  }
  return out;
}

std::string Config::RequiredMessage(const std::vector<std::pair<std::string, std::string>>& missing) const {
  // missing: (macro, reader "scope/configurable.param at file:line:col"), or
  // ("", the whole message) for a %gin.REQUIRED bound directly.
  std::vector<std::string> macros;
  std::map<std::string, std::string> readers;
  std::vector<std::string> direct;
  for (const auto& [macro, reader] : missing) {
    if (macro.empty()) {
      direct.push_back(reader);
      continue;
    }
    if (!readers.count(macro)) macros.push_back(macro);
    std::string& r = readers[macro];
    if (r.find(reader) == std::string::npos) r += (r.empty() ? "" : ", ") + reader;
  }
  // In the order the macros are defined (their last definition, which wins).
  std::map<std::string, size_t> defined_at;
  for (size_t i = 0; i < records_.size(); ++i) {
    if (records_[i].st.kind == Statement::Kind::kMacro) defined_at[records_[i].st.param] = i;
  }
  std::stable_sort(macros.begin(), macros.end(), [&](const std::string& a, const std::string& b) {
    return defined_at[FindMacro(a)->first] < defined_at[FindMacro(b)->first];
  });
  auto def = [this](const std::string& m) -> const MacroDef& { return FindMacro(m)->second; };
  // "(read by X)", or why gin refuses a macro nothing reads.
  auto read_by = [&readers](const std::string& m) {
    return readers[m].empty() ? std::string("(nothing this command calls reads it, but t5x's gin "
                                            "refuses an unset %gin.REQUIRED all the same)")
                              : "(read by " + readers[m] + ")";
  };
  std::vector<std::string> parts;
  // A macro whose value holds %gin.REQUIRED inside it (a dict or list) was
  // set; the REQUIRED in it was not.
  std::vector<std::string> inner;
  for (auto it = macros.begin(); it != macros.end();) {
    if (def(*it).value.kind() == Value::Kind::kRequired) {
      ++it;
      continue;
    }
    inner.push_back(*it);
    it = macros.erase(it);
  }
  for (const std::string& m : inner) {
    parts.push_back(def(m).loc.ToString() + ": macro '" + m + "' = " +
                    def(m).value.ToGinString() + " holds a %gin.REQUIRED that was never "
                    "overridden " + read_by(m) + "; give it a value in place");
  }
  if (macros.size() == 1) {
    const std::string& m = macros[0];
    parts.push_back(def(m).loc.ToString() + ": macro '" + m +
                    "' is %gin.REQUIRED and was never set " + read_by(m) +
                    "; set it in a gin file ('" + m + " = ...') or with --gin." + m + "=<value>");
  } else if (!macros.empty()) {
    std::string msg = def(macros[0]).loc.ToString() + ": macros";
    for (size_t i = 0; i < macros.size(); ++i) msg += (i ? ", '" : " '") + macros[i] + "'";
    msg += " are %gin.REQUIRED and were never set (";
    for (size_t i = 0; i < macros.size(); ++i) {
      msg += (i ? "; " : "") + macros[i] +
             (readers[macros[i]].empty() ? " read by nothing this command calls"
                                         : " read by " + readers[macros[i]]);
    }
    msg += "); set each in a gin file or with --gin.NAME=<value> (e.g. --gin." + macros[0] +
           "=<value>)";
    parts.push_back(msg);
  }
  for (const std::string& d : direct) parts.push_back(d);
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "\n  ") + p;
  return out;
}

}  // namespace t5xx::gin
