// main() of the benchmarks that run libtorch: the same intra-op threading as
// the t5xx binary (src/t5xx/cli/main.cc: every hardware thread unless
// OMP_NUM_THREADS is set), then Google Benchmark's usual steps.
#pragma once

#include <benchmark/benchmark.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace t5xx::bench {

// Sets the threads, runs the benchmarks named on the command line; returns
// main's exit status (1 for an unrecognized argument).
inline int RunTorchBenchmarks(int argc, char** argv) {
  if (!std::getenv("OMP_NUM_THREADS")) {
    at::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace t5xx::bench
