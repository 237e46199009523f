// Start-up of libtorch's CPU side (see cpu_runtime.h).
#include "t5xx/device/cpu_runtime.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "t5xx/device/cpu_caching_allocator.h"
#include "t5xx/device/cpu_contention.h"
#include "t5xx/device/openmp_wait.h"
#include "t5xx/kernels/cpu/cpu_gemm.h"
#include "t5xx/util/error.h"

namespace t5xx::device {
namespace {

std::optional<std::string> ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// quota/period in cores from two numbers as text; nullopt for "max", -1 or junk.
std::optional<double> QuotaCores(const std::string& quota, const std::string& period) {
  if (quota == "max") return std::nullopt;
  char* end = nullptr;
  const double q = std::strtod(quota.c_str(), &end);
  if (end == quota.c_str() || q <= 0) return std::nullopt;
  const double p = std::strtod(period.c_str(), &end);
  if (end == period.c_str() || p <= 0) return std::nullopt;
  return q / p;
}

// The quota of a cgroup directory and its ancestors up to `mount` (the
// smallest wins); `read` reads one directory's quota.
template <typename Read>
std::optional<double> SmallestUpwards(const std::string& mount, std::string rel, Read read) {
  std::optional<double> best;
  while (true) {
    if (auto q = read(mount + rel)) best = best ? std::min(*best, *q) : *q;
    if (rel.empty() || rel == "/") break;
    const size_t slash = rel.find_last_of('/');
    rel = slash == std::string::npos ? std::string() : rel.substr(0, slash);
  }
  return best;
}

}  // namespace

std::optional<double> CgroupCpuQuotaCores(const std::string& cgroup_root,
                                          const std::string& proc_self_cgroup) {
  std::ifstream in(proc_self_cgroup);
  std::string line;
  std::optional<double> best;
  auto take = [&](std::optional<double> q) {
    if (q) best = best ? std::min(*best, *q) : *q;
  };
  while (std::getline(in, line)) {
    // "hierarchy-id:controllers:path"
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (!path.empty() && path.back() == '/') path.pop_back();
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      // cgroup v2: cpu.max = "<quota|max> <period>".
      take(SmallestUpwards(cgroup_root, path, [](const std::string& dir) {
        auto l = ReadFirstLine(dir + "/cpu.max");
        if (!l) return std::optional<double>();
        std::istringstream fields(*l);
        std::string quota, period;
        fields >> quota >> period;
        return QuotaCores(quota, period);
      }));
      continue;
    }
    std::istringstream names(controllers);
    std::string name;
    bool has_cpu = false;
    while (std::getline(names, name, ',')) has_cpu = has_cpu || name == "cpu";
    if (!has_cpu) continue;
    // cgroup v1: the cpu controller is mounted as "cpu,cpuacct" or "cpu".
    for (const std::string& mount : {cgroup_root + "/" + controllers, cgroup_root + "/cpu"}) {
      take(SmallestUpwards(mount, path, [](const std::string& dir) {
        auto q = ReadFirstLine(dir + "/cpu.cfs_quota_us");
        auto p = ReadFirstLine(dir + "/cpu.cfs_period_us");
        if (!q || !p) return std::optional<double>();
        return QuotaCores(*q, *p);
      }));
    }
  }
  return best;
}

int UsableCoreCount() {
  int cores = AffinityCoreCount();
  if (auto quota = CgroupCpuQuotaCores()) {
    cores = std::min(cores, std::max(1, static_cast<int>(std::ceil(*quota - 1e-9))));
  }
  return cores;
}

int TakeIntraOpThreadsFlag(std::vector<std::string>& args) {
  const std::string prefix = "--intra_op_threads=";
  int threads = 0;
  for (auto it = args.begin(); it != args.end();) {
    if (it->rfind(prefix, 0) != 0) {
      ++it;
      continue;
    }
    const std::string value = it->substr(prefix.size());
    char* end = nullptr;
    const long n = std::strtol(value.c_str(), &end, 10);
    T5XX_CHECK(!value.empty() && end != nullptr && *end == '\0' && n >= 1 && n <= 4096,
               "--intra_op_threads='" + value +
                   "' is not a positive number of threads; give the libtorch intra-op threads, "
                   "e.g. --intra_op_threads=4, or leave it out to use the cores this process "
                   "may run on");
    threads = static_cast<int>(n);
    it = args.erase(it);
  }
  return threads;
}

namespace {
std::mutex g_description_mutex;
std::string g_description;
}  // namespace

std::string ConfiguredCpuRuntimeDescription() {
  std::lock_guard<std::mutex> lock(g_description_mutex);
  return g_description;
}

std::string ConfigureCpuRuntime(const CpuRuntimeOptions& options) {
  T5XX_CHECK(options.intra_op_threads >= 0, "intra_op_threads must be >= 0");
  const int cores = UsableCoreCount();
  std::ostringstream out;
  if (options.intra_op_threads > 0) {
    at::set_num_threads(options.intra_op_threads);
    out << options.intra_op_threads << " intra-op threads (--intra_op_threads)";
  } else if (std::getenv("OMP_NUM_THREADS") != nullptr) {
    out << at::get_num_threads() << " intra-op threads (OMP_NUM_THREADS)";
  } else {
    const int threads = std::max(1, cores / std::max(1, options.processes_per_host));
    at::set_num_threads(threads);
    out << threads << " intra-op threads (" << cores << " usable cores";
    if (options.processes_per_host > 1) out << " / " << options.processes_per_host << " processes";
    out << ")";
  }
  const size_t limit = DefaultCpuCacheLimitBytes(options.processes_per_host);
  InstallCpuCachingAllocator(limit);
  if (limit > 0) {
    out << "; CPU tensor cache up to " << static_cast<double>(limit) / (1u << 30) << " GiB";
  } else {
    out << "; CPU tensor cache off (T5XX_CPU_CACHE_MIB=0)";
  }
  out << "; OpenMP wait: " << OpenMpWaitDescription() << "; " << CpuGemmDescription();
  std::lock_guard<std::mutex> lock(g_description_mutex);
  g_description = out.str();
  return g_description;
}

}  // namespace t5xx::device
