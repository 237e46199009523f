// The device a train, infer or eval run computes on: t5xx's --device flag
// (RunOptions::device; default "auto": the GPU of this process's LOCAL_RANK
// when there is one, else the CPU, as JAX picks its default backend), made
// current for the process, with the CUDA matmul precision (--allow_tf32) and
// the memory a run's state may take there; and the processes the run joins.
// Shared by train, infer and eval.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <ostream>

#include "t5xx/partitioning/collectives/communicator.h"
#include "t5xx/run/train_setup.h"

namespace t5xx::run {

// The device options.device names for this process (device::ResolveDevice
// with the launcher's LOCAL_RANK, partitioning/launch/process_environment.h).
// Throws t5xx::Error naming --device.
at::Device RunDevice(const RunOptions& options);

// RunDevice, made current, with options.allow_tf32 applied to CUDA matmuls;
// logs "[setup] device: ..." (device::Describe) to `log`.
at::Device SetUpDevice(const RunOptions& options, std::ostream& log);

// Bytes a process's train state may take on `device`: the host's available
// memory (models::AvailableHostMemoryBytes, -1 when unknown) on the CPU, the
// GPU's total memory on a GPU.
int64_t AvailableMemoryBytes(at::Device device);

// The processes of the run: several (launched by torchrun, srun, mpirun or
// `t5xx launch`; partitioning/launch/process_environment.h) are joined over Gloo,
// NCCL between GPUs (T5XX_JOIN_TIMEOUT and T5XX_COLLECTIVE_TIMEOUT, in
// seconds, override the communicator's 5 and 30 minutes), logging "[setup]
// process R of N ..." to `log`; one process gets a LocalCommunicator.
// Throws t5xx::Error when the others cannot be joined (naming them) or a
// timeout variable is not a number of seconds.
std::shared_ptr<const partitioning::Communicator> JoinProcesses(const at::Device& device,
                                                                std::ostream& log);

}  // namespace t5xx::run
