// Parsing a command's own flags ("--name=value" / "--name value"),
// declared in commands.h; gin flags are config/flags.h's.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "t5xx/cli/commands.h"
#include "t5xx/util/error.h"

namespace t5xx::cli {

std::map<std::string, std::string> ParseFlags(const std::vector<std::string>& args,
                                              const std::vector<std::string>& known,
                                              const std::string& command) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    T5XX_CHECK(a.rfind("--", 0) == 0,
          "t5xx " + command + ": unexpected argument '" + a + "' (flags look like --name=value)");
    std::string name = a.substr(2), value;
    const size_t eq = name.find('=');
    bool has_value = eq != std::string::npos;
    if (has_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    bool ok = false;
    for (const auto& k : known) ok = ok || k == name;
    if (!ok) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "--" : ", --") + k;
      throw Error("t5xx " + command + ": unknown flag '--" + name + "' (known: " + list +
                  (command == "train" || command == "export" ? ", and the gin flags --gin_file, --gin.NAME, "
                                        "--gin_bindings, --gin_search_paths" : "") + ")");
    }
    if (!has_value) {
      T5XX_CHECK(i + 1 < args.size(), "t5xx " + command + ": flag --" + name + " needs a value");
      value = args[++i];
    }
    T5XX_CHECK(!value.empty(), "t5xx " + command + ": flag --" + name + " has an empty value");
    out[name] = value;
  }
  return out;
}

bool ParseBoolFlag(const std::string& command, const std::string& flag, const std::string& value) {
  T5XX_CHECK(value == "true" || value == "false",
             command + ": --" + flag + " must be true or false, got '" + value + "'");
  return value == "true";
}

int64_t ParseIntFlag(const std::string& command, const std::string& flag, const std::string& value,
                     int64_t minimum) {
  errno = 0;
  char* end = nullptr;
  const long long n = std::strtoll(value.c_str(), &end, 10);
  T5XX_CHECK(!value.empty() && *end == '\0' && errno == 0 && n >= minimum,
             command + ": --" + flag + " must be an integer >= " + std::to_string(minimum) +
                 ", got '" + value + "'");
  return n;
}

}  // namespace t5xx::cli
