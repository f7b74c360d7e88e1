#include "ports/xsk_sockets.hpp"

#include <linux/if_xdp.h>
#include <sys/socket.h>

#include <algorithm>
#include <filesystem>
#include <string>

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

namespace xlp {

std::vector<int> af_xdp_sockets() {
  std::vector<int> fds;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    int domain = 0;
    socklen_t len = sizeof domain;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_XDP) fds.push_back(fd);
  }
  std::sort(fds.begin(), fds.end());
  return fds;
}

std::optional<XskDrops> xsk_drops(const std::vector<int>& fds) {
  if (fds.empty()) return std::nullopt;
  XskDrops sum;
  for (int fd : fds) {
    xdp_statistics stats{};
    socklen_t len = sizeof stats;
    // A kernel that fills only the older, shorter struct has no rx_ring_full: its rx_dropped
    // then includes those frames, which the PMD's imissed already counts.
    if (getsockopt(fd, SOL_XDP, XDP_STATISTICS, &stats, &len) != 0 || len < sizeof stats) return std::nullopt;
    sum.rx_dropped += stats.rx_dropped;
    sum.rx_full += stats.rx_ring_full;
    sum.rx_invalid += stats.rx_invalid_descs;
    sum.fill_ring_empty += stats.rx_fill_ring_empty_descs;
  }
  return sum;
}

}  // namespace xlp
