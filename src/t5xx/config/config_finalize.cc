// Config::Finalize: resolving and checking every binding, macros set on the
// command line that nothing uses, and unset %gin.REQUIRED values a called
// configurable reads (gin/config.py: bind_parameter, finalize, REQUIRED).
#include <algorithm>
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

void Config::Finalize(const std::vector<std::string>& called) {
  finalized_ = false;
  resolve_budget_ = kMaxResolvedValues;
  suggestions_left_ = kMaxSuggestions;
  bindings_.clear();
  macros_.clear();
  resolved_macros_.clear();
  operative_.clear();
  std::map<std::string, std::string> aliases;
  for (const auto& kv : aliases_) aliases[kv.first] = kv.second.first;

  // Every error is collected and reported together, in the order written
  // (gin reports binding errors at parse time, before any REQUIRED one).
  std::vector<std::string> errors;
  auto collect = [&errors](const Location& loc, const std::string& msg) {
    const std::string where = loc.ToString();
    errors.push_back(where.empty() ? msg : where + ": " + msg);
  };

  // Macros first: later definitions win, and bindings may use macros defined
  // after them. An unset %gin.REQUIRED macro is not an error here: only a
  // called configurable reading it is (Query), as in gin.
  for (const Record& rec : records_) {
    if (rec.st.kind == Statement::Kind::kMacro) macros_[rec.st.param] = {rec.st.value, rec.st.loc};
  }
  for (const auto& kv : macros_) {
    std::vector<std::string> stack{kv.first};
    try {
      resolved_macros_[kv.first] = ResolveValue(kv.second.value, stack, nullptr);
    } catch (const Error& e) {
      errors.push_back(e.what());
    }
  }

  size_t order = 0;
  for (const Record& rec : records_) {
    const Statement& st = rec.st;
    if (st.kind != Statement::Kind::kBinding) continue;
    const std::string written = KeyName(st.scope, st.configurable, st.param);
    Registry::Resolution r = registry_->Resolve(st.configurable, aliases);
    if (!r.ok()) {
      collect(st.loc, r.error + " (in binding '" + written + "')");
      continue;
    }
    const ConfigurableSpec* spec = registry_->Find(r.full_name);
    const ParamSpec* ps = spec->FindParam(st.param);
    if (ps == nullptr) {
      std::vector<std::string> names;
      for (const ParamSpec& p : spec->params) names.push_back(p.name);
      std::string msg = "unknown parameter '" + st.param + "' of '" + r.full_name + "' (in binding '" + written + "')";
      std::string near = ClosestName(st.param, names);
      if (!near.empty()) {
        msg += "; did you mean '" + near + "'?";
      } else if (names.empty()) {
        msg += "; it takes no parameters";
      } else {
        msg += "; its parameters are";
        for (size_t i = 0; i < names.size(); ++i) msg += (i ? ", " : " ") + names[i];
      }
      collect(st.loc, msg);
      continue;
    }
    const std::string full_param = KeyName(st.scope, r.full_name, st.param);
    Value value;
    std::vector<std::string> required;
    if (rec.string_fallback) {
      if (!IsStringTyped(*ps)) {
        errors.push_back(rec.fallback_error + " (value for '" + written + "', which takes " +
                         ParamTypeName(ps->type) + ")");
        continue;
      }
      value = st.value;
    } else {
      std::vector<std::string> stack;
      try {
        value = ResolveValue(st.value, stack, &required);
      } catch (const Error& e) {
        errors.push_back(e.what());
        continue;
      }
    }
    // A value holding %gin.REQUIRED is checked where it is read.
    if (required.empty()) {
      std::string err = CheckParamValue(*ps, value, full_param);
      if (!err.empty()) {
        if (st.value.kind() == Value::Kind::kMacro) {
          const MacroDef& def = macros_.at(st.value.macro_name());
          err += " (from macro %" + st.value.macro_name() + " set at " + def.loc.ToString() + ")";
          // Set by a flag whose value was not gin (e.g. an integer too large
          // for int64): say why it became a string.
          for (auto r = records_.rbegin(); r != records_.rend(); ++r) {
            if (r->st.kind != Statement::Kind::kMacro || r->st.param != st.value.macro_name()) continue;
            if (!r->fallback_error.empty()) err += "; the flag's value is not gin: " + r->fallback_error;
            break;
          }
        }
        collect(st.value.kind() == Value::Kind::kMacro ? st.value.location() : value.location(),
                err);
        continue;
      }
    }
    Bound& b = bindings_[Key{st.scope, r.full_name, st.param}];
    b.value = std::move(value);
    b.loc = st.loc;
    b.order = order++;
    b.used = false;
    b.required_macros = std::move(required);
  }
  // Scopes some reference enters (@scope/x), in any value ever written
  // (overridden ones too: train_eval/ stays a known scope when
  // train_eval_dataset_cfg is set to None), with their outer scopes.
  entered_scopes_.clear();
  for (const Record& rec : records_) {
    ForEachLeaf(rec.st.value, [this](const Value& leaf) {
      if (leaf.kind() != Value::Kind::kReference) return;
      for (const std::string& sc : ScopePrefixes(leaf.reference_scope())) {
        if (!sc.empty()) entered_scopes_.insert(sc);
      }
    });
  }

  // Macros set on the command line that no binding uses (typos).
  for (std::string& m : UnusedFlagMacros()) errors.push_back(std::move(m));
  // Unset %gin.REQUIRED values that the called configurables read.
  std::vector<std::pair<std::string, std::string>> missing = MissingRequired(called);
  if (!missing.empty()) errors.push_back(RequiredMessage(missing));
  ThrowIfAny(errors, "the gin config");
  finalized_ = true;
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
    if (referenced.count(name) || def.loc.file.rfind("--", 0) != 0) continue;
    std::string near;
    if (suggestions_left_ > 0) {  // see kMaxSuggestions
      --suggestions_left_;
      near = ClosestName(name, names);
    }
    out.push_back(def.loc.ToString() + ": macro " + name + " is never used" +
                  (near.empty() ? "" : " (did you mean '" + near + "'?)"));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> Config::MissingRequired(
    const std::vector<std::string>& called) const {
  // Walks the configurables `called` reaches through the references in
  // their bound (or default) values, each in the scope its reference names
  // nested in its caller's (gin's config_scope) -- the configurables gin
  // would call, and the scopes t5xx queries them in.
  std::vector<std::pair<std::string, std::string>> missing;
  std::set<std::pair<std::string, std::string>> seen;  // (name, scope)
  std::vector<std::pair<std::string, std::string>> todo;
  for (const std::string& c : called) todo.emplace_back(c, "");
  std::string outer;  // the scope of the configurable being walked
  auto add_refs = [&](const Value& v) {
    ForEachLeaf(v, [&](const Value& leaf) {
      if (leaf.kind() == Value::Kind::kReference) {
        todo.emplace_back(leaf.reference_name(), NestedScope(outer, leaf.reference_scope()));
      }
    });
  };
  while (!todo.empty()) {
    const auto node = todo.back();
    todo.pop_back();
    if (!seen.insert(node).second) continue;
    outer = node.second;
    const ConfigurableSpec* spec = registry_->Find(node.first);
    if (spec == nullptr) continue;
    for (const ParamSpec& p : spec->params) {
      const Bound* b = FindBound(node.first, p.name, node.second);
      if (b == nullptr) {
        add_refs(p.default_value);
        continue;
      }
      for (auto& entry : RequiredEntries(*b, KeyName(node.second, node.first, p.name))) {
        if (std::find(missing.begin(), missing.end(), entry) == missing.end()) {
          missing.push_back(std::move(entry));
        }
      }
      add_refs(b->value);
    }
  }
  return missing;
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
    return defined_at[a] < defined_at[b];
  });
  std::vector<std::string> parts;
  // A macro whose value holds %gin.REQUIRED inside it (a dict or list) was
  // set; the REQUIRED in it was not.
  std::vector<std::string> inner;
  for (auto it = macros.begin(); it != macros.end();) {
    if (macros_.at(*it).value.kind() == Value::Kind::kRequired) {
      ++it;
      continue;
    }
    inner.push_back(*it);
    it = macros.erase(it);
  }
  for (const std::string& m : inner) {
    parts.push_back(macros_.at(m).loc.ToString() + ": macro '" + m + "' = " +
                    macros_.at(m).value.ToGinString() + " holds a %gin.REQUIRED that was never "
                    "overridden (read by " + readers[m] + "); give it a value in place");
  }
  if (macros.size() == 1) {
    const std::string& m = macros[0];
    parts.push_back(macros_.at(m).loc.ToString() + ": macro '" + m +
                    "' is %gin.REQUIRED and was never set (read by " + readers[m] +
                    "); set it in a gin file ('" + m + " = ...') or with --gin." + m + "=<value>");
  } else if (!macros.empty()) {
    std::string msg = macros_.at(macros[0]).loc.ToString() + ": macros";
    for (size_t i = 0; i < macros.size(); ++i) msg += (i ? ", '" : " '") + macros[i] + "'";
    msg += " are %gin.REQUIRED and were never set (";
    for (size_t i = 0; i < macros.size(); ++i) {
      msg += (i ? "; " : "") + macros[i] + " read by " + readers[macros[i]];
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
