// The run's device -- the implementation of device_setup.h.
#include "t5xx/run/device_setup.h"

#include "t5xx/device/device.h"
#include "t5xx/models/memory_plan.h"
#include "t5xx/partitioning/process_environment.h"

namespace t5xx::run {

at::Device RunDevice(const RunOptions& options) {
  const auto env = partitioning::DetectProcessEnvironment();
  return device::ResolveDevice(options.device, env ? env->local_rank : 0, "--device");
}

at::Device SetUpDevice(const RunOptions& options, std::ostream& log) {
  const at::Device d = RunDevice(options);
  device::SetCurrentDevice(d);
  if (d.is_cuda()) device::SetCudaMatmulPrecision(options.allow_tf32);
  log << "[setup] device: " << device::Describe(d);
  if (d.is_cuda()) {
    log << "; float32 matmuls " << (options.allow_tf32 ? "may use TF32 (--allow_tf32)" : "in full float32")
        << ", bfloat16 matmuls on the tensor cores with float32 accumulation";
  } else if (options.device.empty() || options.device == "auto") {
    log << (device::BuiltWithCuda() ? "; no GPU visible" : "; this build has no CUDA");
  }
  log << std::endl;
  return d;
}

int64_t AvailableMemoryBytes(at::Device d) {
  if (auto total = device::TotalDeviceMemoryBytes(d)) return *total;
  return models::AvailableHostMemoryBytes();
}

}  // namespace t5xx::run
