// `t5xx launch --nproc_per_node=N [--nnodes=M --node_rank=K
// --master_addr=HOST --master_port=P] -- COMMAND...`: starts N processes of
// COMMAND on this host with the variables torchrun sets (RANK, WORLD_SIZE,
// LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT,
// TORCHELASTIC_USE_AGENT_STORE, TORCHELASTIC_RESTART_COUNT) -- ranks
// K*N .. K*N+N-1 of M*N --, forwards SIGTERM and SIGINT to them, and when one
// fails stops the others and exits with its status, naming the rank (a dead
// process never leaves the rest hung). As torchrun's agents, the launchers
// meet first (launch_rendezvous.h: the one with --node_rank=0 serves the
// store at HOST:P, or this host's loopback and a free port on one host, and
// every rank joins it), so that a bad launch is named on every host. With
// --max_restarts=R a failure anywhere starts a new round on every host, up
// to R times, with TORCHELASTIC_RESTART_COUNT (and T5XX_RESTART_CAUSE, the
// failure) set: the run resumes from MODEL_DIR's latest checkpoint.
// torchrun's flags and meanings; every host runs its own `t5xx launch` with
// its own --node_rank.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "t5xx/cli/commands.h"
#include "t5xx/cli/launch_rendezvous.h"
#include "t5xx/util/error.h"
#include "t5xx/util/system/free_port.h"
#include "t5xx/util/system/host_name.h"
#include "t5xx/util/system/route.h"

extern char** environ;

namespace t5xx::cli {
namespace {

// The launcher's own stop signals, as torchrun's agent handles them:
// SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGHUP and SIGQUIT are passed on to the
// ranks (SIGUSR1/SIGUSR2: Slurm's --signal warning; a closed
// terminal or ssh session stops the job instead of orphaning it); a second
// one kills the ranks at once.
volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_signals = 0;
extern "C" void OnLaunchSignal(int sig) {
  g_signal = sig;
  g_signals = g_signals + 1;
}
void InstallLaunchSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnLaunchSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGHUP, SIGQUIT}) sigaction(sig, &sa, nullptr);
}
const char* SignalName(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    default: return "a signal";
  }
}
std::string Processes(size_t n) { return std::to_string(n) + (n == 1 ? " process" : " processes"); }

std::string Status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "was killed by signal " + std::to_string(WTERMSIG(status));
}

int ExitCode(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The environment of this host's `local`-th process: this process's, with
// torchrun's variables set for `at`, and its restart count and the cause of
// the last failure (empty on the first attempt).
std::vector<std::string> RankEnvironment(int local, const Placement& at, int restart,
                                         const std::string& cause) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    if (key == "RANK" || key == "WORLD_SIZE" || key == "LOCAL_RANK" ||
        key == "LOCAL_WORLD_SIZE" || key == "GROUP_RANK" || key == "MASTER_ADDR" ||
        key == "MASTER_PORT" || key == "TORCHELASTIC_RESTART_COUNT" ||
        key == "TORCHELASTIC_USE_AGENT_STORE" || key == "T5XX_RESTART_CAUSE") {
      continue;
    }
    env.push_back(kv);
  }
  for (const std::string& kv :
       {"RANK=" + std::to_string(at.rank(local)), "WORLD_SIZE=" + std::to_string(at.world()),
        "LOCAL_RANK=" + std::to_string(local),
        "LOCAL_WORLD_SIZE=" + std::to_string(at.nproc_per_node),
        "GROUP_RANK=" + std::to_string(at.node_rank), "MASTER_ADDR=" + at.master_addr,
        "MASTER_PORT=" + std::to_string(at.master_port),
        "TORCHELASTIC_RESTART_COUNT=" + std::to_string(restart),
        // The launchers' store (launch_rendezvous.h) serves the ranks'
        // rendezvous too, one key space per round, as torchrun's agent's.
        std::string("TORCHELASTIC_USE_AGENT_STORE=True")}) {
    env.push_back(kv);
  }
  if (!cause.empty()) env.push_back("T5XX_RESTART_CAUSE=" + cause);
  return env;
}

// Starts `command` once per rank; returns pid -> rank. Throws t5xx::Error
// (after killing those started) when one cannot be started.
std::map<pid_t, int> SpawnRanks(std::vector<std::string> command, const Placement& at,
                                int restart, const std::string& cause) {
  std::map<pid_t, int> rank_of;
  for (int local = 0; local < at.nproc_per_node; ++local) {
    const int r = at.rank(local);
    std::vector<std::string> env = RankEnvironment(local, at, restart, cause);
    std::vector<char*> envp, argv;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    for (auto& a : command) argv.push_back(a.data());
    argv.push_back(nullptr);
    // fork + exec rather than posix_spawn: the child asks for SIGKILL when
    // the launcher dies (even by SIGKILL), so no rank outlives it unseen --
    // SIGKILL, not SIGTERM: a rank would take SIGTERM for a scheduler's stop
    // and the job would stop instead of restarting without this host (as
    // torchrun's workers die with their agent); a close-on-exec pipe
    // carries exec's errno back.
    int pipe_fds[2];
    T5XX_CHECK(pipe2(pipe_fds, O_CLOEXEC) == 0,
               std::string("t5xx launch: cannot make a pipe: ") + std::strerror(errno));
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
      // Its own process group, as torchrun starts a worker (a new session):
      // what the launcher sends reaches the rank's own children too.
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);  // the launcher is already gone
      for (int sig : {SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGHUP, SIGQUIT}) signal(sig, SIG_DFL);
      execvpe(argv[0], argv.data(), envp.data());
      const int e = errno;
      ssize_t ignored = write(pipe_fds[1], &e, sizeof(e));
      (void)ignored;
      _exit(127);
    }
    int err = pid < 0 ? errno : 0;
    if (pid > 0) setpgid(pid, pid);  // (also here: no signal may precede the child's own call)
    close(pipe_fds[1]);
    if (pid > 0) {
      int e = 0;
      if (read(pipe_fds[0], &e, sizeof(e)) == static_cast<ssize_t>(sizeof(e))) {
        err = e;
        waitpid(pid, nullptr, 0);
      }
    }
    close(pipe_fds[0]);
    if (err != 0) {
      for (const auto& [p, rr] : rank_of) ::kill(-p, SIGKILL);
      throw Error("t5xx launch: cannot start '" + command[0] + "' for rank " + std::to_string(r) +
                  ": " + std::strerror(err));
    }
    rank_of[pid] = r;
  }
  return rank_of;
}

// Waits for every rank, as torchrun's elastic agent does: a stop signal is
// passed on; the first rank that fails stops the others (SIGTERM, then
// SIGKILL after `grace` seconds).
struct Outcome {
  int code = 0;          // the first failure's exit code, or 0
  std::string cause;     // "rank 3 (pid 123) exited with status 1"
  bool stopped = false;  // a stop signal was passed on (no restart then)
  bool remote = false;   // another host's failure stopped them (cause: its)
  bool remote_given_up = false;  // ... or the job was given up there
  int remote_stop_signal = 0;    // ... stopped by this signal
  // A rank ended on a stop signal (status 128 + SIGTERM or SIGINT, or killed
  // by one): the job was asked to stop (a scheduler preempting it); with
  // several processes they agree on the step and all save it (trainer's
  // StepMetrics::stop_requests), so this is no failure to restart after.
  bool rank_stopped = false;
  // The status code of the first rank here that ended on a stop signal
  // (its own or the job's agreed stop), or 0: what this host reports when
  // another host's stop ended the job, whichever the launcher saw first.
  int rank_stop_code = 0;
};

// Whether a rank's status says it ended on a stop signal.
bool StoppedBySignal(int status) {
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status)
                  : WIFEXITED(status) ? WEXITSTATUS(status) - 128
                                      : 0;
  return sig == SIGTERM || sig == SIGINT || sig == SIGUSR1 || sig == SIGUSR2;
}
// `remote` is polled every few hundred milliseconds: another launcher's
// failure of this round (or the job given up), which stops these ranks too.
Outcome SuperviseRanks(std::map<pid_t, int> rank_of, int grace,
                       const std::function<std::optional<LaunchRendezvous::RemoteEnd>()>& remote) {
  Outcome out;
  int& result = out.code;
  bool stopping = false;
  bool forwarded = false;
  bool killed = false;
  auto stop_deadline = std::chrono::steady_clock::time_point::max();
  auto next_poll = std::chrono::steady_clock::now();
  while (!rank_of.empty()) {
    if (!stopping && remote && std::chrono::steady_clock::now() >= next_poll) {
      next_poll = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
      if (std::optional<LaunchRendezvous::RemoteEnd> end = remote()) {
        stopping = true;
        out.remote = true;
        out.remote_given_up = end->given_up;
        out.remote_stop_signal = end->stop_signal;
        out.cause = end->cause;
        std::cerr << "t5xx launch: "
                  << (end->stop_signal ? "the job was stopped by "
                      : end->given_up  ? "the job was given up by "
                                       : "")
                  << end->cause << "; stopping the " << Processes(rank_of.size())
                  << " of this host" << std::endl;
        for (const auto& [p, r] : rank_of) ::kill(-p, SIGTERM);
        stop_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(grace);
      }
    }
    if (const int sig = g_signal; sig && !forwarded) {
      forwarded = true;
      std::cerr << "t5xx launch: " << SignalName(sig) << " received; passing it to the "
                << Processes(rank_of.size()) << " (a second signal kills them; after "
                << grace << " s they are killed)" << std::endl;
      for (const auto& [p, r] : rank_of) ::kill(-p, sig);
      stopping = true;
      stop_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(grace);
    }
    if (g_signals > 1 && !killed) {
      killed = true;
      std::cerr << "t5xx launch: a second signal; killing the " << Processes(rank_of.size())
                << " (SIGKILL)" << std::endl;
      for (const auto& [p, r] : rank_of) ::kill(-p, SIGKILL);
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      auto it = rank_of.find(pid);
      if (it == rank_of.end()) continue;
      const int r = it->second;
      rank_of.erase(it);
      const bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      if (failed && out.rank_stop_code == 0 && StoppedBySignal(status)) {
        out.rank_stop_code = ExitCode(status);
      }
      if (failed && !stopping && !forwarded && StoppedBySignal(status)) {
        // Stopped, not failed: the others finish their (agreed) stop within
        // the grace period, else they are killed.
        result = ExitCode(status);
        stopping = true;
        out.rank_stopped = true;
        out.cause = "rank " + std::to_string(r) + " (pid " + std::to_string(pid) + ") " +
                    Status(status) + " (a stop signal)";
        std::cerr << "t5xx launch: " << out.cause << "; the job stops";
        if (!rank_of.empty()) {
          std::cerr << " (the other " << Processes(rank_of.size()) << " within --stop_grace_seconds="
                    << grace << ")";
        }
        std::cerr << std::endl;
        stop_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(grace);
        continue;
      }
      if (failed && !stopping && !forwarded) {
        result = ExitCode(status);
        stopping = true;
        out.cause = "rank " + std::to_string(r) + " (pid " + std::to_string(pid) + ") " +
                    Status(status);
        std::cerr << "t5xx launch: " << out.cause;
        if (!rank_of.empty()) std::cerr << "; stopping the other " << Processes(rank_of.size());
        std::cerr << std::endl;
        for (const auto& [p, rr] : rank_of) ::kill(-p, SIGTERM);
        stop_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(grace);
      } else if (failed && result == 0) {
        result = ExitCode(status);
      }
      continue;
    }
    if (stopping && std::chrono::steady_clock::now() >= stop_deadline) {
      std::string ranks;
      for (const auto& [p, r] : rank_of) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
      std::cerr << "t5xx launch: rank" << (rank_of.size() == 1 ? " " : "s ") << ranks
                << " did not stop within --stop_grace_seconds=" << grace
                << "; killing (SIGKILL)" << std::endl;
      for (const auto& [p, r] : rank_of) ::kill(-p, SIGKILL);
      stop_deadline = std::chrono::steady_clock::time_point::max();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  out.stopped = forwarded;
  return out;
}

// The job's rounds on this host (launch_rendezvous.h): join, start the
// ranks, supervise them, and end, give up or go on to the next round.
int RunRounds(LaunchRendezvous& rendezvous, const std::vector<std::string>& command,
              const Placement& at, int grace, int max_restarts) {
  std::string cause;
  for (int restart = rendezvous.first_round();; ++restart) {
    if (restart > max_restarts) {
      rendezvous.GiveUp("no restarts left (--max_restarts=" + std::to_string(max_restarts) + ")");
      throw Error("t5xx launch: the job has used its --max_restarts=" + std::to_string(max_restarts) +
                  " restarts; this launch would start restart " + std::to_string(restart));
    }
    if (!rendezvous.JoinRound(restart)) {
      cause = rendezvous.FailRound(restart, "the round failed before it started");
      std::cerr << "t5xx launch: restart " << restart << " failed before it started (" << cause
                << "); going on to the next" << std::endl;
      continue;
    }
    std::map<pid_t, int> rank_of = SpawnRanks(command, at, restart, cause);
    std::cerr << "t5xx launch: " << Processes(static_cast<size_t>(at.nproc_per_node)) << " of '"
              << command[0] << "'";
    if (at.nnodes > 1) {
      std::cerr << " (ranks " << at.rank(0) << "-" << at.rank(at.nproc_per_node - 1) << " of "
                << at.world() << ", host " << at.node_rank << " of " << at.nnodes << ")";
    }
    std::cerr << ", rendezvous at " << at.master_addr << ":" << at.master_port;
    if (restart > 0) std::cerr << "; restart " << restart << " (--max_restarts=" << max_restarts << ")";
    std::cerr << std::endl;
    const Outcome out = SuperviseRanks(std::move(rank_of), grace,
                                       [&] { return rendezvous.RoundFailed(restart); });
    if (out.code == 0 && !out.remote) {
      rendezvous.Finish(restart);
      return 0;
    }
    // A stop signal, here or on another host: the job stops (no restart).
    if (out.stopped || out.rank_stopped) {
      const int sig = out.stopped ? static_cast<int>(g_signal) : out.code - 128;
      rendezvous.GiveUp(out.stopped ? "stopped by " + std::string(SignalName(g_signal))
                                    : "stopped: " + out.cause,
                        sig > 0 ? sig : SIGTERM);
      return out.code;
    }
    // Stopped by another host's signal: this host's ranks' own stop status
    // (143 when they stopped with the job, whether this launcher saw the
    // other host's end before or after they exited), else that signal's.
    if (out.remote_stop_signal) {
      return out.rank_stop_code ? out.rank_stop_code : 128 + out.remote_stop_signal;
    }
    const int code = out.code != 0 ? out.code : 1;
    if (out.remote_given_up) return code;  // (its reason was printed)
    // This host's failure is the round's (unless another host's came first).
    cause = out.remote ? out.cause : rendezvous.FailRound(restart, out.cause);
    if (restart >= max_restarts) {
      if (max_restarts > 0) {
        std::cerr << "t5xx launch: no restarts left (--max_restarts=" << max_restarts
                  << "); the last failure: " << cause << std::endl;
      }
      rendezvous.GiveUp("no restarts left after: " + cause);
      return code;
    }
    std::cerr << "t5xx launch: restarting every process of this host, restart " << restart + 1
              << " of at most " << max_restarts << ", after: " << cause << std::endl;
  }
}

}  // namespace

int LaunchCommand(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: t5xx launch --nproc_per_node=N [--nnodes=M --node_rank=K --master_addr=HOST "
      "--master_port=P] [--max_restarts=0] [--stop_grace_seconds=30] -- COMMAND ...";
  std::vector<std::string> flags, command;
  bool after = false;
  for (const std::string& a : args) {
    if (!after && a == "--") {
      after = true;
    } else if (!after && (a == "--help" || a == "-h")) {
      std::cout << usage << "\n(torchrun's flags and variables; docs/parallelism.md)" << std::endl;
      return 0;
    } else if (!after && a.rfind("--", 0) != 0 &&
               (flags.empty() || flags.back().rfind("--", 0) != 0 ||
                flags.back().find('=') != std::string::npos)) {
      // (not the value of a preceding "--flag value")
      throw Error("t5xx launch: '" + a + "' is not a flag: put -- before the command (" + usage +
                  ")");
    } else {
      (after ? command : flags).push_back(a);
    }
  }
  const std::map<std::string, std::string> f = ParseFlags(
      flags,
      {"nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "max_restarts",
       "stop_grace_seconds"},
      "launch");
  T5XX_CHECK(!command.empty(), "t5xx launch: no command; " + usage);
  T5XX_CHECK(f.count("nproc_per_node"), "t5xx launch: --nproc_per_node=N is required");
  auto number = [&](const std::string& name, int lo, int hi, const std::string& hint = "") {
    const std::string& v = f.at(name);
    size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    T5XX_CHECK(used == v.size() && n >= lo && n <= hi,
               "t5xx launch: --" + name + "=" + v + " is not a number in [" + std::to_string(lo) +
                   ", " + std::to_string(hi) + "]" + hint);
    return n;
  };
  Placement at;
  at.nproc_per_node = number("nproc_per_node", 1, 1024);
  if (f.count("nnodes")) {
    at.nnodes = number("nnodes", 1, 65536,
                       f.at("nnodes").find(':') == std::string::npos
                           ? ""
                           : " (torchrun's elastic MIN:MAX is not supported: give the number "
                             "of hosts)");
  }
  if (f.count("node_rank")) {
    at.node_rank = number("node_rank", 0, at.nnodes - 1,
                          ": this host's index among the --nnodes=" + std::to_string(at.nnodes) +
                              " hosts, each its own");
  }
  if (at.nnodes > 1) {
    T5XX_CHECK(f.count("master_addr"), "t5xx launch: --nnodes=" + std::to_string(at.nnodes) +
                                           " needs --master_addr: the address of the host "
                                           "with --node_rank=0, which every host can reach");
    T5XX_CHECK(f.count("master_port"), "t5xx launch: --nnodes=" + std::to_string(at.nnodes) +
                                           " needs --master_port: a free port on the host with "
                                           "--node_rank=0, the same on every host");
  }
  if (f.count("master_addr")) {
    at.master_addr = f.at("master_addr");
    T5XX_CHECK(!at.master_addr.empty(), "t5xx launch: --master_addr is empty");
  }
  at.master_port = f.count("master_port") ? number("master_port", 1, 65535) : FreeLocalPort();
  const int grace = f.count("stop_grace_seconds") ? number("stop_grace_seconds", 0, 3600) : 30;
  const int max_restarts = f.count("max_restarts") ? number("max_restarts", 0, 1000) : 0;

  InstallLaunchSignalHandlers();  // forwarded to the ranks below
  std::signal(SIGPIPE, SIG_IGN);  // a launcher that died mid-write: an error, not the end
  // The launchers meet (launch_rendezvous.h), within T5XX_JOIN_TIMEOUT (the
  // ranks' own join timeout; default 5 minutes).
  std::chrono::milliseconds join_timeout = std::chrono::minutes(5);
  if (const char* v = std::getenv("T5XX_JOIN_TIMEOUT"); v && *v) {
    char* end = nullptr;
    const double seconds = std::strtod(v, &end);
    T5XX_CHECK(end && *end == '\0' && seconds > 0 && seconds <= 7 * 24 * 3600,
               "environment variable T5XX_JOIN_TIMEOUT = '" + std::string(v) +
                   "' is not a number of seconds in (0, 604800]");
    join_timeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  }
  const std::string address =
      IsLoopbackHost(at.master_addr) ? "127.0.0.1" : RouteTo(at.master_addr).address;
  try {
    LaunchRendezvous rendezvous(at, join_timeout, "host " + HostName() + " (" + address + ")",
                                [] { return static_cast<int>(g_signal); });
    return RunRounds(rendezvous, command, at, grace, max_restarts);
  } catch (const LaunchStopped& e) {
    std::cerr << "t5xx launch: " << e.what() << std::endl;
    return 128 + e.signal;
  }
}

}  // namespace t5xx::cli
