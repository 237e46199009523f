// How every libtorch benchmark starts, as the t5xx binary does: the OpenMP
// spin (device/openmp_wait.h, which may restart the process once), then the
// global --intra_op_threads flag and the CPU set-up (device/cpu_runtime.h),
// whose one-line description goes to stderr as "CPU: ...".
#pragma once

#include <iostream>
#include <string>
#include <vector>

#include "t5xx/device/cpu_runtime.h"
#include "t5xx/device/openmp_wait.h"

namespace t5xx::bench {

// Call first thing in main. Returns argv[1..] without --intra_op_threads.
// Throws t5xx::Error for a bad --intra_op_threads, T5XX_CPU_CACHE_MIB or
// T5XX_CPU_GEMM (as ConfigureCpuRuntime).
inline std::vector<std::string> SetUpBenchCpu(int argc, char** argv) {
  t5xx::device::ApplyOpenMpWaitDefaults(argv);
  std::vector<std::string> args(argv + 1, argv + argc);
  t5xx::device::CpuRuntimeOptions cpu;
  cpu.intra_op_threads = t5xx::device::TakeIntraOpThreadsFlag(args);
  std::cerr << "CPU: " << t5xx::device::ConfigureCpuRuntime(cpu) << std::endl;
  return args;
}

}  // namespace t5xx::bench
