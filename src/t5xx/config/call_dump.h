// The calls gin makes from a command's entry points, written out as JSON:
// what each configurable receives when gin-config, given the same text,
// calls it. The oracle test (tests/config/gin_oracle_test.py) compares this
// with gin-config itself calling stand-in Python configurables.
//
// Model of a run (the one t5x's train/infer/eval scripts make): each root is
// called with no arguments at top level; an evaluated reference @x() is
// called while its caller's arguments are made, an unevaluated @x is called
// later, with no arguments, at top level (t5x and seqio call stored
// callables outside any gin scope), each in the scope CallScope gives.
//
// JSON (keys of objects sorted):
//   call     {"fn": full name, "scope": "a/b", "args": {param: value}}
//   value    null | true | false | int | float | "string"
//            | {"list": [value...]} | {"tuple": [value...]}
//            | {"dict": [[key, value]...]}       (Python dict order)
//            | {"default": true}                 (unbound: the default)
//            | {"call": call}                    (@x(): what it returned)
//            | {"callable": call}                (@x: what calling it did)
//            | {"callable": {"fn", "scope", "recursive": true}}
//                                                (@x reached again while
//                                                 being called: not expanded)
// Errors are t5xx::Error: a reference cycle (gin recurses without end), a
// required parameter left unbound, a %gin.REQUIRED reaching a call. No
// libtorch.
#pragma once

#include <string>
#include <vector>

#include "t5xx/config/config.h"
#include "t5xx/config/registry.h"

namespace t5xx::gin {

// {"calls": [call for each of `roots`]}. `config` must be finalized.
std::string DumpCalls(Config& config, const Registry& registry,
                      const std::vector<std::string>& roots);

// The registry as JSON, for stand-ins of the same names and signatures:
// {"configurables": [{"name": full name, "params": [{"name", "required"}]}]}.
std::string DumpRegistry(const Registry& registry);

}  // namespace t5xx::gin
