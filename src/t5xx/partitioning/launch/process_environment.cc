// Reading a launcher's environment (see process_environment.h).
#include "t5xx/partitioning/launch/process_environment.h"

#include <cerrno>
#include <cstdlib>

#include "t5xx/util/error.h"

namespace t5xx::partitioning {
namespace {

using Get = std::function<const char*(const char*)>;

// The integer value of `name`, or nullopt when unset or empty.
std::optional<int> Int(const Get& get, const char* name, const std::string& launcher) {
  const char* v = get(name);
  if (!v || !*v) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  T5XX_CHECK(errno == 0 && end && *end == '\0' && n >= 0 && n <= (1 << 24),
             "environment variable " + std::string(name) + " = '" + v +
                 "' is not a non-negative integer (" + launcher + " sets it; check the launch)");
  return static_cast<int>(n);
}

std::optional<std::string> Str(const Get& get, const char* name) {
  const char* v = get(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

}  // namespace

std::optional<ProcessEnvironment> DetectProcessEnvironment(const Get& get_in) {
  const Get get = get_in ? get_in : Get([](const char* n) { return std::getenv(n); });
  struct Names {
    const char* launcher;
    const char* rank;
    const char* size;
    const char* local_rank;
    const char* local_size;
  };
  static const Names kLaunchers[] = {
      {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
      // SLURM_STEP_NUM_TASKS, not SLURM_NTASKS: only srun's steps set it, so a
      // lone process in an sbatch script of N tasks is not taken for rank 0
      // of N.
      // (Its tasks-per-node variables read like "2(x3)": not used.)
      {"slurm", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", ""},
      {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
       "OMPI_COMM_WORLD_LOCAL_SIZE"},
  };
  for (const Names& n : kLaunchers) {
    const std::optional<int> rank = Int(get, n.rank, n.launcher);
    const std::optional<int> size = Int(get, n.size, n.launcher);
    if (!rank && !size) continue;
    if (!size && std::string(n.launcher) == "slurm") continue;  // not inside an srun step
    T5XX_CHECK(rank && size, std::string(n.launcher) + " environment: " +
                                 (rank ? n.size : n.rank) + " is not set though " +
                                 (rank ? n.rank : n.size) + " is; set both or neither");
    ProcessEnvironment e;
    e.launcher = n.launcher;
    e.rank = *rank;
    e.world_size = *size;
    T5XX_CHECK(e.world_size >= 1 && e.rank < e.world_size,
               std::string(n.launcher) + " environment: " + n.rank + " = " +
                   std::to_string(e.rank) + " is not in [0, " + n.size + " = " +
                   std::to_string(e.world_size) + ")");
    e.local_rank = Int(get, n.local_rank, n.launcher).value_or(e.rank);
    e.local_world_size =
        (*n.local_size ? Int(get, n.local_size, n.launcher) : std::nullopt).value_or(e.world_size);
    std::optional<std::string> addr = Str(get, "MASTER_ADDR");
    if (!addr && e.launcher == "slurm") addr = Str(get, "SLURM_LAUNCH_NODE_IPADDR");
    if (!addr && e.world_size > 1 && e.launcher == "openmpi") {
      throw Error("openmpi environment: MASTER_ADDR is not set; pass mpirun -x "
                  "MASTER_ADDR=<rank 0's host> (and MASTER_PORT)");
    }
    if (addr) e.master_addr = *addr;
    if (e.launcher == "torchrun") {
      const std::optional<std::string> agent = Str(get, "TORCHELASTIC_USE_AGENT_STORE");
      e.agent_store = agent && (*agent == "True" || *agent == "true" || *agent == "1");
      e.restart_count = Int(get, "TORCHELASTIC_RESTART_COUNT", n.launcher).value_or(0);
    }
    if (const std::optional<int> port = Int(get, "MASTER_PORT", n.launcher)) {
      T5XX_CHECK(*port >= 1 && *port <= 65535,
                 "environment variable MASTER_PORT = " + std::to_string(*port) +
                     " is not a TCP port (1-65535)");
      e.master_port = *port;
    }
    return e;
  }
  return std::nullopt;
}

}  // namespace t5xx::partitioning
