// How long an idle OpenMP thread spins before it sleeps, set before libgomp
// starts.
//
// Why: libtorch's parallel regions and oneDNN's sgemm (cpu_gemm.h) run on
// GNU libgomp, whose threads, at the end of each region, spin for
// GOMP_SPINCOUNT iterations (300,000 by default: milliseconds) waiting for
// the slowest thread before sleeping in the kernel. On a machine shared with
// another busy process, the slowest thread is often one the kernel has
// descheduled for a whole time slice; the others then spin through their own
// slice, the kernel charges them for it and runs the competitor in their
// place next, and a step waits on every region. Measured on 2 cores (issue
// 16, t5xx_contention_bench, T5.1.1 tiny / small float32, 2 intra-op
// threads), ratio to alone beside two busy threads at nice 0:
//   GOMP_SPINCOUNT   300000 (default)  10000   3000   1000   300
//   tiny                        0.11    0.25   0.41   0.38     -
//   small                  0.15-0.19       -   0.30   0.44  0.49
// while alone throughput stayed within run-to-run noise down to 1000 (small
// lost 9% at 300, and 36% with OMP_WAIT_POLICY=passive, which sleeps at
// once). 1000 spins (tens of microseconds) cover the skew between threads
// that both have a core, and sleep when one does not.
//
// libgomp reads GOMP_SPINCOUNT and OMP_WAIT_POLICY once, in its constructor,
// before main runs (and before an executable's .preinit_array could change
// the environment that getenv reads), so the only way for a program to choose
// them is to start itself again with them set.
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

namespace t5xx::device {

// The GOMP_SPINCOUNT t5xx runs with unless the user set it or
// OMP_WAIT_POLICY.
constexpr const char* kDefaultGompSpinCount = "1000";

// Whether t5xx sets GOMP_SPINCOUNT=kDefaultGompSpinCount for libgomp: when
// neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY is set and T5XX_OPENMP_RESTART
// is not "0". Header-only: the launcher (cli/launcher/) links no t5xx
// library.
inline bool WantsDefaultGompSpinCount() {
  const char* restart = std::getenv("T5XX_OPENMP_RESTART");
  return std::getenv("GOMP_SPINCOUNT") == nullptr && std::getenv("OMP_WAIT_POLICY") == nullptr &&
         !(restart != nullptr && std::strcmp(restart, "0") == 0);
}

// Call first thing in main. When neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY
// is set, sets GOMP_SPINCOUNT=kDefaultGompSpinCount and replaces the process
// with the same executable (/proc/self/exe) and the same argv (execv: same
// pid, same open files); when either is set (by the user, or by this function
// before the restart), returns at once. If the restart fails, returns and the
// process runs on with libgomp's defaults (nothing else changes).
// T5XX_OPENMP_RESTART=0 turns the restart off.
void ApplyOpenMpWaitDefaults(char** argv);

// How libgomp's threads wait in this process, for logs:
// "GOMP_SPINCOUNT=1000", "OMP_WAIT_POLICY=passive" or "libgomp's default
// spin" (read from the environment libgomp started with).
std::string OpenMpWaitDescription();

}  // namespace t5xx::device
