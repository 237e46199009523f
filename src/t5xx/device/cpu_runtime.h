// How a t5xx process sets up libtorch's CPU side at start-up: how many
// intra-op threads, the caching CPU allocator (cpu_caching_allocator.h), and
// which library runs float32 matmuls (cpu_gemm.h).
// The t5xx binary (cli/main.cc) and the benchmarks (bench/torch_bench_main.h)
// call ConfigureCpuRuntime once, before any tensor work.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace t5xx::device {

// The CPU cores this process may use: the cores in its affinity mask
// (cpu_contention.h AffinityCoreCount: sched_getaffinity, which taskset, cpusets and Slurm's --cpu-bind set),
// capped by a cgroup CPU quota when there is one (cgroup v2 cpu.max, or v1
// cpu.cfs_quota_us / cpu.cfs_period_us of the process's cgroup; docker
// --cpus and Kubernetes limits set these), rounded up. >= 1.
// std::thread::hardware_concurrency counts every online CPU instead: more
// threads than cores makes each OpenMP barrier wait for a thread that has no
// core to run on.
int UsableCoreCount();

// The cgroup CPU quota in cores (quota / period) of this process, or nullopt
// when unlimited or unknown. `cgroup_root` is where the cgroup file systems
// are mounted (a parameter for tests).
std::optional<double> CgroupCpuQuotaCores(const std::string& cgroup_root = "/sys/fs/cgroup",
                                          const std::string& proc_self_cgroup = "/proc/self/cgroup");

struct CpuRuntimeOptions {
  // Intra-op threads (libtorch's at::set_num_threads, which OpenMP and
  // OpenBLAS follow). 0: $OMP_NUM_THREADS when set (libtorch read it), else
  // UsableCoreCount() / processes_per_host.
  int intra_op_threads = 0;
  // Processes a launcher started on this host (torchrun's LOCAL_WORLD_SIZE,
  // Slurm's, Open MPI's); the cores are shared out among them.
  int processes_per_host = 1;
};

// Sets the intra-op threads and installs the caching CPU allocator with its
// default limit (DefaultCpuCacheLimitBytes; T5XX_CPU_CACHE_MIB=0 turns it
// off), and checks T5XX_CPU_GEMM (cpu_gemm.h). Returns a one-line
// description for logs ("2 intra-op threads (2 usable cores); CPU tensor
// cache up to 6.0 GiB; float32 matmuls: oneDNN 2.6.3 sgemm"). Throws
// t5xx::Error for a bad T5XX_CPU_CACHE_MIB or T5XX_CPU_GEMM, or
// intra_op_threads < 0.
std::string ConfigureCpuRuntime(const CpuRuntimeOptions& options);

// What the last ConfigureCpuRuntime call returned ("" before any call), for
// run logs.
std::string ConfiguredCpuRuntimeDescription();

// Takes the global flag --intra_op_threads=N (N >= 1) out of `args` when
// present and returns N; 0 when absent. Throws t5xx::Error naming the flag
// when N is not a positive integer.
int TakeIntraOpThreadsFlag(std::vector<std::string>& args);

}  // namespace t5xx::device
