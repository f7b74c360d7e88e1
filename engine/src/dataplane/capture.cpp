// Writing a trial's captures (pcapng files of the frames its RX tasks sampled).
#include "dataplane/rx_task.hpp"

#include <rte_version.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>

namespace xlp {

namespace {

// The copies' Enhanced Packet Blocks (pcapng: block type, length, interface id, timestamp
// high and low 32 bits, in the writer's byte order): the timestamp is set here from the
// receive TSC, with a clock anchor of the trial's own, because DPDK 22.11's conversion in
// rte_pcapng_copy overflows a few seconds after the process started (dates in 2265).
void set_epb_time(rte_mbuf* epb, uint64_t ns) {
  uint32_t* words = rte_pktmbuf_mtod(epb, uint32_t*);
  words[3] = uint32_t(ns >> 32);
  words[4] = uint32_t(ns);
}

}  // namespace

void Trial::write_captures() {
  std::map<uint16_t, std::vector<std::pair<uint64_t, rte_mbuf*>>> per_port;
  for (RxTask* r : receivers_) {
    auto copies = r->take_copies();
    auto& all = per_port[r->port()];
    all.insert(all.end(), copies.begin(), copies.end());
    captures_[r->port()].missed += r->capture_missed();
  }
  const double ns_per_tick = 1e9 / double(control_.tsc_hz);
  for (auto& [port, copies] : per_port) {
    // The queues' samples merged in arrival order (frames of one burst keep their order).
    std::stable_sort(copies.begin(), copies.end(),
                     [](const auto& a, const auto& b) { return int64_t(a.first - b.first) < 0; });
    for (auto& [tsc, m] : copies)
      set_epb_time(m, wall_ns0_ + uint64_t(int64_t(double(int64_t(tsc - wall_tsc0_)) * ns_per_tick)));
    CaptureReport& report = captures_[port];
    report.frames = copies.size();
    // The file is written into memory (a memfd) and travels in the reply, so that a remote
    // engine (tester.ssh) needs no file system shared with the front end.
    const int fd = memfd_create("xlatperf-capture", 0);
    if (fd < 0) throw ExecutionFailure(std::string("capture: memfd_create: ") + std::strerror(errno));
    const std::string comment = "xlatperf trial capture: port " + std::to_string(port) + ", first " +
                                std::to_string(copies.size()) + " sampled frames";
    const std::string app = std::string("xlatperf-engine (") + rte_version() + ")";
    rte_pcapng_t* out = rte_pcapng_fdopen(dup(fd), nullptr, nullptr, app.c_str(), comment.c_str());
    bool ok = out != nullptr;
    for (size_t i = 0; i < copies.size(); i += 256) {
      std::vector<rte_mbuf*> burst;
      for (size_t k = i; k < std::min(copies.size(), i + 256); ++k) burst.push_back(copies[k].second);
      if (ok) ok = rte_pcapng_write_packets(out, burst.data(), uint16_t(burst.size())) >= 0;  // frees them
      else rte_pktmbuf_free_bulk(burst.data(), unsigned(burst.size()));
    }
    if (out) rte_pcapng_close(out);
    std::string bytes;
    char buf[65536];
    for (off_t at = 0;;) {
      const ssize_t n = pread(fd, buf, sizeof buf, at);
      if (n <= 0) break;
      bytes.append(buf, size_t(n));
      at += n;
    }
    close(fd);
    if (!ok) throw ExecutionFailure("capture: cannot write the pcapng file of port " + std::to_string(port));
    report.pcapng = std::move(bytes);
  }
}

}  // namespace xlp
