// `t5xx`: sets how libgomp's threads wait, then runs the program itself,
// t5xx_main, from the same directory (execv: same pid, argv, open files).
//
// Why a separate launcher: libgomp reads GOMP_SPINCOUNT in its constructor,
// before any of t5xx_main's code runs (device/openmp_wait.h says why t5xx
// sets it). t5xx_main alone can only set it and start itself again, which
// loads libtorch and its dependencies twice: 0.3-0.9 s of every command's
// start-up measured on 2 cores (issue 54). This launcher links only libc,
// so the one load is t5xx_main's. The rule is ApplyOpenMpWaitDefaults':
// nothing is set when GOMP_SPINCOUNT or OMP_WAIT_POLICY is, or with
// T5XX_OPENMP_RESTART=0; t5xx_main run directly still restarts itself.
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "t5xx/device/openmp_wait.h"

int main(int argc, char** argv) {
  (void)argc;
  if (t5xx::device::WantsDefaultGompSpinCount()) {
    setenv("GOMP_SPINCOUNT", t5xx::device::kDefaultGompSpinCount, /*overwrite=*/0);
  }
  // t5xx_main's directory: this executable's (/proc/self/exe), else argv[0]'s
  // when it names a path; with neither, the error below.
  std::string dir;
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe));
  if (n > 0 && n < static_cast<ssize_t>(sizeof(exe))) {
    dir.assign(exe, static_cast<size_t>(n));
  } else if (argv[0] != nullptr && std::strchr(argv[0], '/') != nullptr) {
    dir = argv[0];
  }
  const size_t slash = dir.rfind('/');
  const std::string program =
      slash == std::string::npos ? "" : dir.substr(0, slash + 1) + "t5xx_main";
  if (program.empty()) {
    std::fprintf(stderr,
                 "t5xx: error: cannot tell where t5xx_main is (no /proc/self/exe and argv[0] "
                 "'%s' names no directory); run t5xx by its path, e.g. build/bin/t5xx\n",
                 argv[0] ? argv[0] : "");
    return 2;
  }
  execv(program.c_str(), argv);
  std::fprintf(stderr,
               "t5xx: error: cannot run %s (%s): the t5xx launcher needs "
               "t5xx_main beside it; "
               "build both with scripts/build.sh (T5XX_BUILD_TARGETS=t5xx)\n",
               program.c_str(), std::strerror(errno));
  return 2;
}
