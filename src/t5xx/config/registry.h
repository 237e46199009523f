// Registry of configurables: what names and parameters gin may bind.
//
// gin-config learns configurables from Python decorators / dynamic imports;
// t5xx has no Python, so every configurable is declared up front as a
// ConfigurableSpec under its full dotted Python name (e.g.
// "t5x.models.EncoderDecoderModel"), with typed parameters and defaults as in
// t5x. Config::Finalize validates every binding against this registry and
// type-checks values; Config::Query returns registered defaults.
//
// Name resolution follows gin with dynamic registration: an import alias
// prefix is expanded ("models.X" with `from t5x import models` ->
// "t5x.models.X"), and, like gin's non-dynamic mode, an unambiguous dotted
// suffix of a registered name is accepted ("EncoderDecoderModel").
#pragma once

#include "t5xx/util/edit_distance.h"

#include <map>
#include <string>
#include <vector>

#include "t5xx/config/value.h"

namespace t5xx::gin {

// Parameter types checked at Config::Finalize. kFloat accepts ints; kList
// accepts lists and tuples; kOptional* also accept None; kAny accepts
// anything (including references and containers).
enum class ParamType {
  kAny,
  kBool,
  kInt,
  kFloat,
  kString,
  kReference,
  kList,
  kDict,
  kOptionalBool,
  kOptionalInt,
  kOptionalFloat,
  kOptionalString,
  kOptionalReference,
  kOptionalList,
  kOptionalDict,
};

// "an int", "a float or None", ... for messages.
std::string ParamTypeName(ParamType type);

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kAny;
  Value default_value;    // used by Config::Query when unbound and !required
  bool required = false;  // no default: Query throws when unbound
  std::string doc;
  // Strings accepted in addition to `type` (e.g. t5x's
  // loss_normalizing_factor takes a float or 'NUM_REAL_TARGET_TOKENS').
  std::vector<std::string> allowed_strings;
};

struct ConfigurableSpec {
  std::string name;  // full dotted name, e.g. "t5x.models.EncoderDecoderModel"
  std::vector<ParamSpec> params;
  std::string doc;

  const ParamSpec* FindParam(const std::string& param) const;  // nullptr if absent
};

// Checks `value` (macros already resolved) against `spec`. Returns "" when it
// fits, else a message like "expected an int for <what>, got 'abc' (a string)"
// (" for <what>" is left out when `what` is empty).
std::string CheckParamValue(const ParamSpec& spec, const Value& value,
                            const std::string& what = "");

// Levenshtein distance (t5xx/util/edit_distance.h, with ClosestName), used
// for "did you mean".
using ::t5xx::EditDistance;


class Registry {
 public:
  // Adds a configurable. Throws t5xx::Error on an empty/invalid name, a
  // duplicate configurable, a duplicate parameter, or a default that does not
  // fit its parameter type.
  void Register(ConfigurableSpec spec);

  // Exact lookup by full name; nullptr if not registered.
  const ConfigurableSpec* Find(const std::string& full_name) const;

  // All full names, sorted.
  std::vector<std::string> Names() const;
  size_t size() const { return specs_.size(); }

  struct Resolution {
    std::string full_name;  // set on success
    std::string error;      // set on failure: "unknown configurable 'x'; did you mean 'y'?"
    bool ok() const { return error.empty(); }
  };

  // Resolves a name as written in gin text. `aliases` maps an import alias
  // ("models", "train_script", "t5x.utils") to its module ("t5x.models",
  // "__main__", "t5x.utils"). Order: exact registered name; longest alias
  // prefix expansion; unique registered name ending in "." + name. An
  // ambiguous suffix or an unknown name gives an error with candidates / a
  // "did you mean" suggestion.
  Resolution Resolve(const std::string& name,
                     const std::map<std::string, std::string>& aliases = {}) const;

  // "did you mean 'x'?" suggestion for an unknown name ("" if nothing close).
  std::string SuggestName(const std::string& name,
                          const std::map<std::string, std::string>& aliases = {}) const;

  // Modules whose import is refused, with why and what to use instead:
  // `module` and every module under it ("flaxformer" covers
  // "flaxformer.components.embedding"). Config refuses the import statement
  // at its line with "'<imported module>' <reason>", rather than one unknown
  // configurable per binding.
  void RefuseModule(const std::string& module, std::string reason);
  // The reason `module` is refused, or "" when it is not.
  std::string ModuleRefusal(const std::string& module) const;

 private:
  std::map<std::string, ConfigurableSpec> specs_;
  std::map<std::string, std::string> refused_modules_;
};

}  // namespace t5xx::gin
