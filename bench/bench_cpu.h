// How every libtorch benchmark starts, as the t5xx binary does: the OpenMP
// spin (device/openmp_wait.h, which may restart the process once), then the
// global --intra_op_threads flag and the CPU set-up (device/cpu_runtime.h),
// whose one-line description goes to stderr as "CPU: ...".
#pragma once

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "t5xx/device/cpu_runtime.h"
#include "t5xx/device/openmp_wait.h"
#include "t5xx/partitioning/collectives/c10d_communicator.h"

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

// How a multi-process benchmark worker starts, under a launcher (torchrun's
// variables, as `t5xx launch` sets them) or alone: the CPU set-up `t5xx
// train` makes (threads from OMP_NUM_THREADS, the tensor cache shared among
// this host's processes), then the communicator joining the others (a
// LocalCommunicator alone). Throws t5xx::Error when the rendezvous fails.
inline std::shared_ptr<const partitioning::Communicator> JoinBenchProcesses() {
  const auto env = partitioning::DetectProcessEnvironment();
  device::CpuRuntimeOptions cpu;
  cpu.processes_per_host = env ? env->world_size : 1;
  device::ConfigureCpuRuntime(cpu);
  if (env && env->world_size > 1) return partitioning::C10dCommunicator::Connect(*env);
  return std::make_shared<partitioning::LocalCommunicator>();
}

}  // namespace t5xx::bench
