// See user_cache_dir.h.
#include "t5xx/util/system/user_cache_dir.h"

#include <cstdlib>

#include "t5xx/util/error.h"

namespace t5xx {

std::string UserCacheDir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
  };
  if (!env("XDG_CACHE_HOME").empty()) return env("XDG_CACHE_HOME") + "/t5xx";
  if (!env("HOME").empty()) return env("HOME") + "/.cache/t5xx";
  throw Error("cannot choose t5xx's cache directory: neither XDG_CACHE_HOME nor HOME is set");
}

}  // namespace t5xx
