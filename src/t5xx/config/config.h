// t5xx::gin::Config: parsed gin files + bindings, validated and queryable.
//
// Life cycle:
//   Config config(&registry);
//   config.ParseFile("models/t5_1_1/small.gin");    // and/or ParseString
//   config.AddBinding("TRAIN_STEPS = 100", "--gin_bindings flag");
//   config.Finalize();                               // validate everything
//   int64_t steps = config.Query("__main__.train", "total_steps").AsInt();
//
// Semantics follow gin-config as t5x uses it (see docs/gin.md):
//   * Files/strings/bindings are applied in order; a later binding of the same
//     (scope, configurable, parameter) or macro replaces the earlier one.
//   * `include 'x.gin'` pastes x.gin in place; it is looked up as gin does
//     -- relative to the current directory, then in each search path --
//     and then (t5xx only) in the including file's folder. Include cycles
//     are an error.
//   * Import aliases (`from t5x import models`, `import __main__ as
//     train_script`) are global to the Config, like gin's dynamic
//     registration; names are resolved by Registry::Resolve at Finalize.
//   * Macros are global and resolved lazily (at Finalize), so a macro may be
//     used before the file that defines it is parsed. Their values are
//     type-checked where they are used.
//   * Scoped lookup: Query(c, p, "a/b") takes the binding of scope "a/b", else
//     "a", else the unscoped one, else the registered default (gin's rule).
//
// Every user error throws t5xx::Error whose message starts with the
// file:line:column (or flag) of the offending text and quotes it.
// Calling Query/IsBound/MacroValue/OperativeConfigString/UnusedBindings
// before Finalize (or after parsing more text) throws std::logic_error (a
// programming error). Not thread-safe: Query records what it returns.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "t5xx/config/parser.h"
#include "t5xx/config/registry.h"
#include "t5xx/config/value.h"

namespace t5xx::gin {

// The scope gin calls the configurable of reference `ref` in, when the
// configurable whose binding holds `ref` was called in `caller_scope`
// (gin/config.py ConfigurableReference, config_scope):
//   @s/x() and @s/x  -> exactly "s": a scoped reference replaces the active
//                       scope (config_scope given a list), it never nests;
//   @x()             -> caller_scope: evaluated while the caller's
//                       bindings are copied, so it inherits the active scope;
//   @x               -> "": the callable is called later by the run, outside
//                       any scope, as t5x and seqio call stored callables
//                       (decode_fn, preprocessors, metric_fns, *_cls).
// A reference written in a macro's value already carries the macro's name
// as its scope (Finalize resolves %M as gin's @M/gin.macro()).
std::string CallScope(const std::string& caller_scope, const Value& ref);

class Config {
 public:
  // `registry` must outlive the Config.
  explicit Config(const Registry* registry);

  // Appends a folder searched for gin files (ParseFile, include) after the
  // including file's own folder.
  void AddSearchPath(const std::string& dir);
  const std::vector<std::string>& search_paths() const { return search_paths_; }

  // The largest gin file ParseFile or an include reads (configs are
  // kilobytes; this refuses a data file named by mistake before reading it).
  static constexpr uintmax_t kMaxGinFileBytes = uintmax_t{16} << 20;

  // Parses a gin file. A relative `path` is tried against the current
  // directory, then each search path. Throws t5xx::Error if not found
  // (listing where it looked), over kMaxGinFileBytes, or on any syntax
  // error.
  void ParseFile(const std::string& path);

  // Parses gin text; `source_name` is used in locations, and its folder (if
  // it names one) is searched first for includes.
  void ParseString(const std::string& text, const std::string& source_name);

  // Parses one binding (or several lines) as from --gin_bindings; locations
  // use `source_name` with line 0, e.g. "--gin_bindings flag, column 7".
  void AddBinding(const std::string& binding_text, const std::string& source_name);

  // `--gin.NAME=VALUE`: binds NAME (a macro or [scope/]configurable.param) to
  // VALUE. If VALUE is not valid gin (e.g. /tmp/run) and NAME is a macro or a
  // string-typed parameter, VALUE is taken as a plain string; otherwise the
  // parse error is reported at Finalize. `source_name` e.g. "--gin.MODEL_DIR flag".
  void AddFlagBinding(const std::string& name, const std::string& value_text,
                      const std::string& source_name);

  // Resolves aliases, references and macros; checks every binding names a
  // registered configurable and parameter ("did you mean"), and type-checks
  // values, and refuses macros set on the command line (--gin.NAME /
  // --gin_bindings) that no binding refers to, e.g. a typo such as
  // --gin.BATCH_SIZ=8: "--gin.BATCH_SIZ flag: macro BATCH_SIZ is never used
  // (did you mean 'BATCH_SIZE'?)" (macros defined in gin files may go
  // unused, as in gin). A %gin.REQUIRED macro or binding that was never set is an error
  // only where a called configurable reads it, as in gin: `called` names the
  // configurables the command calls (e.g. "__main__.train"); every
  // configurable they reach through references (@x, @x(), @scope/x()) in
  // bound or default values counts as called, in the scope its reference
  // names. Every error is collected and thrown as one t5xx::Error: binding
  // errors in the order written, then the unset REQUIRED values read
  // (naming each macro, where it is defined and who reads it); several
  // errors give one line each under "N errors in the gin config:". A
  // REQUIRED read that `called` did not foresee is reported by Query. May
  // be called again after more parsing.
  // `require_overrides` (t5x's train, infer and eval): also refuse every
  // binding or macro left at %gin.REQUIRED itself, read or not, as gin's
  // finalize() does for t5x; false (t5xx's data commands, which run no
  // model) refuses only the values the calls read. A cycle of evaluated
  // references the calls reach (`f.x = @s/f()`, `s/f.x = @f()` read in s)
  // is an error naming each link with its file:line:col.
  void Finalize(const std::vector<std::string>& called = {}, bool require_overrides = true);
  bool finalized() const { return finalized_; }

  // The value for `param` of `configurable` (full registered name) in
  // `scope` ("" or "a/b"): scoped binding, else less specific scopes, else
  // unscoped, else the registered default. References come back with full
  // registered names; macros are resolved. The returned Value's description()
  // names the parameter so its As*() errors are self-explanatory. Records the
  // value for OperativeConfigString and marks the binding used.
  // Throws t5xx::Error if the configurable/param is not registered
  // (programming error), if a required parameter has no binding, or if the
  // binding holds a %gin.REQUIRED that was never set (naming the macro, its
  // definition and this reader).
  Value Query(const std::string& configurable, const std::string& param,
              const std::string& scope = "");

  // True if a binding (in `scope` or a less specific one) exists. Throws
  // t5xx::Error for an unregistered configurable/param.
  bool IsBound(const std::string& configurable, const std::string& param,
               const std::string& scope = "") const;

  // Resolved value of a macro, if defined (%gin.REQUIRED if it is unset).
  std::optional<Value> MacroValue(const std::string& name) const;

  // Every value returned by Query (explicit bindings and defaults), in gin
  // syntax with full names and macros resolved, grouped by [scope/]
  // configurable under "# Parameters for ..." headers, sorted. Parsing it
  // back (with the same registry) gives the same Query results.
  std::string OperativeConfigString() const;

  // The same values as a map: "[scope/]full.name.param" -> gin text.
  std::map<std::string, std::string> OperativeValues() const;

  // Final bindings that no Query has read: "file:line: scope/full.name.param"
  // (flag bindings: "--gin.X flag: name.param"), in the order written.
  // Only configurables the run queried count, in a scope it queried them in
  // (or one a queried scope falls back to): bindings of a configurable or
  // scope it never calls (a stock model file's adafactor.Adafactor bindings
  // when the run uses optimizers.adamw; train_eval/utils.DatasetConfig when
  // train.train_eval_dataset_cfg = None) are IgnoredBindings, as gin ignores
  // them -- unless no reference anywhere enters the binding's scope: that is
  // a misspelt scope ("... (no reference enters scope 'trian'; did you mean
  // 'train'?)"), reported here. A binding that more specific scoped
  // bindings of the same parameter shadow wherever it is read is ignored
  // too, as in gin. Macros set on the command line that no binding uses
  // are reported by Finalize.
  std::vector<std::string> UnusedBindings() const;

  // Bindings of configurables no Query or IsBound asked about, in the same
  // format and order as UnusedBindings.
  std::vector<std::string> IgnoredBindings() const;

  // The same bindings grouped by [scope/]configurable, in the order first
  // written: "train_eval/t5x.utils.DatasetConfig (9 bindings, first at
  // runs/pretrain.gin:67)".
  std::vector<std::string> IgnoredConfigurables() const;

  // Macros that nothing read during the run: no binding that a configurable
  // read names them (directly or through other macros read), and no
  // MacroValue asked for them -- one line each, in the order written:
  // "file:line: macro NAME is never read ...". A scoped macro
  // (`train/BATCH_SIZE = 4`) is explained as such: gin evaluates %BATCH_SIZE
  // in scope BATCH_SIZE whatever scope reads it, so only %train/BATCH_SIZE
  // would read it; the line names the parameters %BATCH_SIZE sets, to bind
  // in that scope instead. gin accepts such macros silently.
  std::vector<std::string> UnreadMacros() const;

  // Whether any binding parsed so far (in any scope) names `full_name`
  // (before Finalize: which entry point a run file configures).
  bool Binds(const std::string& full_name) const;

  // Files parsed so far (including included ones), in order.
  const std::vector<std::string>& parsed_files() const { return parsed_files_; }
  // The modules the parsed texts import (`import t5.data.mixtures`, `from
  // t5x import models` -> "t5x.models"), sorted, each once. t5xx has no
  // Python modules; a few stand for what t5xx registers in their place
  // (t5's task catalog: catalog/t5_catalog.h).
  std::vector<std::string> ImportedModules() const;

 private:
  std::vector<std::string> UnusedFlagMacros() const;
  // For a scoped macro ('train/BATCH_SIZE'): why %BATCH_SIZE does not read
  // it and which parameters to bind in its scope instead (from the bindings
  // written); "" for another name.
  std::string ScopedMacroHint(const std::string& name) const;
  // How many "did you mean" suggestions among macros one Finalize makes (for
  // undefined and unused macros): each scans every macro, so a config with
  // thousands of such errors would cost their square (found by fuzzing:
  // minutes for 4,000 macros). Later errors are reported without one.
  static constexpr int kMaxSuggestions = 20;
  mutable int suggestions_left_ = kMaxSuggestions;
  // Whether a binding in `binding_scope` of `configurable` belongs to a
  // call the run made: some query's scope falls back to it.
  bool Called(const std::string& configurable, const std::string& binding_scope) const;
  // Whether some reference enters `scope` ("" always is).
  bool ScopeEntered(const std::string& scope) const;
  struct Record {
    Statement st;
    size_t aliases = 0;            // the import aliases of its text (alias_tables_)
    bool string_fallback = false;  // value is a raw flag string (see AddFlagBinding)
    std::string fallback_error;    // why it did not parse as gin
  };
  struct Bound {
    Value value;  // resolved
    Location loc;
    size_t order = 0;
    mutable bool used = false;  // set by Query
    // Unset %gin.REQUIRED in the value: the macros it came through ("" if
    // bound directly). Reading such a binding is the error.
    std::vector<std::string> required_macros;
    // Set when the value holds a macro cycle: the error for whoever reads it
    // (gin evaluates a macro only there); `value` is then None.
    std::string lazy_error;
    std::set<std::string> macros;  // the macros its written value names
  };
  struct MacroDef {
    Value value;  // as written
    Location loc;
    size_t aliases = 0;  // the import aliases of its text
    std::set<std::string> macros;  // the macros its value names
  };
  // The definition %name reads (exactly that name).
  std::map<std::string, MacroDef>::const_iterator FindMacro(const std::string& name) const;
  using Key = std::tuple<std::string, std::string, std::string>;  // scope, full name, param
  // Whether a more specific binding of the same parameter was read instead
  // (an unscoped placeholder that train/ and train_eval/ both override).
  bool Shadowed(const Key& key) const;
  // Whether binding `b` of `key` is one IgnoredBindings lists.
  bool Ignored(const Key& key, const Bound& b) const;

  void ParseStatements(const std::vector<Statement>& statements, const std::string& dir);
  // Resolves every reference in `v` (not its macros), appending errors for
  // unknown configurables to `errors`: gin builds each reference when it
  // parses it, so even an overridden binding's must name a configurable.
  void CheckReferences(const Value& v, size_t aliases, std::vector<std::string>& errors) const;
  // gin's finalize check (validate_macros_hook) of one final value: every
  // macro written in it (not in the values a repeated dict key replaced)
  // is defined. Appends "undefined macro" errors; false when any.
  bool CheckMacros(const Value& v, std::vector<std::string>& errors) const;
  // Finalize's steps: the macros' definitions (references and macros they
  // name checked, values resolved); one binding record (its configurable,
  // parameter and value checked, resolved and bound when it is the key's
  // last: `last`); the scopes references enter.
  void ResolveMacroDefinitions(std::vector<std::string>& errors);
  void BindRecord(size_t index, const std::map<Key, size_t>& last, size_t& order,
                  std::vector<std::string>& errors);
  void CollectEnteredScopes();
  // " (from macro %M set at file:line)" when `st`'s value is a macro; "".
  std::string MacroValueNote(const Statement& st) const;
  std::string UndefinedMacroMessage(const Value& macro) const;
  void ParseFileAt(const std::string& resolved_path, const std::string& shown_path);
  std::string FindFile(const std::string& path, const std::string& including_dir,
                       std::vector<std::string>* tried) const;
  // Throws t5xx::Error for an undefined macro, a macro cycle or a bad
  // reference; a %gin.REQUIRED stays as it is and is recorded in
  // *required (the macro it came through, "" if direct) when given. Also
  // for macros chained more than kMaxMacroDepth deep, and once one Finalize
  // has resolved kMaxResolvedValues values in all (macros used many times
  // inside other macros expand exponentially: the budget bounds the time
  // and memory any config can take).
  Value ResolveValue(const Value& v, std::vector<std::string>& macro_stack,
                     std::vector<std::string>* required, size_t aliases) const;
  static constexpr size_t kMaxMacroDepth = 32;
  static constexpr int64_t kMaxResolvedValues = int64_t{1} << 20;
  mutable int64_t resolve_budget_ = 0;  // values Finalize may still resolve
  // Walks the calls gin makes from `called` (see Finalize): returns the unset
  // %gin.REQUIRED values they read -- (macro, reader) or ("", message for a
  // direct binding) -- and appends reference cycles to `errors`.
  std::vector<std::pair<std::string, std::string>> WalkCalls(
      const std::vector<std::string>& called, std::vector<std::string>* errors) const;
  // Calls nested deeper than this are an error (gin's Python recursion
  // limit stops far sooner); bounds the walk's recursion.
  static constexpr size_t kMaxCallDepth = 1000;
  // Adds gin's finalize rule to `missing`: macros and bindings left at
  // %gin.REQUIRED itself, read or not (macro, "") / ("", message).
  void AddUnsetRequired(std::vector<std::pair<std::string, std::string>>* missing) const;
  // The entries above for binding `b`, read as `key`.
  std::vector<std::pair<std::string, std::string>> RequiredEntries(const Bound& b,
                                                                   const std::string& key) const;
  // The message for unset REQUIRED reads: (macro or "", reader).
  std::string RequiredMessage(
      const std::vector<std::pair<std::string, std::string>>& missing) const;
  const Bound* FindBound(const std::string& configurable, const std::string& param,
                         const std::string& scope) const;
  const ParamSpec& CheckRegistered(const std::string& configurable, const std::string& param) const;
  void RequireFinalized(const char* fn) const;

  const Registry* registry_;
  std::vector<std::string> search_paths_;
  std::vector<std::string> include_stack_;  // canonical paths being parsed
  std::vector<std::string> parsed_files_;
  // Import aliases, one table per text parsed (a file, an included file,
  // a string, a binding): gin resolves a name with the imports of the file
  // it is written in. alias -> module, and where it was imported.
  struct AliasTable {
    std::map<std::string, std::string> modules;
    std::map<std::string, Location> where;
  };
  std::vector<AliasTable> alias_tables_{AliasTable{}};  // [0]: no imports
  // `name` as written in a text with alias table `table`; a name its own
  // imports do not resolve is tried with every text's imports (a t5xx
  // leniency: gin would refuse it), and the first error is returned.
  Registry::Resolution ResolveName(const std::string& name, size_t table) const;
  std::vector<Record> records_;

  bool finalized_ = false;
  std::map<Key, Bound> bindings_;
  std::set<std::string> entered_scopes_;  // see Finalize
  // Configurable -> the scopes it was asked about in (Query, IsBound).
  mutable std::map<std::string, std::set<std::string>> queried_;
  std::map<std::string, MacroDef> macros_;
  std::map<std::string, Value> resolved_macros_;
  mutable std::set<std::string> macros_asked_;  // by MacroValue
  // (full name, scope, param) -> value returned by Query.
  std::map<std::tuple<std::string, std::string, std::string>, Value> operative_;
};

}  // namespace t5xx::gin
