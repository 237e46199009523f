// Command-line gin flags, as t5x's gin_utils reads them -- the implementation
// of flags.h.
#include "t5xx/config/flags.h"

#include <filesystem>

#include "t5xx/util/error.h"

#ifndef T5XX_CONFIG_DIR
#define T5XX_CONFIG_DIR ""
#endif

namespace t5xx::gin {

std::string DefaultConfigDir() { return T5XX_CONFIG_DIR; }

namespace {

struct PendingBinding {
  bool is_dot_flag;      // --gin.NAME=VALUE
  std::string name;      // NAME (dot flags)
  std::string text;      // VALUE (dot flags) or the binding text
  std::string source;    // location name
};

// If `arg` is `--flag=value` or `--flag` (value in the next arg), returns true
// and sets *value, advancing *i past a separate value.
bool TakeFlag(const std::vector<std::string>& args, size_t* i, const std::string& flag,
              std::string* value) {
  const std::string& arg = args[*i];
  if (arg == flag) {
    if (*i + 1 >= args.size()) throw Error("flag " + flag + " needs a value (" + flag + "=<value>)");
    *value = args[++*i];
    return true;
  }
  if (arg.rfind(flag + "=", 0) == 0) {
    *value = arg.substr(flag.size() + 1);
    return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> ParseGinFlags(const std::vector<std::string>& args, Config& config,
                                       const std::string& config_dir) {
  std::vector<std::string> rest, files, search_paths;
  std::vector<PendingBinding> bindings;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      rest.insert(rest.end(), args.begin() + i, args.end());
      break;
    }
    std::string value;
    if (TakeFlag(args, &i, "--gin_file", &value)) {
      if (value.empty()) throw Error("flag --gin_file has an empty value");
      files.push_back(value);
    } else if (TakeFlag(args, &i, "--gin_bindings", &value)) {
      bindings.push_back({false, "", value, "--gin_bindings flag"});
    } else if (TakeFlag(args, &i, "--gin_search_paths", &value)) {
      size_t start = 0;
      while (start <= value.size()) {
        size_t comma = value.find(',', start);
        std::string dir = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!dir.empty()) search_paths.push_back(dir);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (arg.rfind("--gin.", 0) == 0) {
      size_t eq = arg.find('=');
      if (eq == std::string::npos) {
        throw Error("flag '" + arg + "' has no '=': write " + arg + "=<value>");
      }
      std::string name = arg.substr(6, eq - 6);
      if (name.empty()) throw Error("flag '" + arg + "' names nothing: write --gin.NAME=<value>");
      bindings.push_back({true, name, arg.substr(eq + 1), "--gin." + name + " flag"});
    } else {
      rest.push_back(arg);
    }
  }
  for (const std::string& dir : search_paths) config.AddSearchPath(dir);
  if (!config_dir.empty() && std::filesystem::is_directory(config_dir)) config.AddSearchPath(config_dir);
  for (const std::string& f : files) config.ParseFile(f);
  for (const PendingBinding& b : bindings) {
    if (b.is_dot_flag) {
      config.AddFlagBinding(b.name, b.text, b.source);
    } else {
      config.AddBinding(b.text, b.source);
    }
  }
  return rest;
}

}  // namespace t5xx::gin
