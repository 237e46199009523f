// Reporting every error a check found at once, as one t5xx::Error (the
// config checks of gin's Finalize and of a train run use it).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "t5xx/util/error.h"

namespace t5xx {

// Nothing for no errors, Error(errors[0]) for one, else one Error
// "N errors in <what>:" followed by each error on its own line, indented by
// two spaces. Repeated messages count and print once.
inline void ThrowIfAny(const std::vector<std::string>& all_errors, const std::string& what) {
  // The same message from two checks (e.g. one missing corpus behind both the
  // train and the train-eval task) is reported once.
  // (A set, not a scan of the kept list: thousands of errors, as a fuzzed
  // config makes, must not cost their square.)
  std::vector<std::string> errors;
  std::set<std::string_view> seen;
  for (const std::string& e : all_errors) {
    if (seen.insert(e).second) errors.push_back(e);
  }
  if (errors.empty()) return;
  if (errors.size() == 1) throw Error(errors[0]);
  std::string msg = std::to_string(errors.size()) + " errors in " + what + ":";
  for (const std::string& e : errors) msg += "\n  " + e;
  throw Error(msg);
}

// Runs independent checks and keeps each one's t5xx::Error, so that all of
// them are reported together:
//   ErrorList errors;
//   if (errors.Attempt([&] { CheckA(); })) errors.Attempt([&] { CheckB(); });
//   errors.ThrowIfAny("the train configuration");
class ErrorList {
 public:
  // Runs `check`; false (and the error kept) when it throws t5xx::Error.
  template <typename Check>
  bool Attempt(const Check& check) {
    try {
      check();
      return true;
    } catch (const Error& e) {
      errors_.push_back(e.what());
      return false;
    }
  }
  void Add(std::string error) { errors_.push_back(std::move(error)); }
  bool empty() const { return errors_.empty(); }
  void ThrowIfAny(const std::string& what) const { ::t5xx::ThrowIfAny(errors_, what); }

 private:
  std::vector<std::string> errors_;
};

}  // namespace t5xx
