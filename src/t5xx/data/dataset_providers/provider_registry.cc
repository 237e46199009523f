// The registries' shared error text (unknown task or mixture, did you mean)
// (see provider_registry.h).
#include "t5xx/data/dataset_providers/provider_registry.h"

#include "t5xx/util/edit_distance.h"
#include "t5xx/util/names.h"

namespace t5xx::seqio {

std::string DidYouMean(const std::string& name,
                       const std::vector<std::string>& names) {
  const std::vector<std::string> close = ClosestNames(name, names);
  return close.empty() ? "" : "; did you mean " + BracketedList(close) + "?";
}

void ThrowUnknownProvider(const std::string& kind, const std::string& name,
                          const std::vector<std::string>& names) {
  std::string msg = "no " + kind + " named '" + name + "'" + DidYouMean(name, names);
  msg += names.empty()
             ? "; no " + kind + "s are registered"
             : "; registered " + kind + "s: " + BracketedList(names, kMaxListedNames);
  throw Error(msg);
}

}  // namespace t5xx::seqio
