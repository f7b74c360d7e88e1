#include "ports/ports.hpp"

#include <rte_bus.h>
#include <rte_dev.h>
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
#include "ports/xstats.hpp"
#include "ports/xsk_sockets.hpp"

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

namespace {

const char* flow_control_name(rte_eth_fc_mode mode) {
  switch (mode) {
    case RTE_ETH_FC_NONE: return "none";
    case RTE_ETH_FC_RX_PAUSE: return "rx_pause";
    case RTE_ETH_FC_TX_PAUSE: return "tx_pause";
    case RTE_ETH_FC_FULL: return "full";
  }
  return "unknown";
}

// The header fields an RSS offload mask covers, by the names users know from ethtool.
std::vector<std::string> rss_names(uint64_t offloads) {
  static const std::pair<uint64_t, const char*> kFields[] = {
      {RTE_ETH_RSS_IPV4, "ipv4"},          {RTE_ETH_RSS_NONFRAG_IPV4_UDP, "ipv4-udp"},
      {RTE_ETH_RSS_NONFRAG_IPV4_TCP, "ipv4-tcp"}, {RTE_ETH_RSS_IPV6, "ipv6"},
      {RTE_ETH_RSS_NONFRAG_IPV6_UDP, "ipv6-udp"}, {RTE_ETH_RSS_NONFRAG_IPV6_TCP, "ipv6-tcp"},
      {RTE_ETH_RSS_FRAG_IPV4, "ipv4-frag"}, {RTE_ETH_RSS_FRAG_IPV6, "ipv6-frag"},
      {RTE_ETH_RSS_L2_PAYLOAD, "l2-payload"}};
  std::vector<std::string> out;
  for (const auto& [bit, name] : kFields)
    if (offloads & bit) out.push_back(name);
  return out;
}

std::string device_name(uint16_t port) {
  char name[RTE_ETH_NAME_MAX_LEN] = "";
  rte_eth_dev_get_name_by_port(port, name);
  return name;
}

}  // namespace

std::vector<uint32_t> reta_share(const std::vector<uint16_t>& reta, uint16_t queues) {
  std::vector<uint32_t> share(queues, 0);
  for (uint16_t q : reta)
    if (q < queues) ++share[q];
  return share;
}

Ports::Ports(const PortOptions& options) : options_(options) {
  if (rte_eth_dev_count_avail() == 0) throw ExecutionFailure("no DPDK ports (check the port specs)");
  try {
    order_ports();
    for (Setup& setup : setups_) {
      // The AF_XDP sockets that appear while a port starts are its own (one per queue).
      const std::vector<int> before = af_xdp_sockets();
      start_port(setup);
      for (int fd : af_xdp_sockets())
        if (!std::binary_search(before.begin(), before.end(), fd)) setup.xsk_fds.push_back(fd);
    }
    enlarge_af_xdp_send_buffers();
    io_.map_ports(ports_);
    std::vector<double> waited;  // hello's link.wait: how long each link took after start
    wait_for_links(options_.link_timeout, &waited);
    for (size_t i = 0; i < setups_.size(); ++i) setups_[i].info.link_wait = waited[i];
  } catch (...) {
    close();  // a constructor that throws gets no destructor call
    throw;
  }
}

// The protocol's port i is the DPDK port named options_.names[i], whatever order DPDK probed
// the devices in (PCI devices by address, then virtual ones).
void Ports::order_ports() {
  std::vector<uint16_t> available;
  uint16_t port;
  RTE_ETH_FOREACH_DEV(port) available.push_back(port);
  if (options_.names.empty()) {
    ports_ = available;
  } else {
    for (const std::string& name : options_.names) {
      uint16_t id = 0;
      if (rte_eth_dev_get_port_by_name(name.c_str(), &id) != 0) {
        std::string found;
        for (uint16_t p : available) found += (found.empty() ? "" : ", ") + device_name(p);
        throw ExecutionFailure("no DPDK port named " + name + " (ports: " + (found.empty() ? "none" : found) + ")");
      }
      ports_.push_back(id);
    }
  }
  for (uint16_t id : ports_) {
    Setup setup;
    setup.ethdev = id;
    setup.info.name = device_name(id);
    setup.info.socket = rte_eth_dev_socket_id(id);
    setups_.push_back(setup);
  }
  // One pool per NUMA node, on that node, with enough mbufs for the descriptor rings of its
  // ports (RX + TX per queue) plus the per-lcore caches and bursts in flight.
  std::map<int, unsigned> ports_on;
  for (const Setup& setup : setups_) ++ports_on[setup.info.socket];
  for (const Setup& setup : setups_) {
    const unsigned rings = ports_on[setup.info.socket] * options_.queues * (options_.rx_descriptors + options_.tx_descriptors);
    port_pools_.push_back(pool_on(setup.info.socket, std::max(32767u, rings + 16383u)));
  }
}

rte_mempool* Ports::pool_on(int socket, unsigned mbufs) {
  if (auto it = pools_.find(socket); it != pools_.end()) return it->second;
  // The first pool keeps the name tests and tools know; socket -1 (unknown: virtual devices,
  // single-node hosts) takes the calling lcore's node.
  const std::string name = pools_.empty() ? "xlp_pool" : "xlp_pool_node" + std::to_string(socket);
  rte_mempool* pool = rte_pktmbuf_pool_create(name.c_str(), mbufs, 512, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                              socket < 0 ? int(rte_socket_id()) : socket);
  if (!pool)
    throw ExecutionFailure("cannot create the mbuf pool on NUMA node " + std::to_string(socket) + ": " +
                           rte_strerror(rte_errno) + " (hugepages free on that node?)");
  pools_[socket] = pool;
  return pool;
}

void Ports::start_port(Setup& setup) {
  const uint16_t port = setup.ethdev;
  const uint16_t queues = options_.queues;
  const uint32_t max_frame = options_.max_frame;
  auto fail = [&](const std::string& what, int rc) {
    throw ExecutionFailure("port " + setup.info.name + ": " + what + ": " + rte_strerror(-rc));
  };
  rte_eth_conf conf{};
  rte_eth_dev_info info{};
  int rc = rte_eth_dev_info_get(port, &info);
  if (rc < 0) fail("device info", rc);
  setup.info.driver = info.driver_name ? info.driver_name : "";
  if (info.device && rte_dev_bus(info.device)) setup.info.bus = rte_bus_name(rte_dev_bus(info.device));
  setup.info.max_queues = std::min(info.max_rx_queues, info.max_tx_queues);
  if (queues > setup.info.max_queues)
    throw ExecutionFailure("tester.queues = " + std::to_string(queues) + ": port " + setup.info.name + " (" + setup.info.driver +
                           ") offers at most " + std::to_string(setup.info.max_queues) + " RX/TX queue pairs");
  // Several RX queues: let the NIC spread the frames by RSS over addresses and ports
  // (RFC 4814 random ports and addresses then reach every queue). Drivers without RSS
  // spread by their own means (af_packet: the kernel's flow hash; af_xdp: the
  // interface's queues; ring: one ring per queue).
  const uint64_t rss = info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
  setup.info.rss_offered = rss_names(info.flow_type_rss_offloads);
  setup.info.reta_size = info.reta_size;
  if (queues > 1 && rss) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_hf = rss;
  }
  // The MTU that takes the largest frame, wherever the driver allows it. A driver whose limit
  // is below (virtual devices whose kernel interface sets the real limit) keeps its own; a
  // NIC's must hold: a NIC at its default MTU of 1,500 drops full-size tagged frames.
  const uint32_t need = mtu_for(max_frame);
  const uint32_t overhead = info.max_mtu != UINT16_MAX && info.max_rx_pktlen > info.max_mtu
                                ? info.max_rx_pktlen - info.max_mtu
                                : RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
  const uint32_t most = std::min<uint32_t>(info.max_mtu, info.max_rx_pktlen > overhead ? info.max_rx_pktlen - overhead : 0);
  const bool nic = setup.info.bus == "pci";
  if (need >= info.min_mtu && need <= most) {
    conf.rxmode.mtu = need;
  } else if (nic) {
    throw ExecutionFailure("port " + setup.info.name + " (" + setup.info.driver + "): frames of up to " +
                           std::to_string(max_frame) + " bytes need an MTU of " + std::to_string(need) +
                           "; the driver allows " + std::to_string(info.min_mtu) + ".." + std::to_string(most));
  }
  // Frames above one mbuf segment (jumbo frames; more than one 2048-byte segment from 2053
  // bytes on, af_packet's default ring slot ends at 1920).
  rte_mempool* rx_pool = port_pools_.at(&setup - setups_.data());
  if (max_frame > kAfPacketDefaultMaxFrame) {
    if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER) {
      conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
    } else {
      // The driver copies each frame into one mbuf (af_packet: the front end's ring slots
      // of af_packet_slot(max_frame) bytes, and it refuses mbufs smaller than a slot less
      // 32). Such drivers keep no mbufs in descriptors: a burst per queue is in use.
      if (!jumbo_rx_pool_) {
        const unsigned n = std::max(2047u, unsigned(setups_.size()) * queues * 64u + 511u);
        jumbo_rx_pool_ = rte_pktmbuf_pool_create("xlp_rx_jumbo", n, 64, 0,
                                                 uint16_t(af_packet_slot(max_frame) + RTE_PKTMBUF_HEADROOM),
                                                 setup.info.socket < 0 ? int(rte_socket_id()) : setup.info.socket);
        if (!jumbo_rx_pool_)
          throw ExecutionFailure(std::string("cannot create the jumbo frame receive pool: ") + rte_strerror(rte_errno));
      }
      rx_pool = jumbo_rx_pool_;
    }
  }
  if ((rc = rte_eth_dev_configure(port, queues, queues, &conf)) < 0) fail("configure", rc);
  uint16_t rxd = options_.rx_descriptors, txd = options_.tx_descriptors;
  if ((rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd)) < 0) fail("descriptors", rc);
  setup.info.rx_descriptors = rxd;
  setup.info.tx_descriptors = txd;
  const unsigned node = setup.info.socket < 0 ? SOCKET_ID_ANY : unsigned(setup.info.socket);
  for (uint16_t q = 0; q < queues; ++q) {
    if ((rc = rte_eth_rx_queue_setup(port, q, rxd, node, nullptr, rx_pool)) < 0) fail("rx queue " + std::to_string(q), rc);
    if ((rc = rte_eth_tx_queue_setup(port, q, txd, node, nullptr)) < 0) fail("tx queue " + std::to_string(q), rc);
  }
  setup.info.rx_spread = queues == 1 ? "none" : rss ? "rss" : spread_without_rss(setup.info.driver);
  if ((rc = rte_eth_dev_start(port)) < 0) fail("start", rc);
  uint16_t mtu = 0;
  if (rte_eth_dev_get_mtu(port, &mtu) == 0) setup.info.mtu = mtu;
  if (nic && setup.info.mtu < need)
    throw ExecutionFailure("port " + setup.info.name + ": MTU " + std::to_string(setup.info.mtu) + " after start, " +
                           std::to_string(need) + " needed for frames of up to " + std::to_string(max_frame) + " bytes");
  // Promiscuous: frames to other MACs too (a DUT that floods is then seen). Allmulticast: IPv6
  // neighbour solicitations go to solicited-node multicast groups. Either may fail (an SR-IOV
  // VF without trust): hello says so, and doctor judges it.
  setup.info.promiscuous = rte_eth_promiscuous_enable(port) == 0 && rte_eth_promiscuous_get(port) == 1;
  setup.info.allmulticast = rte_eth_allmulticast_enable(port) == 0 && rte_eth_allmulticast_get(port) == 1;
  // After start: some drivers program flow control from their defaults when they start.
  set_flow_control(setup);
  find_xstats(setup);
  if (queues > 1 && rss && info.reta_size > 0) {
    std::vector<rte_eth_rss_reta_entry64> groups((info.reta_size + RTE_ETH_RETA_GROUP_SIZE - 1) / RTE_ETH_RETA_GROUP_SIZE);
    for (auto& g : groups) g.mask = ~uint64_t(0);
    if (rte_eth_dev_rss_reta_query(port, groups.data(), info.reta_size) == 0) {
      std::vector<uint16_t> reta;
      for (uint16_t i = 0; i < info.reta_size; ++i)
        reta.push_back(groups[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE]);
      setup.info.reta_share = reta_share(reta, queues);
    }
  }
  // Timestamp capabilities, for the hardware timestamps to come (docs/delay.md): probing
  // timesync turns it on, so it is turned off again.
  setup.info.hw_timestamp = (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) != 0;
  if (rte_eth_timesync_enable(port) == 0) {
    setup.info.timesync = true;
    rte_eth_timesync_disable(port);
  }
  uint64_t clock = 0;
  setup.info.read_clock = rte_eth_read_clock(port, &clock) == 0;
  rte_ether_addr mac{};
  rte_eth_macaddr_get(port, &mac);
  PortIdentity id;
  std::memcpy(id.mac.data(), mac.addr_bytes, 6);
  setup.kernel_interface = kernel_interface_of(setup.info.driver, id.mac);
  identities_.push_back(id);
  tables_.emplace_back();
}

void Ports::set_flow_control(Setup& setup) {
  rte_eth_fc_conf fc{};
  if (rte_eth_dev_flow_ctrl_get(setup.ethdev, &fc) != 0) {
    setup.info.flow_control_found = "unsupported";  // virtual devices: no pause frames
    return;
  }
  setup.info.flow_control_found = flow_control_name(fc.mode);
  if (!options_.flow_control_off || fc.mode == RTE_ETH_FC_NONE) return;
  // First as negotiated (the link partner learns that the tester sends and honours no pause
  // frames); a driver that resolves the mode again from autonegotiation and keeps it on (the
  // e1000 family, with a partner that advertises pause) is then told to force it off.
  int rc = 0;
  for (const uint8_t autoneg : {fc.autoneg, uint8_t(0)}) {
    rte_eth_fc_conf want = fc;
    want.mode = RTE_ETH_FC_NONE;
    want.autoneg = autoneg;
    rc = rte_eth_dev_flow_ctrl_set(setup.ethdev, &want);
    rte_eth_fc_conf now{};
    if (rc == 0 && rte_eth_dev_flow_ctrl_get(setup.ethdev, &now) == 0 && now.mode == RTE_ETH_FC_NONE) return;
  }
  setup.info.flow_control_error = rc != 0 ? std::string(rte_strerror(-rc)) : "the driver took \"none\" but still reports it on";
}

std::string Ports::flow_control_now(const Setup& setup) const {
  if (setup.info.flow_control_found == "unsupported") return "unsupported";
  rte_eth_fc_conf fc{};
  return rte_eth_dev_flow_ctrl_get(setup.ethdev, &fc) == 0 ? flow_control_name(fc.mode) : "unknown";
}

void Ports::find_xstats(Setup& setup) {
  const int n = rte_eth_xstats_get_names(setup.ethdev, nullptr, 0);
  if (n <= 0) return;
  std::vector<rte_eth_xstat_name> names(size_t(n), rte_eth_xstat_name{});
  const int got = rte_eth_xstats_get_names(setup.ethdev, names.data(), unsigned(n));
  setup.info.xstats_offered = uint32_t(std::max(got, 0));
  for (int i = 0; i < got && i < n; ++i) {
    const std::string name = names[size_t(i)].name;
    switch (classify_xstat(name)) {
      case XstatKind::kRxDrop:
        setup.drop_ids.push_back(uint64_t(i));
        setup.info.drop_counters.push_back(name);
        break;
      case XstatKind::kRxPause:
        setup.pause_ids.push_back(uint64_t(i));
        setup.info.pause_counters.push_back(name);
        break;
      case XstatKind::kOther:
        break;
    }
  }
}

std::vector<bool> Ports::links_up() const {
  std::vector<bool> up;
  for (uint16_t p : ports_) {
    rte_eth_link link{};
    up.push_back(rte_eth_link_get_nowait(p, &link) == 0 && link.link_status == RTE_ETH_LINK_UP);
  }
  return up;
}

std::vector<uint16_t> Ports::wait_for_links(double timeout, std::vector<double>* waited) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<bool> up(ports_.size(), false);
  std::vector<double> seconds(ports_.size(), 0);
  for (;;) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::vector<bool> now = links_up();
    bool all = true;
    for (size_t i = 0; i < ports_.size(); ++i) {
      if (now[i] && !up[i]) seconds[i] = elapsed;
      up[i] = now[i];
      all = all && now[i];
    }
    if (all || elapsed >= timeout) {
      std::vector<uint16_t> down;
      for (size_t i = 0; i < ports_.size(); ++i)
        if (!up[i]) {
          seconds[i] = elapsed;
          down.push_back(uint16_t(i));
        }
      if (waited) *waited = seconds;
      return down;
    }
    timespec ts{0, 50'000'000};
    nanosleep(&ts, nullptr);
  }
}

Ports::~Ports() { close(); }

void Ports::close() {
  for (uint16_t p : ports_) {
    rte_eth_dev_stop(p);
    rte_eth_dev_close(p);
  }
  ports_.clear();
  // The pools go with the ports that used them (their names are free for the next Ports).
  for (auto& [socket, pool] : pools_) rte_mempool_free(pool);
  pools_.clear();
  port_pools_.clear();
  if (jumbo_rx_pool_) rte_mempool_free(jumbo_rx_pool_);
  jumbo_rx_pool_ = nullptr;
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
  for (int fd : af_xdp_sockets()) setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &kAfXdpSendBuffer, sizeof kAfXdpSendBuffer);
}

std::vector<PortCounters> Ports::counters() const {
  std::vector<PortCounters> out(ports_.size());
  for (size_t i = 0; i < ports_.size(); ++i) {
    const Setup& setup = setups_[i];
    if (rte_eth_stats_get(ports_[i], &out[i].eth) != 0) out[i].eth = rte_eth_stats{};  // none kept
    const auto read = [&](const std::vector<uint64_t>& ids, std::vector<uint64_t>& values) {
      values.assign(ids.size(), 0);
      if (!ids.empty() && rte_eth_xstats_get_by_id(ports_[i], ids.data(), values.data(), unsigned(ids.size())) < 0)
        values.assign(ids.size(), 0);  // unreadable now: nothing known to have grown
    };
    read(setup.drop_ids, out[i].drop_xstats);
    read(setup.pause_ids, out[i].pause_xstats);
    out[i].drop_names = &setup.info.drop_counters;
    out[i].oerrors_lost = setup.info.driver != "net_ring";
    out[i].pause_names = &setup.info.pause_counters;
    out[i].kernel_interface = setup.kernel_interface;
    if (setup.kernel_interface.empty()) continue;
    std::ifstream f("/sys/class/net/" + setup.kernel_interface + "/statistics/rx_dropped");
    f >> out[i].kernel_rx_dropped;
    out[i].xsk = xsk_drops(setup.xsk_fds);
  }
  return out;
}

namespace {

// The counters of one kind that grew between two readings, by name.
std::vector<std::pair<std::string, uint64_t>> grown(const std::vector<std::string>* names,
                                                    const std::vector<uint64_t>& before,
                                                    const std::vector<uint64_t>& after) {
  std::vector<std::pair<std::string, uint64_t>> out;
  if (!names) return out;
  for (size_t i = 0; i < names->size() && i < before.size() && i < after.size(); ++i)
    if (after[i] > before[i]) out.emplace_back((*names)[i], after[i] - before[i]);
  return out;
}

}  // namespace

std::vector<std::pair<std::string, uint64_t>> pause_between(const PortCounters& before, const PortCounters& after) {
  return grown(after.pause_names, before.pause_xstats, after.pause_xstats);
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
  if (before.xsk && after.xsk)
    d.xsk = XskDrops{grew(before.xsk->rx_dropped, after.xsk->rx_dropped), grew(before.xsk->rx_full, after.xsk->rx_full),
                     grew(before.xsk->rx_invalid, after.xsk->rx_invalid),
                     grew(before.xsk->fill_ring_empty, after.xsk->fill_ring_empty)};
  d.kernel_interface = after.kernel_interface;
  d.xstats = grown(after.drop_names, before.drop_xstats, after.drop_xstats);
  if (after.oerrors_lost) d.tx_lost = d.oerrors;
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
  for (size_t i = 0; i < ports_.size(); ++i) {
    PortInfo port = setups_[i].info;
    port.index = uint16_t(i);
    port.mac = identities_[i].mac;
    port.rx_queues = port.tx_queues = options_.queues;
    port.max_frame = options_.max_frame;
    rte_eth_link link{};
    rte_eth_link_get_nowait(ports_[i], &link);
    port.link_speed_mbps = link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : link.link_speed;
    port.link_up = link.link_status == RTE_ETH_LINK_UP;
    port.link_full_duplex = link.link_duplex == RTE_ETH_LINK_FULL_DUPLEX;
    port.link_autoneg = link.link_autoneg == RTE_ETH_LINK_AUTONEG;
    // Flow control as the driver reports it now, after the link came up (and autonegotiation
    // with it); an error of the set-up that the driver no longer shows is gone.
    port.flow_control = flow_control_now(setups_[i]);
    if (port.flow_control == "none") port.flow_control_error.clear();
    out.push_back(port);
  }
  return out;
}

void Ports::service(const std::function<void(uint16_t, const rte_mbuf*)>& inspect) {
  rte_mbuf* bufs[32];
  for (uint16_t p = 0; p < count(); ++p)
    for (uint16_t q = 0; q < options_.queues; ++q)
      for (int i = 0; i < 100000; ++i) {
        uint16_t n = io_.rx(p, q, bufs, 32);
        if (n == 0) break;
        for (uint16_t k = 0; k < n; ++k) {
          if (inspect) inspect(p, bufs[k]);
          answer_neighbor(io_, p, q, bufs[k], identities_[p], port_pools_[p]);
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
      if (rte_mbuf* m = rte_pktmbuf_alloc(port_pools_.at(port))) {
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
