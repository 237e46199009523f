// main() of the benchmarks that run libtorch: the same CPU set-up as the t5xx
// binary (device::ConfigureCpuRuntime: intra-op threads from the usable cores
// unless OMP_NUM_THREADS or --intra_op_threads=N says, and the caching CPU
// allocator), then Google Benchmark's usual steps.
#pragma once

#include <benchmark/benchmark.h>

#include <iostream>
#include <string>
#include <vector>

#include "bench_cpu.h"

namespace t5xx::bench {

// Sets the threads, runs the benchmarks named on the command line; returns
// main's exit status (1 for an unrecognized argument).
inline int RunTorchBenchmarks(int argc, char** argv) {
  std::vector<std::string> args = SetUpBenchCpu(argc, argv);
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
