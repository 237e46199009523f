// --seqio_additional_cache_dirs and --cache_dir (see cache_dir_flags.h).
#include "t5xx/cli/cache_dir_flags.h"

#include <sstream>

#include "t5xx/data/cache/task_cache.h"
#include "t5xx/data/tfds/tfds_data_source.h"
#include "t5xx/util/error.h"

namespace t5xx::cli {

std::vector<std::string> TakeCacheDirFlags(std::vector<std::string>& args,
                                           const std::string& command) {
  static const std::string kList = "seqio_additional_cache_dirs", kOne = "cache_dir",
                           kTfds = "tfds_data_dir";
  std::vector<std::string> dirs, rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string name, value;
    bool matched = false;
    for (const std::string* flag : {&kList, &kOne, &kTfds}) {
      const std::string dashed = "--" + *flag;
      if (a == dashed) {
        T5XX_CHECK(i + 1 < args.size(), "t5xx " + command + ": flag " + dashed +
                                            " needs a value, e.g. " + dashed + "=/data/cache");
        value = args[++i];
      } else if (a.rfind(dashed + "=", 0) == 0) {
        value = a.substr(dashed.size() + 1);
      } else {
        continue;
      }
      name = *flag;
      matched = true;
      break;
    }
    if (!matched) {
      rest.push_back(a);
      continue;
    }
    T5XX_CHECK(!value.empty(), "t5xx " + command + ": flag --" + name +
                                   " has an empty value; give a directory");
    if (name == kTfds) {
      seqio::SetTfdsDataDirOverride(value);
      continue;
    }
    if (name == kOne) {
      dirs.push_back(value);
      continue;
    }
    std::stringstream ss(value);
    for (std::string item; std::getline(ss, item, ',');) {
      T5XX_CHECK(!item.empty(), "t5xx " + command + ": --" + kList + "='" + value +
                                    "' has an empty directory; separate directories by one "
                                    "comma");
      dirs.push_back(item);
    }
    T5XX_CHECK(value.back() != ',', "t5xx " + command + ": --" + kList + "='" + value +
                                        "' ends with a comma; remove it");
  }
  args = std::move(rest);
  if (!dirs.empty()) seqio::AddGlobalCacheDirs(dirs);
  return dirs;
}

}  // namespace t5xx::cli
