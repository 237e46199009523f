// main() of the benchmarks that run libtorch: the same CPU set-up as the t5xx
// binary (device::ConfigureCpuRuntime: intra-op threads from the usable cores
// unless OMP_NUM_THREADS or --intra_op_threads=N says, and the caching CPU
// allocator), then Google Benchmark's usual steps.
#pragma once

#include <benchmark/benchmark.h>

#include <iostream>
#include <string>
#include <vector>

#include "t5xx/device/cpu_runtime.h"
#include "t5xx/device/openmp_wait.h"

namespace t5xx::bench {

// Sets the threads, runs the benchmarks named on the command line; returns
// main's exit status (1 for an unrecognized argument).
inline int RunTorchBenchmarks(int argc, char** argv) {
  t5xx::device::ApplyOpenMpWaitDefaults(argv);  // as the t5xx binary (openmp_wait.h)
  std::vector<std::string> args(argv + 1, argv + argc);
  t5xx::device::CpuRuntimeOptions cpu;
  cpu.intra_op_threads = t5xx::device::TakeIntraOpThreadsFlag(args);
  std::cerr << "CPU: " << t5xx::device::ConfigureCpuRuntime(cpu) << std::endl;
  // Google Benchmark sees the arguments without --intra_op_threads.
  std::vector<char*> rest = {argv[0]};
  for (std::string& a : args) rest.push_back(a.data());
  argc = static_cast<int>(rest.size());
  argv = rest.data();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace t5xx::bench
