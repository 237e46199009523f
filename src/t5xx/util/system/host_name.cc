// See host_name.h.
#include "t5xx/util/system/host_name.h"

#include <unistd.h>

namespace t5xx {

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace t5xx
