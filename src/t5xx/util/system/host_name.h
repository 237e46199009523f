// This machine's host name (gethostname), for logs, errors and file names.
#pragma once

#include <string>

namespace t5xx {

// The host name, or "localhost" when the system gives none.
std::string HostName();

}  // namespace t5xx
