// This process's AF_XDP sockets (DPDK's af_xdp PMD opens one per queue) and what the kernel
// counts for them (XDP_STATISTICS): the frames a socket lost on receive, which the PMD reports
// only in part. Its imissed is the sockets' rx_dropped (no free buffer in the fill ring), not
// the frames their RX ring was full for (rx_ring_full): an XDP program's redirect into a full
// ring fails there and no counter of the interface sees it (a veth counts no rx_dropped for
// it). Linux only, no DPDK.
#pragma once
#include <optional>
#include <vector>

#include "protocol/report.hpp"  // XskDrops

namespace xlp {

// The file descriptors of this process's AF_XDP sockets (from /proc/self/fd), ascending.
std::vector<int> af_xdp_sockets();

// The counts of the sockets `fds`, summed; none where the kernel gives none (before Linux 5.9
// it has no rx_ring_full) or there are no sockets.
std::optional<XskDrops> xsk_drops(const std::vector<int>& fds);

}  // namespace xlp
