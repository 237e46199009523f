// The run's device -- the implementation of device_setup.h.
#include "t5xx/run/device_setup.h"

#include <chrono>
#include <cstdlib>

#include "t5xx/device/device.h"
#include "t5xx/models/memory_plan.h"
#include "t5xx/partitioning/collectives/c10d_communicator.h"
#include "t5xx/partitioning/launch/process_environment.h"
#include "t5xx/util/error.h"

namespace t5xx::run {

namespace {

// T5XX_JOIN_TIMEOUT and T5XX_COLLECTIVE_TIMEOUT (seconds) override the
// communicator's defaults (5 and 30 minutes).
partitioning::ConnectOptions ConnectOptionsFromEnvironment() {
  partitioning::ConnectOptions o;
  auto read = [](const char* name, std::chrono::milliseconds& into) {
    const char* v = std::getenv(name);
    if (!v || !*v) return;
    char* end = nullptr;
    const double seconds = std::strtod(v, &end);
    T5XX_CHECK(end && *end == '\0' && seconds > 0 && seconds <= 7 * 24 * 3600,
               "environment variable " + std::string(name) + " = '" + v +
                   "' is not a number of seconds in (0, 604800]");
    into = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  };
  read("T5XX_JOIN_TIMEOUT", o.join_timeout);
  read("T5XX_COLLECTIVE_TIMEOUT", o.collective_timeout);
  return o;
}

}  // namespace

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
    log << "; float32 matmuls " << (options.allow_tf32 ? "on the TF32 tensor cores as JAX's default precision (--allow_tf32=false: full float32)"
                                : "in full float32 (--allow_tf32=false)")
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

std::shared_ptr<const partitioning::Communicator> JoinProcesses(const at::Device& device,
                                                                std::ostream& log) {
  std::shared_ptr<const partitioning::Communicator> comm =
      std::make_shared<partitioning::LocalCommunicator>();
  const std::optional<partitioning::ProcessEnvironment> env =
      partitioning::DetectProcessEnvironment();
  if (env && env->world_size > 1) {
    partitioning::ConnectOptions connect = ConnectOptionsFromEnvironment();
    // NCCL between GPUs (one process per GPU), Gloo between CPU processes.
    if (device.is_cuda()) connect.backend = partitioning::CommunicationBackend::kNccl;
    connect.device = device;
    log << "[setup] process " << env->rank << " of " << env->world_size << " (" << env->launcher
        << "); joining at " << env->master_addr << ":" << env->master_port << " over "
        << (device.is_cuda() ? "NCCL" : "Gloo") << std::endl;
    auto joined = partitioning::C10dCommunicator::Connect(*env, connect);
    log << "[setup] process " << env->rank << ": collectives over " << joined->transport()
        << std::endl;
    comm = std::move(joined);
  }
  return comm;
}

}  // namespace t5xx::run
