#include "t5xx/config/config.h"

#include <algorithm>
#include <set>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "t5xx/util/error.h"
#include "t5xx/util/file_kind.h"

namespace t5xx::gin {

namespace {

// Calls fn on every value in `v` that is not a list, tuple or dict (dict
// keys included), depth first.
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

void CollectMacroRefs(const Value& v, std::set<std::string>& out) {
  ForEachLeaf(v, [&out](const Value& leaf) {
    if (leaf.kind() == Value::Kind::kMacro) out.insert(leaf.macro_name());
  });
}

}  // namespace

namespace fs = std::filesystem;

namespace {

[[noreturn]] void Fail(const Location& loc, const std::string& msg) {
  std::string where = loc.ToString();
  throw Error(where.empty() ? msg : where + ": " + msg);
}

std::string KeyName(const std::string& scope, const std::string& configurable,
                    const std::string& param) {
  std::string s = scope.empty() ? "" : scope + "/";
  return s + configurable + "." + param;
}

std::vector<std::string> ScopePrefixes(const std::string& scope) {
  // "a/b" -> {"a/b", "a", ""}: most specific first.
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

// "looked for a, b (b is a directory)": where a gin file was looked for,
// and why a path that exists there is not a gin file.
std::string Tried(const std::vector<std::string>& tried) {
  std::string msg = "looked for";
  std::string odd;
  for (size_t i = 0; i < tried.size(); ++i) {
    msg += (i ? ", " : " ") + tried[i];
    const std::string why = NotARegularFile(tried[i]);
    if (odd.empty() && !why.empty() && why != "does not exist") odd = tried[i] + " " + why;
  }
  return odd.empty() ? msg : msg + "; " + odd;
}

// "file:line" of a binding ("--gin.X flag" for a flag), for the lists of
// unused and ignored bindings.
std::string LineOf(const Location& loc) {
  return loc.line > 0 ? loc.file + ":" + std::to_string(loc.line) : loc.file;
}

bool IsStringTyped(const ParamSpec& p) {
  return p.type == ParamType::kString || p.type == ParamType::kOptionalString ||
         !p.allowed_strings.empty();
}

}  // namespace

std::string NestedScope(const std::string& outer, const std::string& inner) {
  if (outer.empty()) return inner;
  if (inner.empty()) return outer;
  return outer + "/" + inner;
}

Config::Config(const Registry* registry) : registry_(registry) {
  if (registry_ == nullptr) throw std::invalid_argument("gin::Config needs a registry");
}

void Config::AddSearchPath(const std::string& dir) {
  if (std::find(search_paths_.begin(), search_paths_.end(), dir) == search_paths_.end()) {
    search_paths_.push_back(dir);
  }
}

std::string Config::FindFile(const std::string& path, const std::string& including_dir,
                             std::vector<std::string>* tried) const {
  fs::path p(path);
  auto exists = [&](const fs::path& candidate) {
    tried->push_back(candidate.string());
    std::error_code ec;
    return fs::is_regular_file(candidate, ec);
  };
  if (p.is_absolute()) return exists(p) ? p.string() : "";
  // gin's order (parse_config_file): the path as given (relative to the
  // current directory), then each search path; then, as a t5xx fallback
  // that gin lacks, the including file's folder.
  std::vector<fs::path> dirs{fs::path(".")};
  for (const std::string& d : search_paths_) dirs.emplace_back(d);
  if (!including_dir.empty()) dirs.emplace_back(including_dir);
  for (const fs::path& d : dirs) {
    fs::path candidate = d == "." ? p : d / p;
    if (exists(candidate)) return candidate.lexically_normal().string();
  }
  return "";
}

void Config::ParseFile(const std::string& path) {
  std::vector<std::string> tried;
  std::string found = FindFile(path, "", &tried);
  if (found.empty()) {
    throw Error("gin file '" + path + "' not found (" + Tried(tried) + ")");
  }
  ParseFileAt(found, found);
}

void Config::ParseFileAt(const std::string& resolved_path, const std::string& shown_path) {
  std::ifstream in(resolved_path, std::ios::binary);
  if (!in) throw Error("cannot read gin file '" + resolved_path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  std::error_code ec;
  std::string canonical = fs::weakly_canonical(resolved_path, ec).string();
  if (ec) canonical = resolved_path;
  include_stack_.push_back(canonical);
  parsed_files_.push_back(shown_path);
  try {
    ParseStatements(ParseGinText(ss.str(), shown_path),
                    fs::path(resolved_path).parent_path().string());
  } catch (...) {
    include_stack_.pop_back();
    throw;
  }
  include_stack_.pop_back();
}

void Config::ParseString(const std::string& text, const std::string& source_name) {
  ParseStatements(ParseGinText(text, source_name), fs::path(source_name).parent_path().string());
}

void Config::AddBinding(const std::string& binding_text, const std::string& source_name) {
  // Leading blanks are not indentation here (shell quoting often adds them).
  size_t start = binding_text.find_first_not_of(" \t\r\n");
  std::string text = start == std::string::npos ? "" : binding_text.substr(start);
  ParseStatements(ParseGinText(text, source_name, /*flag_source=*/true), "");
}

void Config::AddFlagBinding(const std::string& name, const std::string& value_text,
                            const std::string& source_name) {
  Record rec;
  rec.st = ParseGinKey(name, source_name, /*flag_source=*/true);
  rec.st.loc = Location{source_name, 0, 0};  // the whole flag names the key
  Location value_loc{source_name, 0, 0};
  try {
    rec.st.value = ParseGinValue(value_text, source_name, /*flag_source=*/true);
  } catch (const Error& e) {
    rec.st.value = Value::String(value_text, value_loc);
    // A macro keeps the raw string too (it may feed a string parameter);
    // the parse error explains a type error where it is used.
    rec.fallback_error = e.what();
    if (rec.st.kind == Statement::Kind::kBinding) rec.string_fallback = true;
  }
  finalized_ = false;
  records_.push_back(std::move(rec));
}

void Config::ParseStatements(const std::vector<Statement>& statements, const std::string& dir) {
  finalized_ = false;
  for (const Statement& st : statements) {
    switch (st.kind) {
      case Statement::Kind::kDynamicRegistration:
        break;  // everything registered is available by import alias anyway
      case Statement::Kind::kImport: {
        auto it = aliases_.find(st.alias);
        if (it != aliases_.end() && it->second.first != st.module) {
          Fail(st.loc, "import alias '" + st.alias + "' for '" + st.module + "' conflicts with '" +
                           it->second.first + "' imported as '" + st.alias + "' at " +
                           it->second.second.ToString());
        }
        if (it == aliases_.end()) aliases_[st.alias] = {st.module, st.loc};
        break;
      }
      case Statement::Kind::kInclude: {
        std::vector<std::string> tried;
        std::string found = FindFile(st.path, dir, &tried);
        if (found.empty()) {
          Fail(st.loc, "included file '" + st.path + "' not found (" + Tried(tried) + ")");
        }
        std::error_code ec;
        std::string canonical = fs::weakly_canonical(found, ec).string();
        if (ec) canonical = found;
        auto cycle = std::find(include_stack_.begin(), include_stack_.end(), canonical);
        if (cycle != include_stack_.end()) {
          std::string chain;
          for (auto i = cycle; i != include_stack_.end(); ++i) chain += *i + " -> ";
          Fail(st.loc, "include cycle: '" + st.path + "' is already being parsed (" + chain +
                           canonical + ")");
        }
        ParseFileAt(found, found);
        break;
      }
      case Statement::Kind::kBinding:
      case Statement::Kind::kMacro: {
        Record rec;
        rec.st = st;
        records_.push_back(std::move(rec));
        break;
      }
    }
  }
}

Value Config::ResolveValue(const Value& v, std::vector<std::string>& macro_stack,
                           std::vector<std::string>* required) const {
  using K = Value::Kind;
  switch (v.kind()) {
    case K::kMacro: {
      const std::string& name = v.macro_name();
      auto it = macros_.find(name);
      if (it == macros_.end()) {
        std::vector<std::string> names;
        for (const auto& kv : macros_) names.push_back(kv.first);
        std::string msg = "undefined macro '%" + name + "'";
        std::string near = ClosestMatch(name, names);
        if (!near.empty()) msg += "; did you mean '%" + near + "'?";
        else msg += "; define it with '" + name + " = <value>' or --gin." + name + "=<value>";
        Fail(v.location(), msg);
      }
      auto seen = std::find(macro_stack.begin(), macro_stack.end(), name);
      if (seen != macro_stack.end()) {
        std::string chain;
        for (auto i = seen; i != macro_stack.end(); ++i) chain += "%" + *i + " -> ";
        Fail(v.location(), "macro cycle: " + chain + "%" + name);
      }
      macro_stack.push_back(name);
      Value out = ResolveValue(it->second.value, macro_stack, required);
      macro_stack.pop_back();
      return out;
    }
    case K::kReference: {
      Registry::Resolution r = registry_->Resolve(v.reference_name(), [&] {
        std::map<std::string, std::string> a;
        for (const auto& kv : aliases_) a[kv.first] = kv.second.first;
        return a;
      }());
      if (!r.ok()) Fail(v.location(), r.error + " (in reference '" + v.ToGinString() + "')");
      Value out = v;
      out.set_reference_name(r.full_name);
      return out;
    }
    case K::kList:
    case K::kTuple: {
      Value out = v;
      for (Value& item : out.mutable_items()) item = ResolveValue(item, macro_stack, required);
      return out;
    }
    case K::kDict: {
      Value out = v;
      for (auto& kv : out.mutable_dict()) {
        kv.first = ResolveValue(kv.first, macro_stack, required);
        kv.second = ResolveValue(kv.second, macro_stack, required);
      }
      return out;
    }
    case K::kRequired:
      // gin: %gin.REQUIRED is an error only where a called configurable
      // reads it (Query), so it resolves to itself; `required` records the
      // macro it came through ("" when bound directly).
      if (required) required->push_back(macro_stack.empty() ? "" : macro_stack.back());
      return v;
    default:
      return v;
  }
}

void Config::Finalize(const std::vector<std::string>& called) {
  finalized_ = false;
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
      std::string near = ClosestMatch(st.param, names);
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
  if (errors.size() == 1) throw Error(errors[0]);
  if (!errors.empty()) {
    std::string msg = std::to_string(errors.size()) + " errors in the gin config:";
    for (const std::string& e : errors) msg += "\n  " + e;
    throw Error(msg);
  }
  finalized_ = true;
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

void Config::RequireFinalized(const char* fn) const {
  if (!finalized_) {
    throw std::logic_error(std::string("gin::Config::") + fn +
                           " called before Finalize() (or after new bindings were added)");
  }
}

const ParamSpec& Config::CheckRegistered(const std::string& configurable,
                                         const std::string& param) const {
  const ConfigurableSpec* spec = registry_->Find(configurable);
  if (spec == nullptr) {
    std::string msg = "internal error: gin query for unregistered configurable '" + configurable + "'";
    std::string near = registry_->SuggestName(configurable);
    if (!near.empty()) msg += "; did you mean '" + near + "'?";
    throw Error(msg + " (register it in RegisterT5xConfigurables)");
  }
  const ParamSpec* ps = spec->FindParam(param);
  if (ps == nullptr) {
    std::vector<std::string> names;
    for (const ParamSpec& p : spec->params) names.push_back(p.name);
    std::string msg = "internal error: gin query for unregistered parameter '" + param + "' of '" + configurable + "'";
    std::string near = ClosestMatch(param, names);
    if (!near.empty()) msg += "; did you mean '" + near + "'?";
    throw Error(msg + " (register it in RegisterT5xConfigurables)");
  }
  return *ps;
}

const Config::Bound* Config::FindBound(const std::string& configurable, const std::string& param,
                                       const std::string& scope) const {
  for (const std::string& s : ScopePrefixes(scope)) {
    auto it = bindings_.find(Key{s, configurable, param});
    if (it != bindings_.end()) return &it->second;
  }
  return nullptr;
}

Value Config::Query(const std::string& configurable, const std::string& param,
                    const std::string& scope) {
  RequireFinalized("Query");
  const ParamSpec& ps = CheckRegistered(configurable, param);
  queried_[configurable].insert(scope);
  const std::string what = KeyName(scope, configurable, param);
  Value v;
  if (const Bound* b = FindBound(configurable, param, scope)) {
    b->used = true;
    v = b->value;
    if (!b->required_macros.empty()) {
      const auto missing = RequiredEntries(*b, KeyName(scope, configurable, param));
      throw Error(RequiredMessage(missing));
    }
  } else if (ps.required) {
    throw Error("no value for required parameter '" + what + "'; bind it in a gin file ('" + what +
                " = ...') or with --gin." + what + "=<value>");
  } else {
    v = ps.default_value;
    v.set_location(Location{"default of " + configurable + "." + param, 0, 0});
  }
  v.set_description(what);
  operative_[{configurable, scope, param}] = v;
  return v;
}

bool Config::IsBound(const std::string& configurable, const std::string& param,
                     const std::string& scope) const {
  RequireFinalized("IsBound");
  CheckRegistered(configurable, param);
  queried_[configurable].insert(scope);
  return FindBound(configurable, param, scope) != nullptr;
}

std::optional<Value> Config::MacroValue(const std::string& name) const {
  RequireFinalized("MacroValue");
  auto it = resolved_macros_.find(name);
  if (it == resolved_macros_.end()) return std::nullopt;
  return it->second;
}

std::string Config::OperativeConfigString() const {
  RequireFinalized("OperativeConfigString");
  std::string out;
  std::string group;
  for (const auto& [key, value] : operative_) {
    const auto& [configurable, scope, param] = key;
    std::string this_group = (scope.empty() ? "" : scope + "/") + configurable;
    if (this_group != group) {
      if (!out.empty()) out += "\n";
      out += "# Parameters for " + this_group + ":\n";
      group = this_group;
    }
    out += KeyName(scope, configurable, param) + " = " + value.ToGinString() + "\n";
  }
  return out;
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
    std::vector<std::string> others;
    for (const auto& n : names) {
      if (n != name) others.push_back(n);
    }
    std::string near = ClosestMatch(name, others);
    out.push_back(def.loc.ToString() + ": macro " + name + " is never used" +
                  (near.empty() ? "" : " (did you mean '" + near + "'?)"));
  }
  return out;
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
  std::sort(ignored.begin(), ignored.end());
  std::vector<std::string> out;
  for (auto& u : ignored) out.push_back(std::move(u.second));
  return out;
}

std::vector<std::string> Config::IgnoredConfigurables() const {
  RequireFinalized("IgnoredConfigurables");
  // [scope/]configurable -> (first order, count, first location).
  std::map<std::string, std::tuple<size_t, int, std::string>> groups;
  for (const auto& [key, b] : bindings_) {
    if (!Ignored(key, b)) continue;
    const auto& [scope, configurable, param] = key;
    const std::string name = (scope.empty() ? "" : scope + "/") + configurable;
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
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> out;
  for (auto& s2 : sorted) out.push_back(std::move(s2.second));
  return out;
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
      const std::string near = ClosestMatch(scope, known);
      why = " (no reference enters scope '" + scope + "'" +
            (near.empty() ? "" : "; did you mean '" + near + "'?") + ")";
    }
    unused.emplace_back(b.order, where + ": " + KeyName(scope, configurable, param) + why);
  }
  std::sort(unused.begin(), unused.end());
  std::vector<std::string> out;
  for (auto& u : unused) out.push_back(std::move(u.second));
  return out;
}

}  // namespace t5xx::gin
