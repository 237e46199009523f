// Where this process stands in a multi-process run, read from the variables
// the launchers clusters use set: torchrun (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), Slurm's srun (SLURM_PROCID,
// SLURM_STEP_NUM_TASKS, SLURM_LOCALID; the master from MASTER_ADDR or
// SLURM_LAUNCH_NODE_IPADDR) and Open MPI's mpirun
// (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK,
// OMPI_COMM_WORLD_LOCAL_SIZE; the master from MASTER_ADDR). torchrun's
// variables win when several are set. t5x's counterpart is
// jax.distributed.initialize's cluster detection. Framework-free.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace t5xx::partitioning {

struct ProcessEnvironment {
  int rank = 0;        // in [0, world_size)
  int world_size = 1;
  int local_rank = 0;  // on this host
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";  // where rank 0 serves the rendezvous
  int master_port = 29500;
  std::string launcher;  // "torchrun", "slurm", "openmpi" or "single process"
  // torchrun's agent already serves the store at MASTER_ADDR:MASTER_PORT
  // (TORCHELASTIC_USE_AGENT_STORE=True): every rank, rank 0 included,
  // joins it as a client.
  bool agent_store = false;
  // torchrun's TORCHELASTIC_RESTART_COUNT: the rendezvous keys of each
  // attempt are kept apart in a long-lived agent store.
  int restart_count = 0;
};

// Reads the environment through `get` (std::getenv by default). Returns
// nullopt when no launcher's variables are set (a single process). Throws
// t5xx::Error naming the variable for a value that is not a number, a rank
// outside [0, world size), or a missing master address for Open MPI.
std::optional<ProcessEnvironment> DetectProcessEnvironment(
    const std::function<const char*(const char*)>& get = nullptr);

}  // namespace t5xx::partitioning
