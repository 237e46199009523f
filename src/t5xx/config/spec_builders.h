// Shorthands for declaring configurables (ConfigurableSpec, registry.h):
// a required or defaulted parameter, and literal default values. Used by
// every file that registers configurables beside the code that reads them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "t5xx/config/registry.h"

namespace t5xx::gin::spec {

// ParamType, shortened for specs: T::kInt, T::kOptionalFloat, ...
using T = ParamType;

// A parameter with no default: Config::Query throws when it is unbound.
inline ParamSpec Required(std::string name, ParamType type, std::string doc = "") {
  ParamSpec p;
  p.name = std::move(name);
  p.type = type;
  p.required = true;
  p.doc = std::move(doc);
  return p;
}

// A parameter with `default_value` (which must fit `type`, checked by
// Registry::Register).
inline ParamSpec Optional(std::string name, ParamType type, Value default_value,
                          std::string doc = "") {
  ParamSpec p;
  p.name = std::move(name);
  p.type = type;
  p.default_value = std::move(default_value);
  p.doc = std::move(doc);
  return p;
}

inline Value I(int64_t v) { return Value::Int(v); }
inline Value F(double v) { return Value::Float(v); }
inline Value B(bool v) { return Value::Bool(v); }
inline Value S(std::string v) { return Value::String(std::move(v)); }
inline Value None() { return Value::None(); }

}  // namespace t5xx::gin::spec
