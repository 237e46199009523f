// Joining names: hierarchical names (gin scopes "train/trainer.Trainer",
// dotted parameter paths "decoder.layers_0.mlp") and the lists of names that
// error messages show.
// Framework-free: no libtorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace t5xx {

// `prefix` + `separator` + `name`, or just `name` when `prefix` is empty
// (JoinName("a", "b") == "a/b", JoinName("", "b") == "b",
// JoinName("a", "b", '.') == "a.b"). Never throws (beyond allocation).
std::string JoinName(const std::string& prefix, const std::string& name,
                     char separator = '/');

// Whether `name` ends with `tail` (a parameter path's last parts:
// EndsWith("decoder.layers_0.mlp.wo.kernel", ".kernel")).
inline bool EndsWith(const std::string& name, const std::string& tail) {
  return name.size() >= tail.size() &&
         name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
}

// The parts of a hierarchical name, the inverse of JoinName:
// SplitName("a.b.c") == {"a", "b", "c"}; an empty part is kept
// (SplitName("a..b") == {"a", "", "b"}, SplitName("") == {""}).
std::vector<std::string> SplitName(const std::string& name, char separator = '.');

// "'a', 'b', 'c'": each name in single quotes, comma-separated ("" for none).
std::string QuotedList(const std::vector<std::string>& names);

// "[a, b, c]"; past `max_items` names the rest are summarised as
// ", ... (N more)" before the "]".
std::string BracketedList(const std::vector<std::string>& names,
                          size_t max_items = SIZE_MAX);

}  // namespace t5xx
