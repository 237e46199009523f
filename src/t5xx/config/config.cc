// t5xx::gin::Config: parsing gin files and bindings into records, resolving
// macros and references, and answering queries (gin/config.py: parse_config,
// query_parameter). Finalize is in config_finalize.cc, the reports after a
// run in config_report.cc.
#include "t5xx/config/config.h"

#include <algorithm>
#include <set>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "t5xx/config/binding_key.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_kind.h"
#include "t5xx/util/names.h"

namespace t5xx::gin {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void Fail(const Location& loc, const std::string& msg) {
  std::string where = loc.ToString();
  throw Error(where.empty() ? msg : where + ": " + msg);
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

}  // namespace

std::string CallScope(const std::string& caller_scope, const Value& ref) {
  if (!ref.reference_scope().empty()) return ref.reference_scope();
  return ref.reference_evaluated() ? caller_scope : "";
}

std::map<std::string, Config::MacroDef>::const_iterator Config::FindMacro(
    const std::string& name) const {
  // Exactly the name written: gin's finalize (validate_macros_hook) refuses
  // a %a/M that no 'a/M = ...' defines, so its scoped fallback to a macro
  // 'a' never applies in t5x.
  return macros_.find(name);
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
  std::error_code size_ec;
  const uintmax_t size = fs::file_size(resolved_path, size_ec);
  if (!size_ec && size > kMaxGinFileBytes) {
    throw Error("gin file '" + resolved_path + "' has " + std::to_string(size) +
                " bytes, more than the limit of " + std::to_string(kMaxGinFileBytes) +
                " (16 MiB); is it a gin file?");
  }
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
  // This text's imports (an included file has its own, as in gin).
  alias_tables_.emplace_back();
  const size_t table = alias_tables_.size() - 1;
  for (const Statement& st : statements) {
    switch (st.kind) {
      case Statement::Kind::kDynamicRegistration:
        break;  // every registered name is reachable through its aliases anyway
      case Statement::Kind::kImport: {
        // A module the registry refuses (Registry::RefuseModule), at its import.
        const std::string refusal = registry_->ModuleRefusal(st.module);
        if (!refusal.empty()) Fail(st.loc, "'" + st.module + "' " + refusal);
        AliasTable& t = alias_tables_[table];
        auto it = t.modules.find(st.alias);
        if (it != t.modules.end() && it->second != st.module) {
          Fail(st.loc, "import alias '" + st.alias + "' for '" + st.module + "' conflicts with '" +
                           it->second + "' imported as '" + st.alias + "' at " +
                           t.where.at(st.alias).ToString() + " in the same file");
        }
        if (it == t.modules.end()) {
          t.modules[st.alias] = st.module;
          t.where[st.alias] = st.loc;
        }
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
        rec.aliases = table;
        records_.push_back(std::move(rec));
        break;
      }
    }
  }
}

std::string Config::UndefinedMacroMessage(const Value& v) const {
  const std::string& name = v.macro_name();
  std::string msg = "undefined macro '%" + name + "'";
  std::string near;
  if (suggestions_left_ > 0) {  // each scans every macro: see kMaxSuggestions
    --suggestions_left_;
    std::vector<std::string> names;
    for (const auto& kv : macros_) names.push_back(kv.first);
    near = ClosestName(name, names);
  }
  if (!near.empty()) msg += "; did you mean '%" + near + "'?";
  else msg += "; define it with '" + name + " = <value>' or --gin." + name + "=<value>";
  const std::string where = v.location().ToString();
  return where.empty() ? msg : where + ": " + msg;
}

bool Config::CheckMacros(const Value& v, std::vector<std::string>& errors) const {
  bool ok = true;
  std::function<void(const Value&)> walk = [&](const Value& x) {
    switch (x.kind()) {
      case Value::Kind::kList:
      case Value::Kind::kTuple:
        for (const Value& item : x.AsList()) walk(item);
        break;
      case Value::Kind::kDict:
        for (const auto& [k, val] : PythonDictItems(x.AsDict())) {
          walk(k);
          walk(val);
        }
        break;
      case Value::Kind::kMacro:
        if (FindMacro(x.macro_name()) == macros_.end()) {
          errors.push_back(UndefinedMacroMessage(x));
          ok = false;
        }
        break;
      default:
        break;
    }
  };
  walk(v);
  return ok;
}

Registry::Resolution Config::ResolveName(const std::string& name, size_t table) const {
  Registry::Resolution r = registry_->Resolve(name, alias_tables_.at(table).modules);
  if (r.ok()) return r;
  std::map<std::string, std::string> all;  // every text's imports, the first one of an alias
  for (const AliasTable& t : alias_tables_) all.insert(t.modules.begin(), t.modules.end());
  Registry::Resolution any = registry_->Resolve(name, all);
  return any.ok() ? any : r;
}

Value Config::ResolveValue(const Value& v, std::vector<std::string>& macro_stack,
                           std::vector<std::string>* required, size_t aliases) const {
  using K = Value::Kind;
  if (--resolve_budget_ < 0) {
    Fail(v.location(), "expanding macros makes more than " +
                           std::to_string(kMaxResolvedValues) +
                           " values in all (the limit); is a macro used many times inside "
                           "macros that are themselves used many times?");
  }
  switch (v.kind()) {
    case K::kMacro: {
      const std::string& name = v.macro_name();
      auto it = FindMacro(name);
      // Reported by Finalize's check of every macro written (CheckMacros).
      if (it == macros_.end()) throw UndefinedMacroError(UndefinedMacroMessage(v));
      auto seen = std::find(macro_stack.begin(), macro_stack.end(), name);
      if (seen != macro_stack.end()) {
        std::string chain;
        for (auto i = seen; i != macro_stack.end(); ++i) chain += "%" + *i + " -> ";
        const std::string where = v.location().ToString();
        throw MacroCycleError((where.empty() ? "" : where + ": ") + "macro cycle: " + chain + "%" +
                              name);
      }
      if (macro_stack.size() >= kMaxMacroDepth) {
        Fail(v.location(), "macros refer to macros more than " + std::to_string(kMaxMacroDepth) +
                               " deep (the limit): %" + macro_stack.front() + " -> ... -> %" +
                               name);
      }
      macro_stack.push_back(name);
      // The macro's text resolves its names with its own file's imports.
      Value out = ResolveValue(it->second.value, macro_stack, required, it->second.aliases);
      macro_stack.pop_back();
      return out;
    }
    case K::kReference: {
      Registry::Resolution r = ResolveName(v.reference_name(), aliases);
      if (!r.ok()) Fail(v.location(), r.error + " (in reference '" + v.ToGinString() + "')");
      Value out = v;
      out.set_reference_name(r.full_name);
      // gin reads %M as @M/gin.macro(): the macro's value is evaluated in
      // scope exactly M, so an unscoped @x() written in it is called there
      // (M/x bindings apply, the reader's scope does not).
      if (v.reference_evaluated() && v.reference_scope().empty() && !macro_stack.empty()) {
        out.set_reference_scope(macro_stack.back());
      }
      return out;
    }
    case K::kList:
    case K::kTuple: {
      Value out = v;
      for (Value& item : out.mutable_items()) {
        item = ResolveValue(item, macro_stack, required, aliases);
      }
      return out;
    }
    case K::kDict: {
      // The dict gin parses (one entry per key as written: a value a
      // repeated key replaces is never evaluated), then the dict its
      // evaluation builds (keys equal once macros are read are one key).
      Value out = v;
      out.mutable_dict() = PythonDictItems(v.AsDict());
      for (auto& kv : out.mutable_dict()) {
        kv.first = ResolveValue(kv.first, macro_stack, required, aliases);
        kv.second = ResolveValue(kv.second, macro_stack, required, aliases);
      }
      out.mutable_dict() = PythonDictItems(out.AsDict());
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
    throw Error(msg + " (register it beside the code that reads it: run/configurables/gin_readers.h, seqio_gin/)");
  }
  const ParamSpec* ps = spec->FindParam(param);
  if (ps == nullptr) {
    std::vector<std::string> names;
    for (const ParamSpec& p : spec->params) names.push_back(p.name);
    std::string msg = "internal error: gin query for unregistered parameter '" + param + "' of '" + configurable + "'";
    std::string near = ClosestName(param, names);
    if (!near.empty()) msg += "; did you mean '" + near + "'?";
    throw Error(msg + " (register it beside the code that reads it: run/configurables/gin_readers.h, seqio_gin/)");
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
    if (!b->lazy_error.empty()) throw Error(b->lazy_error);
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
  macros_asked_.insert(name);
  auto it = resolved_macros_.find(name);
  if (it == resolved_macros_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Config::ImportedModules() const {
  std::set<std::string> modules;
  for (const AliasTable& t : alias_tables_) {
    for (const auto& [alias, module] : t.modules) modules.insert(module);
  }
  return {modules.begin(), modules.end()};
}

}  // namespace t5xx::gin
