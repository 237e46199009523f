// The integer flags of the benchmark tools with their own main()
// (t5xx_contention_bench, t5xx_step_profile).
#pragma once

#include <climits>
#include <cstdlib>
#include <iostream>
#include <string>

namespace t5xx::bench {

// `arg` is "<name>=<value>" (name with its dashes, e.g. "--steps"): returns
// the value when it is a whole number from `min` to INT_MAX; otherwise
// prints "<name>='<value>' is not a whole number from <min> to 2147483647"
// and exits with status 2.
// Returns `fallback` when `arg` is some other argument.
inline int IntFlag(const std::string& arg, const std::string& name, int fallback, int min = 1) {
  if (arg.rfind(name + "=", 0) != 0) return fallback;
  const std::string v = arg.substr(name.size() + 1);
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < min || n > INT_MAX) {
    std::cerr << name << "='" << v << "' is not a whole number from " << min << " to " << INT_MAX
              << std::endl;
    std::exit(2);
  }
  return static_cast<int>(n);
}

}  // namespace t5xx::bench
