// See route.h.
#include "t5xx/util/system/route.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "t5xx/util/error.h"

namespace t5xx {
namespace {

// The first IPv4 address of `host`.
in_addr Resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  T5XX_CHECK(rc == 0 && found, "the host '" + host + "' does not resolve to an IPv4 address (" +
                                   gai_strerror(rc) + "); give its address instead");
  const in_addr a = reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr;
  freeaddrinfo(found);
  return a;
}

std::string ToString(const in_addr& a) {
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, buf, sizeof(buf));
  return buf;
}

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  in_addr a{};
  return inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

LocalRoute RouteTo(const std::string& host) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);  // any port: a UDP connect only picks the route
  to.sin_addr = Resolve(host);
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  T5XX_CHECK(fd >= 0, std::string("cannot open a socket to find the route to '") + host +
                          "': " + std::strerror(errno));
  sockaddr_in from{};
  socklen_t len = sizeof(from);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&from), &len) == 0;
  const int err = errno;
  close(fd);
  T5XX_CHECK(ok, "no network route from this host reaches '" + host + "' (" + ToString(to.sin_addr) +
                     "): " + std::strerror(err) + "; check the address and this host's network");
  LocalRoute route;
  route.address = ToString(from.sin_addr);
  ifaddrs* ifs = nullptr;
  if (getifaddrs(&ifs) == 0) {
    for (ifaddrs* i = ifs; i; i = i->ifa_next) {
      if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
          reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr == from.sin_addr.s_addr) {
        route.interface = i->ifa_name;
        break;
      }
    }
    freeifaddrs(ifs);
  }
  return route;
}

}  // namespace t5xx
