// Whether other work competed for this process's CPU cores while it timed
// something (the matmul peak, trainer/matmul_peak.h): a timing taken on a
// busy machine is too low, and a rate divided by it too high.
//
// Two signs, both read around the timed span:
//  * this process's CPU time (CLOCK_PROCESS_CPUTIME_ID) against the wall
//    time its T compute threads had: an uncontended matmul on T threads
//    keeps T cores busy, ~T CPU-seconds per wall-second; a thread that
//    waits for a core does not accrue CPU time;
//  * the busy time of the cores this process may run on (its affinity
//    mask; /proc/stat's per-CPU user + nice + system + irq + softirq +
//    steal, the last being time a hypervisor gave to another guest) minus
//    this process's own: the other processes' share of those cores.
#pragma once

#include <string>

namespace t5xx::device {

// A reading of the clocks the verdict compares (seconds).
struct CpuClocks {
  double wall = 0;         // steady clock
  double process_cpu = 0;  // all threads of this process
  double cores_busy = -1;  // summed over the cores of the affinity mask; -1 unknown
};
CpuClocks ReadCpuClocks();

// The number of cores this process may run on (sched_getaffinity), >= 1.
int AffinityCoreCount();

// What happened between two readings.
struct CpuUse {
  double wall_seconds = 0;
  double process_cpu_seconds = 0;
  double others_cpu_seconds = -1;  // cores' busy time minus this process's; -1 unknown
  int threads = 1;                 // compute threads of the timed work
  int cores = 1;                   // cores the process may run on
};
CpuUse CpuUseBetween(const CpuClocks& before, const CpuClocks& after, int threads, int cores);

struct ContentionVerdict {
  bool busy = false;
  std::string reason;  // why, when busy; else what was seen (for the log)
};

// Busy when either
//   process_cpu_seconds < 0.9 * min(threads, cores) * wall_seconds
//     (the compute threads ran less than 90% of the time: they waited
//     for cores; an idle 2-core machine shows 1.99 of 2), or
//   others_cpu_seconds > (cores - min(threads, cores) + 0.25) * wall_seconds
//     (other processes used more than the cores this one leaves idle plus
//     a quarter of a core; skipped when unknown).
// Pure: a function of the numbers only. wall_seconds <= 0 gives not busy.
ContentionVerdict JudgeContention(const CpuUse& use);

}  // namespace t5xx::device
