// A trace of some work under libtorch's own profiler (Kineto, the engine of
// torch.profiler), written as a Chrome trace JSON (chrome://tracing,
// ui.perfetto.dev; scripts/gpu_trace_top.py tables its kernels): every ATen
// op on the CPU ("cpu_op" events) and, on a GPU, every kernel and copy with
// its duration on the device ("kernel", "gpu_memcpy" events, from CUPTI).
// The C++ entry points are torch::autograd::profiler::{prepareProfiler,
// enableProfiler, disableProfiler} and ProfilerResult::save (libtorch 2.x).
// Debian's libtorch 1.13 is built without Kineto (ProfilerResult::save
// refuses: "requires ... USE_KINETO=1"), so there the legacy profiler's
// RecordProfile writes the trace: the CPU ops alone, as "X" events without
// a category.
#pragma once

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/version.h>

#include <exception>
#include <set>
#include <string>

#include "t5xx/device/device.h"

namespace t5xx::bench {

// Runs `work` under the profiler (CPU activities, and CUDA ones on a GPU),
// waits for the device, saves the trace at `path`. Returns "" when saved,
// else why not (the profiler's own error, e.g. a libtorch built without
// Kineto); the work has run either way.
// The first line of an exception's message (c10::Error's carry a backtrace).
inline std::string FirstLine(const std::exception& e) {
  const std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

template <typename Work>
std::string TraceToFile(const std::string& path, at::Device device, Work&& work) {
#if TORCH_VERSION_MAJOR < 2
  try {
    torch::autograd::profiler::RecordProfile profile(path);
    work();
    device::Synchronize(device);
  } catch (const std::exception& e) {
    return "the legacy profiler failed: " + FirstLine(e);
  }
  return "";
#else
  namespace prof = torch::profiler::impl;
  const prof::ProfilerConfig config(prof::ProfilerState::KINETO);
  std::set<prof::ActivityType> activities = {prof::ActivityType::CPU};
  if (device.is_cuda()) activities.insert(prof::ActivityType::CUDA);
  try {
    torch::autograd::profiler::prepareProfiler(config, activities);
    torch::autograd::profiler::enableProfiler(config, activities);
  } catch (const std::exception& e) {
    work();
    return "the profiler did not start: " + FirstLine(e);
  }
  work();
  device::Synchronize(device);
  try {
    auto result = torch::autograd::profiler::disableProfiler();
    if (!result) return "the profiler returned no result";
    result->save(path);
  } catch (const std::exception& e) {
    return "the trace could not be saved: " + FirstLine(e);
  }
  return "";
#endif
}

}  // namespace t5xx::bench
