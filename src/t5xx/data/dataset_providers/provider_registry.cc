// The registries' shared error text (unknown task or mixture, did you mean)
// (see provider_registry.h).
#include "t5xx/data/dataset_providers/provider_registry.h"

#include <map>
#include <mutex>

#include "t5xx/util/edit_distance.h"
#include "t5xx/util/names.h"

namespace t5xx::seqio {

std::string DidYouMean(const std::string& name,
                       const std::vector<std::string>& names) {
  const std::vector<std::string> close = ClosestNames(name, names);
  return close.empty() ? "" : "; did you mean " + BracketedList(close) + "?";
}

namespace {
std::mutex& ModuleMutex() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, std::string>& ModuleOf() {
  static auto* m = new std::map<std::string, std::string>();
  return *m;
}
}  // namespace

void SetModuleProviderNames(const std::string& module, std::vector<std::string> names) {
  std::lock_guard<std::mutex> lock(ModuleMutex());
  for (std::string& n : names) ModuleOf()[std::move(n)] = module;
}

std::string ModuleOfProvider(const std::string& name) {
  std::lock_guard<std::mutex> lock(ModuleMutex());
  auto it = ModuleOf().find(name);
  return it == ModuleOf().end() ? "" : it->second;
}

std::string ModuleImportHint(const std::string& name) {
  const std::string module = ModuleOfProvider(name);
  if (module.empty()) return "";
  return "; '" + name + "' is registered by importing " + module + " (t5's task catalog): add `" +
         "import " + module + "` to a gin file or bind MIXTURE_OR_TASK_MODULE = '" + module +
         "' (t5xx train/infer/eval/config), or pass --module_import=" + module +
         " (t5xx data, cache_tasks)";
}

void ThrowUnknownProvider(const std::string& kind, const std::string& name,
                          const std::vector<std::string>& names) {
  std::string msg = "no " + kind + " named '" + name + "'" + ModuleImportHint(name) +
                    DidYouMean(name, names);
  msg += names.empty()
             ? "; no " + kind + "s are registered"
             : "; registered " + kind + "s: " + BracketedList(names, kMaxListedNames);
  throw Error(msg);
}

}  // namespace t5xx::seqio
