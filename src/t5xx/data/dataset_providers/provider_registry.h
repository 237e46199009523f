// seqio's registries (TaskRegistry, MixtureRegistry): name -> DatasetProvider
// of one kind, one template for both.
//
// Behaviour source: seqio/dataset_providers.py (DatasetProviderRegistry.add,
// get, remove; a name registered twice is an error). Framework-free: no
// libtorch.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "t5xx/util/error.h"

namespace t5xx::seqio {

// Registered names shown at most in one error message's list.
inline constexpr size_t kMaxListedNames = 50;

// "; did you mean [a, b]?" naming up to 3 of `names` close to `name` (by
// ClosestNames, util/edit_distance.h), or "" when none is.
std::string DidYouMean(const std::string& name,
                       const std::vector<std::string>& names);

// The "no task named 'x'; did you mean [...]?; registered tasks: [...]"
// error of ProviderRegistry::Get (`kind` is "task" or "mixture"). Always
// throws t5xx::Error.
[[noreturn]] void ThrowUnknownProvider(const std::string& kind,
                                       const std::string& name,
                                       const std::vector<std::string>& names);

// The names a module registers when imported (t5's catalog: t5.data.mixtures,
// registered by the run layer whether or not it is imported), for errors
// about a task or mixture of that module: ModuleOfProvider gives the module
// of `name`, or "" when no module names it. Thread-safe.
void SetModuleProviderNames(const std::string& module, std::vector<std::string> names);
std::string ModuleOfProvider(const std::string& name);
// "; 'x' is registered by importing t5.data.mixtures: ..." (how to import
// it in gin and with seqio's --module_import) when a module names `name`,
// else "".
std::string ModuleImportHint(const std::string& name);

// Name -> std::shared_ptr<const T>. Thread-safe. Global() is the process-wide
// registry (seqio's class-level registry); separate instances are handy in
// tests. T names itself with T::kKind ("task") and T::kRegistryName
// ("TaskRegistry"), used in errors.
template <typename T>
class ProviderRegistry {
 public:
  using Ptr = std::shared_ptr<const T>;

  static ProviderRegistry& Global() {
    static ProviderRegistry* registry = new ProviderRegistry();
    return *registry;
  }

  // Throws t5xx::Error if `provider` is null or one of that name is already
  // registered.
  void Add(Ptr provider) {
    const std::string kind = T::kKind;
    T5XX_CHECK(provider != nullptr,
               std::string(T::kRegistryName) + "::Add: " + kind + " is null");
    std::lock_guard<std::mutex> lock(mu_);
    if (providers_.count(provider->name())) {
      const std::string module = ModuleOfProvider(provider->name());
      throw Error(std::string(T::kRegistryName) + ": a " + kind + " named '" + provider->name() +
                  "' is already registered" +
                  (module.empty() ? "" : " (by importing " + module + ", t5's task catalog)") +
                  "; remove it first or pick another name");
    }
    providers_[provider->name()] = std::move(provider);
  }
  // Throws t5xx::Error for an unknown name: "did you mean" the closest names
  // by edit distance, then the registered names.
  Ptr Get(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = providers_.find(name);
    if (it != providers_.end()) return it->second;
    ThrowUnknownProvider(T::kKind, name, NamesLocked());
  }
  bool Has(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    return providers_.count(name) > 0;
  }
  // Returns whether one was removed.
  bool Remove(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    return providers_.erase(name) > 0;
  }
  std::vector<std::string> Names() const {  // sorted
    std::lock_guard<std::mutex> lock(mu_);
    return NamesLocked();
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    providers_.clear();
  }

 private:
  std::vector<std::string> NamesLocked() const {
    std::vector<std::string> out;
    for (const auto& kv : providers_) out.push_back(kv.first);
    return out;
  }

  mutable std::mutex mu_;
  std::map<std::string, Ptr> providers_;
};

}  // namespace t5xx::seqio
