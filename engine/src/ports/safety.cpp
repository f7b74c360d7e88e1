#include "ports/safety.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <fstream>
#include <sstream>

namespace xlp {

std::vector<std::string> kernel_interfaces_in_eal_args(const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string vdev;
    if (args[i] == "--vdev" && i + 1 < args.size()) vdev = args[i + 1];
    else if (args[i].rfind("--vdev=", 0) == 0) vdev = args[i].substr(7);
    if (vdev.rfind("net_af_packet", 0) != 0 && vdev.rfind("net_af_xdp", 0) != 0) continue;
    std::stringstream parts(vdev);
    std::string kv;
    while (std::getline(parts, kv, ','))
      if (kv.rfind("iface=", 0) == 0) names.push_back(kv.substr(6));
  }
  return names;
}

namespace {

bool global_address(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) {
    uint32_t a = ntohl(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr);
    return (a >> 16) != 0xA9FE;  // anything but 169.254/16 link-local
  }
  if (sa->sa_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
    return !IN6_IS_ADDR_LINKLOCAL(&a) && !IN6_IS_ADDR_MULTICAST(&a);
  }
  return false;
}

// A route through the interface in /proc/net/route (IPv4) or /proc/net/ipv6_route (IPv6),
// ignoring the link-local and multicast routes the kernel adds to every IPv6 interface.
std::string route_via(const std::string& ifname) {
  std::ifstream v4("/proc/net/route");
  std::string line;
  std::getline(v4, line);  // header
  while (std::getline(v4, line)) {
    std::istringstream f(line);
    std::string dev, dst;
    f >> dev >> dst;
    if (dev == ifname) return "an IPv4 route";
  }
  std::ifstream v6("/proc/net/ipv6_route");
  while (std::getline(v6, line)) {
    std::istringstream f(line);
    std::string dst, fields[8];
    f >> dst;
    for (auto& x : fields) f >> x;
    std::string dev;
    f >> dev;
    if (dev != ifname) continue;
    if (dst.rfind("fe80", 0) == 0 || dst.rfind("ff", 0) == 0) continue;
    return "an IPv6 route";
  }
  return "";
}

}  // namespace

std::string interface_in_use(const std::string& ifname) {
  if (if_nametoindex(ifname.c_str()) == 0)
    return "no interface named '" + ifname + "' in this network namespace";
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* a = list; a; a = a->ifa_next) {
      if (!a->ifa_addr || ifname != a->ifa_name || !global_address(a->ifa_addr)) continue;
      char buf[INET6_ADDRSTRLEN] = "?";
      const void* raw = a->ifa_addr->sa_family == AF_INET
                            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr)
                            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr);
      inet_ntop(a->ifa_addr->sa_family, raw, buf, sizeof buf);
      freeifaddrs(list);
      return "interface '" + ifname + "' carries the address " + buf;
    }
    freeifaddrs(list);
  }
  std::string route = route_via(ifname);
  if (!route.empty()) return "interface '" + ifname + "' carries " + route;
  return "";
}

}  // namespace xlp
