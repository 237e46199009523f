// A TCP port that is free on the loopback interface now (bound to port 0,
// read back, released): for rendezvous on one host (`t5xx launch`, tests).
// Another program may take it before it is used. Framework-free.
#pragma once

namespace t5xx {

// The port, or 29500 (torchrun's default) if the system gives none.
int FreeLocalPort();

}  // namespace t5xx
