#include "ports/ports.hpp"

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include <sys/socket.h>

#include <chrono>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ctime>

#include "core/errors.hpp"
#include "core/neighbor.hpp"

namespace xlp {

bool answer_neighbor(BurstIo& io, uint16_t port, uint16_t queue, const rte_mbuf* m, const PortIdentity& id,
                     rte_mempool* pool) {
  if (id.owned.size() == 0 || m->nb_segs != 1) return false;
  uint8_t reply[kNeighborFrameMax];
  const size_t len = answer_neighbor_request(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, id.owned,
                                             id.mac.data(), reply);
  if (len == 0) return false;
  rte_mbuf* r = rte_pktmbuf_alloc(pool);
  if (!r) return false;
  std::memcpy(rte_pktmbuf_mtod(r, uint8_t*), reply, len);
  r->data_len = uint16_t(len);
  r->pkt_len = uint32_t(len);
  if (io.send(port, queue, &r, 1) == 1) return true;
  rte_pktmbuf_free(r);
  return false;
}

namespace {

// How a driver without RSS spreads received frames over several RX queues.
std::string spread_without_rss(const std::string& driver) {
  if (driver == "net_af_packet") return "fanout";  // PACKET_FANOUT_HASH over the kernel's flow hash
  if (driver == "net_af_xdp") return "interface";  // the interface's own RX queues
  if (driver == "net_ring") return "ring";         // RX queue q gets what the peer sends on TX queue q
  return "none";
}

}  // namespace

void create_ring_pair(const std::string& name, uint16_t queues) {
  std::vector<rte_ring*> rings[2];  // rings[i][q]: what port i receives on queue q
  for (int i = 0; i < 2; ++i)
    for (uint16_t q = 0; q < queues; ++q) {
      const std::string ring_name = name + "_r" + std::to_string(i) + "_" + std::to_string(q);
      rte_ring* r = rte_ring_create(ring_name.c_str(), 4096, int(rte_socket_id()), RING_F_SP_ENQ | RING_F_SC_DEQ);
      if (!r) throw ExecutionFailure("ring pair " + name + ": cannot create ring: " + rte_strerror(rte_errno));
      rings[i].push_back(r);
    }
  for (int i = 0; i < 2; ++i) {
    const std::string port_name = name + std::to_string(i);  // the PMD prepends "net_ring_"
    if (rte_eth_from_rings(port_name.c_str(), rings[i].data(), queues, rings[1 - i].data(), queues,
                           rte_socket_id()) < 0)
      throw ExecutionFailure("ring pair " + name + ": cannot create port: " + rte_strerror(rte_errno));
  }
}

Ports::Ports(uint16_t queues, uint32_t max_frame) : queues_(queues), max_frame_(max_frame) {
  const unsigned nb_ports = rte_eth_dev_count_avail();
  if (nb_ports == 0) throw ExecutionFailure("no DPDK ports (check the port specs)");
  // Enough mbufs for every descriptor ring (RX + TX per queue) plus the per-lcore caches and
  // bursts in flight.
  const unsigned mbufs = std::max(32767u, nb_ports * queues_ * (kRxDescriptors + kTxDescriptors) + 16383u);
  pool_ = rte_pktmbuf_pool_create("xlp_pool", mbufs, 512, 0, RTE_MBUF_DEFAULT_BUF_SIZE, int(rte_socket_id()));
  if (!pool_) throw ExecutionFailure(std::string("cannot create mbuf pool: ") + rte_strerror(rte_errno));
  try {
    start_ports();
  } catch (...) {
    close();  // a constructor that throws gets no destructor call
    throw;
  }
}

void Ports::start_ports() {
  uint16_t port;
  RTE_ETH_FOREACH_DEV(port) {
    rte_eth_conf conf{};
    char name[RTE_ETH_NAME_MAX_LEN] = "";
    rte_eth_dev_get_name_by_port(port, name);
    auto fail = [&](const std::string& what, int rc) {
      throw ExecutionFailure(std::string("port ") + name + ": " + what + ": " + rte_strerror(-rc));
    };
    rte_eth_dev_info info{};
    int rc = rte_eth_dev_info_get(port, &info);
    if (rc < 0) fail("device info", rc);
    const uint16_t most = std::min(info.max_rx_queues, info.max_tx_queues);
    if (queues_ > most)
      throw ExecutionFailure("tester.queues = " + std::to_string(queues_) + ": port " + name + " (" +
                             (info.driver_name ? info.driver_name : "?") + ") offers at most " + std::to_string(most) +
                             " RX/TX queue pairs");
    // Several RX queues: let the NIC spread the frames by RSS over addresses and ports
    // (RFC 4814 random ports and addresses then reach every queue). Drivers without RSS
    // spread by their own means (af_packet: the kernel's fanout hash; af_xdp: the
    // interface's queues; ring: one ring per queue).
    const uint64_t rss = info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
    if (queues_ > 1 && rss) {
      conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
      conf.rx_adv_conf.rss_conf.rss_hf = rss;
    }
    // Frames above what a default port carries (1920 bytes: af_packet's default ring slot less
    // its header; more than one 2048-byte segment from 2053 bytes on).
    rte_mempool* rx_pool = pool_;
    if (max_frame_ > kAfPacketDefaultMaxFrame) {
      if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
      if (info.max_rx_pktlen >= max_frame_) conf.rxmode.mtu = max_frame_ - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN;
      if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER) {
        conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
      } else {
        // The driver copies each frame into one mbuf (af_packet: the front end's ring slots
        // of af_packet_slot(max_frame) bytes, and it refuses mbufs smaller than a slot less
        // 32). Such drivers keep no mbufs in descriptors: a burst per queue is in use.
        if (!jumbo_rx_pool_) {
          const unsigned n = std::max(2047u, unsigned(rte_eth_dev_count_avail()) * queues_ * 64u + 511u);
          jumbo_rx_pool_ = rte_pktmbuf_pool_create("xlp_rx_jumbo", n, 64, 0,
                                                   uint16_t(af_packet_slot(max_frame_) + RTE_PKTMBUF_HEADROOM),
                                                   int(rte_socket_id()));
          if (!jumbo_rx_pool_)
            throw ExecutionFailure(std::string("cannot create the jumbo frame receive pool: ") + rte_strerror(rte_errno));
        }
        rx_pool = jumbo_rx_pool_;
      }
    }
    if ((rc = rte_eth_dev_configure(port, queues_, queues_, &conf)) < 0) fail("configure", rc);
    uint16_t rxd = kRxDescriptors, txd = kTxDescriptors;
    rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd);
    const int socket = rte_eth_dev_socket_id(port);
    for (uint16_t q = 0; q < queues_; ++q) {
      if ((rc = rte_eth_rx_queue_setup(port, q, rxd, socket < 0 ? 0 : socket, nullptr, rx_pool)) < 0)
        fail("rx queue " + std::to_string(q), rc);
      if ((rc = rte_eth_tx_queue_setup(port, q, txd, socket < 0 ? 0 : socket, nullptr)) < 0)
        fail("tx queue " + std::to_string(q), rc);
    }
    rx_spread_.push_back(queues_ == 1 ? "none"
                         : rss        ? "rss"
                                      : spread_without_rss(info.driver_name ? info.driver_name : ""));
    // Counted before starting, so that the destructor also closes a port that failed here.
    ports_.push_back(port);
    if ((rc = rte_eth_dev_start(port)) < 0) fail("start", rc);
    rte_eth_promiscuous_enable(port);  // not all drivers support it; frames to us are enough
    PortIdentity id;
    rte_ether_addr mac{};
    rte_eth_macaddr_get(port, &mac);
    std::memcpy(id.mac.data(), mac.addr_bytes, 6);
    kernel_interfaces_.push_back(kernel_interface_of(info.driver_name ? info.driver_name : "", id.mac));
    identities_.push_back(id);
    tables_.emplace_back();
  }
  enlarge_af_xdp_send_buffers();
}

Ports::~Ports() { close(); }

void Ports::close() {
  for (uint16_t p : ports_) {
    rte_eth_dev_stop(p);
    rte_eth_dev_close(p);
  }
  ports_.clear();
}

// Why AF_XDP sockets get a larger send buffer: in copy mode the kernel sends each frame as an
// skb charged to the socket until the receiver consumes it; on a veth whose peer steers its
// frames to another CPU's backlog (the lab's DUT), that is when the DUT processes the frame.
// With the default buffer (212,992 bytes: about 200 frames) a DUT that falls behind makes the
// socket refuse frames, and DPDK's af_xdp PMD retries the send in a loop: the worker
// stops receiving, its RX ring overflows and the tester, not the DUT, is reported as the limit
// (a 4-million-connection fill through the lab's nat44). With room for more frames than a CPU's
// backlog holds (netdev_max_backlog, 1,000 by default), the backlog overflows first: the DUT
// drops them, as a DUT that cannot keep up does. Needs CAP_NET_ADMIN (SO_SNDBUFFORCE); without
// it the sockets keep the default.
void enlarge_af_xdp_send_buffers() {
  constexpr int kAfXdp = 44;  // AF_XDP, which older libc headers lack
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
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != kAfXdp) continue;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &kAfXdpSendBuffer, sizeof kAfXdpSendBuffer);
  }
}

std::vector<PortCounters> Ports::counters() const {
  std::vector<PortCounters> out(ports_.size());
  for (size_t i = 0; i < ports_.size(); ++i) {
    if (rte_eth_stats_get(ports_[i], &out[i].eth) != 0) out[i].eth = rte_eth_stats{};  // none kept
    out[i].kernel_interface = kernel_interfaces_[i];
    if (kernel_interfaces_[i].empty()) continue;
    std::ifstream f("/sys/class/net/" + kernel_interfaces_[i] + "/statistics/rx_dropped");
    f >> out[i].kernel_rx_dropped;
  }
  return out;
}

PortDrops drops_between(const PortCounters& before, const PortCounters& after, uint16_t queues) {
  // A counter that went down was reset (or is not kept): nothing is known to be dropped.
  const auto grew = [](uint64_t b, uint64_t a) { return a > b ? a - b : 0; };
  PortDrops d;
  d.imissed = grew(before.eth.imissed, after.eth.imissed);
  d.rx_nombuf = grew(before.eth.rx_nombuf, after.eth.rx_nombuf);
  d.ierrors = grew(before.eth.ierrors, after.eth.ierrors);
  d.oerrors = grew(before.eth.oerrors, after.eth.oerrors);
  for (uint16_t q = 0; q < queues && q < RTE_ETHDEV_QUEUE_STAT_CNTRS; ++q)
    d.queue_errors.push_back(grew(before.eth.q_errors[q], after.eth.q_errors[q]));
  d.kernel_rx_dropped = grew(before.kernel_rx_dropped, after.kernel_rx_dropped);
  d.kernel_interface = after.kernel_interface;
  return d;
}

std::string kernel_interface_of(const std::string& driver, const std::array<uint8_t, 6>& mac) {
  // AF_XDP only: its XDP program takes every frame before the kernel's stack, so the
  // interface's rx_dropped are frames the socket could not take. An af_packet socket gets a
  // copy of each frame and the stack drops what it has no handler for (tagged frames without
  // a VLAN device, say) into the same counter: no measure of the tester's drops there.
  if (driver != "net_af_xdp") return "";
  char text[18];
  std::snprintf(text, sizeof text, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
                mac[5]);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/class/net", ec)) {
    std::ifstream f(entry.path() / "address");
    std::string address;
    if (f >> address && address == text) return entry.path().filename().string();
  }
  return "";
}

std::vector<PortInfo> Ports::info() const {
  std::vector<PortInfo> out;
  for (uint16_t p : ports_) {
    rte_eth_dev_info info{};
    rte_eth_dev_info_get(p, &info);
    rte_ether_addr mac{};
    rte_eth_macaddr_get(p, &mac);
    rte_eth_link link{};
    rte_eth_link_get_nowait(p, &link);
    char name[RTE_ETH_NAME_MAX_LEN] = "";
    rte_eth_dev_get_name_by_port(p, name);
    PortInfo port;
    port.index = p;
    port.name = name;
    port.driver = info.driver_name ? info.driver_name : "";
    std::memcpy(port.mac.data(), mac.addr_bytes, 6);
    port.link_speed_mbps = link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : link.link_speed;
    port.link_up = link.link_status == RTE_ETH_LINK_UP;
    port.rx_queues = queues_;
    port.tx_queues = queues_;
    port.max_queues = std::min(info.max_rx_queues, info.max_tx_queues);
    port.rx_spread = rx_spread_.at(out.size());
    port.hw_timestamp = (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) != 0;
    out.push_back(port);
  }
  return out;
}

void Ports::service(const std::function<void(uint16_t, const rte_mbuf*)>& inspect) {
  rte_mbuf* bufs[32];
  for (uint16_t p : ports_)
    for (uint16_t q = 0; q < queues_; ++q)
      for (int i = 0; i < 100000; ++i) {
        uint16_t n = io_.rx(p, q, bufs, 32);
        if (n == 0) break;
        for (uint16_t k = 0; k < n; ++k) {
          if (inspect) inspect(p, bufs[k]);
          answer_neighbor(io_, p, q, bufs[k], identities_[p], pool_);
        }
        rte_pktmbuf_free_bulk(bufs, n);
      }
}

std::optional<std::array<uint8_t, 6>> Ports::resolve(uint16_t port, int ip_version, const uint8_t* own_ip,
                                                     const uint8_t* target, const VlanStack& vlan, double timeout,
                                                     const std::function<bool()>& stop) {
  std::optional<std::array<uint8_t, 6>> mac;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  double next_request = 0;
  while (!mac && elapsed() < timeout && !stop()) {
    if (elapsed() >= next_request) {
      next_request += 0.5;
      uint8_t frame[kNeighborFrameMax];
      const size_t len = build_neighbor_request(ip_version, identities_[port].mac.data(), own_ip, target, frame, vlan);
      if (rte_mbuf* m = rte_pktmbuf_alloc(pool_)) {
        std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), frame, len);
        m->data_len = uint16_t(len);
        m->pkt_len = uint32_t(len);
        if (io_.tx(port, 0, &m, 1) != 1) rte_pktmbuf_free(m);
      }
    }
    service([&](uint16_t p, const rte_mbuf* m) {
      if (p == port && !mac)
        mac = parse_neighbor_reply(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, ip_version, target);
    });
    timespec ts{0, 1000000};
    nanosleep(&ts, nullptr);
  }
  return mac;
}

}  // namespace xlp
