// See t5_catalog.h.
#include "t5xx/catalog/t5_catalog.h"

#include <mutex>
#include <set>
#include <utility>

#include "t5xx/catalog/catalog_builder.h"

namespace t5xx::catalog {

bool IsT5CatalogModule(const std::string& module) {
  return module == "t5.data" || module == "t5.data.tasks" || module == "t5.data.mixtures";
}

void RegisterT5Catalog(seqio::TaskRegistry& tasks, seqio::MixtureRegistry& mixtures,
                       const T5CatalogOptions& options) {
  // Once per pair of registries, as a Python module is imported once.
  static std::mutex mu;
  static std::set<std::pair<const void*, const void*>> done;
  std::lock_guard<std::mutex> lock(mu);
  if (!done.insert({&tasks, &mixtures}).second) return;
  try {
    internal::CatalogBuilder b(tasks, options);
    internal::AddPretrainingTasks(b);
    internal::AddGlueTasks(b);
    internal::AddGenerationTasks(b);
    internal::AddT5Mixtures(tasks, mixtures);
  } catch (...) {
    done.erase({&tasks, &mixtures});
    throw;
  }
}

namespace {

std::pair<std::vector<std::string>, std::vector<std::string>> CatalogNames() {
  static const auto* names = [] {
    // Registries of their own, kept (RegisterT5Catalog remembers their
    // addresses).
    auto* tasks = new seqio::TaskRegistry();
    auto* mixtures = new seqio::MixtureRegistry();
    RegisterT5Catalog(*tasks, *mixtures, T5CatalogOptions{});
    return new std::pair<std::vector<std::string>, std::vector<std::string>>(tasks->Names(),
                                                                           mixtures->Names());
  }();
  return *names;
}

}  // namespace

std::vector<std::string> T5CatalogTaskNames() { return CatalogNames().first; }
std::vector<std::string> T5CatalogMixtureNames() { return CatalogNames().second; }

}  // namespace t5xx::catalog
