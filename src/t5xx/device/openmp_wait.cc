#include "t5xx/device/openmp_wait.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace t5xx::device {

void ApplyOpenMpWaitDefaults(char** argv) {
  if (!WantsDefaultGompSpinCount()) return;
  if (setenv("GOMP_SPINCOUNT", kDefaultGompSpinCount, /*overwrite=*/0) != 0) return;
  execv("/proc/self/exe", argv);
  // Still here: the restart failed (no /proc, say). Run on as started; the
  // variable stays set so that child processes do not try again.
}

std::string OpenMpWaitDescription() {
  if (const char* spin = std::getenv("GOMP_SPINCOUNT")) return std::string("GOMP_SPINCOUNT=") + spin;
  if (const char* policy = std::getenv("OMP_WAIT_POLICY")) {
    return std::string("OMP_WAIT_POLICY=") + policy;
  }
  return "libgomp's default spin";
}

}  // namespace t5xx::device
