// Refuses to take over a kernel interface that is in use for IP: a tester port on an
// interface with a global address or route would cut whatever that link carries.
#pragma once
#include <string>
#include <vector>

namespace xlp {

// Interface names of af_packet/af_xdp vdevs among EAL arguments ("--vdev X" or "--vdev=X").
std::vector<std::string> kernel_interfaces_in_eal_args(const std::vector<std::string>& args);

// Empty when the interface may be used; otherwise the reason it may not (missing interface,
// global address, route).
std::string interface_in_use(const std::string& ifname);

}  // namespace xlp
