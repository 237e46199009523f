// Which of this host's network interfaces reaches another host: what a
// process of a multi-host run binds its collectives to when no interface is
// named (GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME), instead of the address
// its host name resolves to (often 127.0.0.1, which the other hosts cannot
// reach). Framework-free (POSIX sockets, getifaddrs).
#pragma once

#include <string>

namespace t5xx {

struct LocalRoute {
  std::string address;    // this host's IPv4 address on the route, e.g. "10.0.0.2"
  std::string interface;  // its interface, e.g. "eth0" ("" when not found)
};

// The source address (and its interface) the kernel would use to send to
// `host` (a name or an IPv4 address): a UDP socket connected to it, read
// back with getsockname (nothing is sent). Throws t5xx::Error naming the
// host when it does not resolve or no route reaches it.
LocalRoute RouteTo(const std::string& host);

// Whether `host` is this machine's loopback ("localhost", 127.0.0.0/8).
bool IsLoopbackHost(const std::string& host);

}  // namespace t5xx
