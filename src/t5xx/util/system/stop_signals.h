// SIGTERM and SIGINT as a request to stop: a scheduler preempting a job (Slurm,
// Kubernetes and others send SIGTERM, then SIGKILL after a grace period) or a
// user's Ctrl-C. While installed, the first such signal only sets a flag that
// long-running loops poll, so they can save their state and exit cleanly; a
// second one ends the process at once (the default action). t5x's
// counterpart is its PreemptionError handling (t5x/train.py), which saves a
// checkpoint before exiting.
#pragma once

namespace t5xx {

// Installs the handlers (idempotent). Not thread-safe against concurrent
// calls; call it from main before starting work.
void InstallStopSignalHandlers();

// The signal number received since installation (SIGTERM or SIGINT), or 0.
// Async-signal-safe to read; cheap enough to poll every step.
int StopSignalReceived();

// "SIGTERM", "SIGINT", or "a stop signal".
const char* StopSignalName(int signal);

}  // namespace t5xx
