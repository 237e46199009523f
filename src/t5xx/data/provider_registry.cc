// See provider_registry.h.
#include "t5xx/data/provider_registry.h"

#include "t5xx/util/edit_distance.h"
#include "t5xx/util/names.h"

namespace t5xx::seqio {

void ThrowUnknownProvider(const std::string& kind, const std::string& name,
                          const std::vector<std::string>& names) {
  constexpr size_t kMaxListed = 50;
  std::string msg = "no " + kind + " named '" + name + "'";
  const std::vector<std::string> close = ClosestNames(name, names);
  if (!close.empty()) msg += "; did you mean " + BracketedList(close) + "?";
  msg += names.empty() ? "; no " + kind + "s are registered"
                       : "; registered " + kind + "s: " + BracketedList(names, kMaxListed);
  throw Error(msg);
}

}  // namespace t5xx::seqio
