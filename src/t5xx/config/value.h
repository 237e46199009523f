// t5xx::gin::Value and Location: the values a gin file can bind.
//
// A Value is an immutable-ish tree of gin literals (None, bool, int, float,
// string, list, tuple, dict), references (`@name`, `@scope/name()`), macro
// uses (`%NAME`) and the `%gin.REQUIRED` marker. Each value remembers where
// it was written (Location) so that every error can point at the text.
//
// Behaviour follows gin-config's literal syntax (a subset of Python literal
// syntax); see docs/gin.md. No libtorch.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace t5xx::gin {

// Where a piece of gin text came from.
//   file:   the file path, "<string>"-style source name, or a flag
//           description such as "--gin.MODEL_DIR flag".
//   line:   1-based line; 0 for flags and registered defaults.
//   column: 1-based column; 0 when unknown.
struct Location {
  std::string file;
  int line = 0;
  int column = 0;

  // "path:12:5" for file text; for flags (line == 0) the source name alone,
  // plus ", column N" when a column is known: "--gin.X flag, column 3".
  std::string ToString() const;
};

class Value {
 public:
  enum class Kind {
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kTuple,
    kDict,
    kReference,  // @name or @scope/name(); see reference_*().
    kMacro,      // %NAME (only before Config::Finalize resolves it).
    kRequired,   // %gin.REQUIRED
  };

  // A None value with no location.
  Value() = default;

  static Value None(Location loc = {});
  static Value Bool(bool v, Location loc = {});
  static Value Int(int64_t v, Location loc = {});
  static Value Float(double v, Location loc = {});
  static Value String(std::string v, Location loc = {});
  static Value List(std::vector<Value> items, Location loc = {});
  static Value Tuple(std::vector<Value> items, Location loc = {});
  static Value Dict(std::vector<std::pair<Value, Value>> items, Location loc = {});
  // `name` is the configurable name (as written before Config::Finalize, the
  // full registered name after); `scope` may be "" or "a/b"; `evaluated` is
  // true for `@name()` (call/instantiate) and false for `@name` (the callable).
  static Value Reference(std::string name, std::string scope, bool evaluated,
                         Location loc = {});
  static Value Macro(std::string name, Location loc = {});
  static Value Required(Location loc = {});

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }

  // Typed accessors. On the wrong kind they throw t5xx::Error:
  //   "<location>: expected an int for <description>, got 'abc' (a string)".
  bool AsBool() const;
  int64_t AsInt() const;
  double AsFloat() const;  // accepts ints
  const std::string& AsString() const;
  const std::vector<Value>& AsList() const;  // list or tuple
  const std::vector<std::pair<Value, Value>>& AsDict() const;

  // kReference only (throws t5xx::Error otherwise).
  const std::string& reference_name() const;
  const std::string& reference_scope() const;
  bool reference_evaluated() const;
  // kMacro only (throws t5xx::Error otherwise).
  const std::string& macro_name() const;

  // Gin syntax for this value; parsing it back gives an equal Value.
  // Strings use single quotes (Python repr style), floats the shortest
  // round-tripping form, tuples of one element keep the trailing comma.
  std::string ToGinString() const;

  const Location& location() const { return loc_; }
  void set_location(Location loc) { loc_ = std::move(loc); }

  // What this value is for, used in As*() errors, e.g.
  // "t5x.utils.DatasetConfig.batch_size". Config::Query sets it.
  const std::string& description() const { return description_; }
  void set_description(std::string d) { description_ = std::move(d); }

  // Structural equality (kind and contents); ignores location/description.
  // Int 1 and Float 1.0 are different values.
  bool operator==(const Value& other) const;
  bool operator!=(const Value& other) const { return !(*this == other); }

  // "an int", "a string", "a reference", ... for messages.
  static const char* KindName(Kind kind);

  // Mutable access for the config engine (alias and macro resolution).
  std::vector<Value>& mutable_items() { return items_; }
  std::vector<std::pair<Value, Value>>& mutable_dict() { return dict_; }
  void set_reference_name(std::string name) { str_ = std::move(name); }
  void set_reference_scope(std::string scope) { scope_ = std::move(scope); }

 private:
  [[noreturn]] void ThrowWrongKind(const char* expected) const;

  Kind kind_ = Kind::kNone;
  bool bool_ = false;
  int64_t int_ = 0;
  double float_ = 0.0;
  std::string str_;    // string value, reference name or macro name
  std::string scope_;  // reference scope
  bool evaluated_ = false;
  std::vector<Value> items_;
  std::vector<std::pair<Value, Value>> dict_;
  Location loc_;
  std::string description_;
};

// Whether two dict keys are one key of a Python dict: equal numbers (True,
// 1 and 1.0 are one key), equal strings, None, or tuples of such keys.
bool SamePythonDictKey(const Value& a, const Value& b);

// The entries of a dict literal as the Python dict gin builds from it: a
// repeated key keeps its first place and takes the last value.
std::vector<std::pair<Value, Value>> PythonDictItems(const std::vector<std::pair<Value, Value>>& items);

// Quotes `s` as a gin/Python string literal (single quotes, escapes).
std::string QuoteGinString(const std::string& s);

// Formats a double in the shortest form that parses back to the same value,
// always with a '.' or exponent so it reads back as a float ("1.0", "1e-30").
std::string FormatGinFloat(double v);

}  // namespace t5xx::gin
