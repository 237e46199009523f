// SIGTERM/SIGINT/SIGUSR1/SIGUSR2 as a stop request (see stop_signals.h).
#include "t5xx/util/system/stop_signals.h"

#include <csignal>

namespace t5xx {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void OnStopSignal(int sig) { g_stop_signal = sig; }

}  // namespace

void InstallStopSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  // SA_RESETHAND: a second signal takes the default action (ends the
  // process at once).
  sa.sa_flags = SA_RESTART | SA_RESETHAND;
  // SIGUSR1/SIGUSR2: what Slurm's --signal sends ahead of a job's end
  // (torchrun leaves them fatal); here a request to stop and save, too.
  for (int sig : {SIGTERM, SIGINT, SIGUSR1, SIGUSR2}) sigaction(sig, &sa, nullptr);
}

int StopSignalReceived() { return static_cast<int>(g_stop_signal); }

const char* StopSignalName(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "a stop signal";
  }
}

}  // namespace t5xx
