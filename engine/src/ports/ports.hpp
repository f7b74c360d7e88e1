// Port set-up and the ports' life between trials: mbuf pools on the ports' NUMA nodes, N RX/TX
// queue pairs per DPDK port, MTU, flow control, the wait for the link, the counters read around
// each trial, what hello reports about the ports, ARP/ND service and neighbour resolution.
#pragma once
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ports/io.hpp"
#include "protocol/report.hpp"
#include "emulation/statetable.hpp"

namespace xlp {

// Two ports wired to each other through a pair of rte_rings inside this process: what one
// sends the other receives (a tester self-test without any kernel or NIC in the path), one
// ring per queue and direction. Call before Ports is built. Throws ExecutionFailure.
void create_ring_pair(const std::string& name, uint16_t queues);

// Descriptors per queue by default (tester.rx_descriptors / tx_descriptors; drivers clamp them
// to what they offer). RX gets more: a worker that stalls for a few milliseconds (on a CPU it
// shares with the kernel) must find its frames still queued when it polls again. With 1,024,
// an af_xdp port's kernel RX ring overflowed in a lab run at 100,000 frames/s (10 ms of
// frames; drops that DPDK's imissed does not count, only the interface's rx_dropped); with
// 4,096 the same run passed. The PMD's fixed reserve of fill buffers then bounds the room (the
// drops seen since were fill-ring drops, counted in imissed).
inline constexpr unsigned kRxDescriptors = 4096;
inline constexpr unsigned kTxDescriptors = 1024;

// How the ports are set up (the engine's command line, from the [tester] keys).
struct PortOptions {
  uint16_t queues = 1;
  // The largest frame to carry (on the wire, FCS and VLAN tags included): the ports' MTU
  // follows from it.
  uint32_t max_frame = kDefaultMaxFrame;
  uint16_t rx_descriptors = kRxDescriptors, tx_descriptors = kTxDescriptors;
  // Seconds to wait after start for every port's link (X710 and E810 bring theirs up seconds
  // after start); a port still down then is reported down.
  double link_timeout = 10;
  // Pause frames (IEEE 802.3x) off: a DUT that sends them would otherwise slow the tester's
  // sender while every drop counter reads zero. false: as the port came.
  bool flow_control_off = true;
  // The ports' device names in protocol order (0 = left, 1 = right); empty: DPDK's order.
  std::vector<std::string> names;
};

// Raises the send buffer of every AF_XDP socket of this process to kAfXdpSendBuffer (why:
// ports.cpp). Ports calls it once its ports have started.
inline constexpr int kAfXdpSendBuffer = 16 << 20;
void enlarge_af_xdp_send_buffers();

// Up to this frame size (on the wire) a port needs no set-up for jumbo frames: one 2048-byte
// mbuf segment holds the frame, and so does an af_packet ring slot of the default 2048 bytes.
constexpr uint32_t kAfPacketDefaultMaxFrame = 1920;
// The af_packet ring slot (framesz = blocksz, one slot per block: the PMD addresses slot i at
// i x framesz, so no block may end in padding) that the front end configures for frames up to
// `max_frame` bytes: room for the kernel's tpacket header, page-aligned.
inline uint32_t af_packet_slot(uint32_t max_frame) { return (max_frame + 96 + 4095) / 4096 * 4096; }

struct PortCounters {
  rte_eth_stats eth{};
  uint64_t kernel_rx_dropped = 0;
  std::string kernel_interface;
  std::optional<XskDrops> xsk;  // an af_xdp port's sockets, where the kernel says
  // The driver's receive drop and pause counters (xstats.hpp), named in the same order.
  std::vector<uint64_t> drop_xstats, pause_xstats;
  const std::vector<std::string>* drop_names = nullptr;
  const std::vector<std::string>* pause_names = nullptr;
  bool oerrors_lost = true;  // the driver's oerrors are frames it took and lost (not net_ring's)
};

// What a port's counters say it dropped between two readings, with its first `queues` RX
// queues' q_errors.
PortDrops drops_between(const PortCounters& before, const PortCounters& after, uint16_t queues);
// The pause frames a port received between two readings, by counter (those that grew).
std::vector<std::pair<std::string, uint64_t>> pause_between(const PortCounters& before, const PortCounters& after);

// The MTU that lets a port take frames of up to `max_frame` bytes on the wire: the frame less
// its Ethernet header and FCS. VLAN tags count as payload here, so a NIC that allows for tags
// on top of its MTU (ixgbe allows 4 bytes, mlx5 ...) takes a little more, never less.
inline uint32_t mtu_for(uint32_t max_frame) { return max_frame - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN; }

// The RSS redirection table's entries per RX queue (`queues` of them).
std::vector<uint32_t> reta_share(const std::vector<uint16_t>& reta, uint16_t queues);

// The kernel interface (in this network namespace) whose MAC address is `mac`, for af_xdp
// ports (the driver whose interface's rx_dropped are the tester's drops); "" otherwise.
std::string kernel_interface_of(const std::string& driver, const std::array<uint8_t, 6>& mac);

class Ports {
 public:
  // Configures and starts every DPDK port with `queues` RX/TX queue pairs (RSS over the RX
  // queues where the driver offers it). Throws ExecutionFailure naming the port and the step
  // that failed.
  // `max_frame`: the largest frame to carry (on the wire, FCS and VLAN tags included). Above
  // one mbuf segment (jumbo frames) the ports get multi-segment TX where the driver needs to
  // be told, and receive either by scatter RX into chained segments (NICs that offer it, with
  // their MTU raised) or into mbufs of a pool whose data room holds a whole frame (drivers
  // that copy each frame into one mbuf, such as af_packet).
  explicit Ports(const PortOptions& options);
  ~Ports();  // stops and closes the ports
  Ports(const Ports&) = delete;
  Ports& operator=(const Ports&) = delete;

  uint16_t count() const { return uint16_t(ports_.size()); }
  uint16_t queues() const { return options_.queues; }
  // The mbuf pool on each port's NUMA node, per protocol port index.
  const std::vector<rte_mempool*>& pools() const { return port_pools_; }
  BurstIo& io() { return io_; }
  std::vector<PortIdentity>& identities() { return identities_; }
  std::vector<std::unique_ptr<StateTable>>& tables() { return tables_; }
  std::vector<PortInfo> info() const;

  // Every port's own counters (rte_eth_stats, and its kernel interface's rx_dropped), in port
  // order: two readings around a trial give the frames the tester itself dropped in it
  // (drops_between).
  std::vector<PortCounters> counters() const;

  // Whether each port's link is up now (rte_eth_link_get_nowait: no waiting).
  std::vector<bool> links_up() const;
  // Waits up to `timeout` seconds for every port's link; returns the ports still down.
  // `waited`: per port, the seconds until its link was up (or the whole wait).
  std::vector<uint16_t> wait_for_links(double timeout, std::vector<double>* waited = nullptr);

  // Between trials: answers ARP/ND on every port and discards everything else, so the DUT
  // keeps its neighbour entries and no stale frame waits in a queue. `inspect` sees each frame.
  void service(const std::function<void(uint16_t, const rte_mbuf*)>& inspect = nullptr);

  // Asks for the MAC address of `target` (ARP / Neighbor Solicitation every 0.5 s, with the
  // tags of `vlan`) until a reply, `timeout` seconds, or `stop()`.
  std::optional<std::array<uint8_t, 6>> resolve(uint16_t port, int ip_version, const uint8_t* own_ip,
                                                const uint8_t* target, const VlanStack& vlan, double timeout,
                                                const std::function<bool()>& stop);

 private:
  // What start_port found and set for one port: hello's facts about it (PortInfo, its link and
  // flow control read anew by info()) and the counters' ids.
  struct Setup {
    uint16_t ethdev = 0;  // DPDK's port id
    PortInfo info;
    std::vector<uint64_t> drop_ids, pause_ids;  // xstats ids of info.drop_counters, pause_counters
    std::string kernel_interface;  // "" when none
    std::vector<int> xsk_fds;      // an af_xdp port's sockets (xsk_sockets.hpp)
  };

  void order_ports();
  rte_mempool* pool_on(int socket, unsigned mbufs);
  void start_port(Setup& setup);
  void set_flow_control(Setup& setup);
  std::string flow_control_now(const Setup& setup) const;
  void find_xstats(Setup& setup);
  void close();

  PortOptions options_;
  std::map<int, rte_mempool*> pools_;   // per NUMA node
  std::vector<rte_mempool*> port_pools_;  // per port: its node's pool
  rte_mempool* jumbo_rx_pool_ = nullptr;  // created for the first port that needs it
  EthdevIo io_;
  std::vector<uint16_t> ports_;  // DPDK port ids in protocol order
  std::vector<Setup> setups_;
  std::vector<PortIdentity> identities_;               // per port: MAC and the addresses it answers for
  std::vector<std::unique_ptr<StateTable>> tables_;    // per port: the Responder's state table
};

}  // namespace xlp
