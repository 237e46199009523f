// See cpu_contention.h.
#include "t5xx/device/cpu_contention.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace t5xx::device {

namespace {

// The busy seconds of the cores in `mask`, from /proc/stat's "cpuN" lines;
// -1 when the file cannot be read.
double CoresBusySeconds(const cpu_set_t& mask) {
  std::ifstream f("/proc/stat");
  if (!f) return -1;
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (tick <= 0) return -1;
  double busy_ticks = 0;
  bool any = false;
  std::string line;
  while (std::getline(f, line)) {
    if (line.compare(0, 3, "cpu") != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') {
      continue;
    }
    std::istringstream in(line.substr(3));
    int cpu = -1;
    // user nice system idle iowait irq softirq steal (guest is inside user)
    unsigned long long v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    in >> cpu;
    for (auto& x : v) in >> x;
    if (!in || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &mask)) continue;
    busy_ticks += static_cast<double>(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
    any = true;
  }
  return any ? busy_ticks / tick : -1;
}

bool AffinityMask(cpu_set_t* mask) {
  CPU_ZERO(mask);
  return ::sched_getaffinity(0, sizeof(*mask), mask) == 0;
}

std::string Fixed(double v, int digits = 2) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

}  // namespace

int AffinityCoreCount() {
  cpu_set_t mask;
  if (!AffinityMask(&mask)) return 1;
  return std::max(1, CPU_COUNT(&mask));
}

CpuClocks ReadCpuClocks() {
  CpuClocks c;
  c.wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec ts{};
  if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0) {
    c.process_cpu = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
  cpu_set_t mask;
  if (AffinityMask(&mask)) c.cores_busy = CoresBusySeconds(mask);
  return c;
}

CpuUse CpuUseBetween(const CpuClocks& before, const CpuClocks& after, int threads, int cores) {
  CpuUse u;
  u.wall_seconds = after.wall - before.wall;
  u.process_cpu_seconds = after.process_cpu - before.process_cpu;
  if (before.cores_busy >= 0 && after.cores_busy >= 0) {
    u.others_cpu_seconds =
        std::max(0.0, after.cores_busy - before.cores_busy - u.process_cpu_seconds);
  }
  u.threads = std::max(1, threads);
  u.cores = std::max(1, cores);
  return u;
}

ContentionVerdict JudgeContention(const CpuUse& use) {
  ContentionVerdict v;
  if (use.wall_seconds <= 0) return v;
  const int used = std::min(std::max(1, use.threads), std::max(1, use.cores));
  const double own = use.process_cpu_seconds / use.wall_seconds;  // cores this process kept
  const std::string own_text = "this process kept " + Fixed(own) + " of its " +
                               std::to_string(used) + " threads' cores busy";
  std::string others_text;
  bool others_busy = false;
  if (use.others_cpu_seconds >= 0) {
    const double others = use.others_cpu_seconds / use.wall_seconds;  // cores others used
    const double spare = static_cast<double>(std::max(1, use.cores) - used);
    others_busy = others > spare + 0.25;
    others_text = "other processes used " + Fixed(others) + " of the " +
                  std::to_string(std::max(1, use.cores)) + " cores it may run on";
  }
  const bool own_short = own < 0.9 * used;
  v.busy = own_short || others_busy;
  v.reason = own_text + (others_text.empty() ? "" : "; " + others_text);
  return v;
}

}  // namespace t5xx::device
