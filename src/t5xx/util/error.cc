#include "t5xx/util/error.h"

namespace t5xx {

void Check(bool condition, const std::string& message) {
  if (!condition) throw Error(message);
}

}  // namespace t5xx
