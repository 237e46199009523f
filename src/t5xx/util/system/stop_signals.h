// SIGTERM and SIGINT as a request to stop: a scheduler preempting a job (Slurm,
// Kubernetes and others send SIGTERM, then SIGKILL after a grace period) or a
// user's Ctrl-C; SIGUSR1 and SIGUSR2 too (Slurm's --signal warning before a
// job's time limit). While installed, the first such signal only sets a flag that
// long-running loops poll, so they can save their state and exit cleanly; a
// second one ends the process at once (the default action). t5x's
// counterpart is its PreemptionError handling (t5x/train.py), which saves a
// checkpoint before exiting.
#pragma once

#include <stdexcept>
#include <string>

namespace t5xx {

// Installs the handlers (idempotent). Not thread-safe against concurrent
// calls; call it from main before starting work.
void InstallStopSignalHandlers();

// The signal number received since installation (SIGTERM, SIGINT, SIGUSR1
// or SIGUSR2), or 0.
// Async-signal-safe to read; cheap enough to poll every step.
int StopSignalReceived();

// "SIGTERM", "SIGINT", "SIGUSR1", "SIGUSR2", or "a stop signal".
const char* StopSignalName(int signal);

// Thrown where a stop signal ends work that has nothing to save yet (e.g.
// joining a multi-process run): the t5xx binary prints "stopped by <signal>
// <what()>" and exits with 128 + signal, as a run stopped after saving does.
class StopRequested : public std::runtime_error {
 public:
  StopRequested(int signal, const std::string& what) : std::runtime_error(what), signal(signal) {}
  int signal;
};

}  // namespace t5xx
