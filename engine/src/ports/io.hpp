// Where the data plane's bursts go. In the engine: the ports' queues (EthdevIo). In the unit
// tests: memory, so that a sender and a receiver run without a NIC and every hand-over
// between workers is visible to ThreadSanitizer (DPDK's own drivers are not instrumented).
#pragma once
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <vector>

#include "core/neighbor.hpp"

namespace xlp {

class BurstIo {
 public:
  virtual ~BurstIo() = default;
  // rte_eth_rx_burst / rte_eth_tx_burst semantics: tx takes ownership of the first n
  // accepted mbufs and returns n; the caller keeps the rest. The data plane calls these
  // through receive()/send() below.
  virtual uint16_t rx(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) = 0;
  virtual uint16_t tx(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) = 0;

  // The ports' queues are called directly, keeping DPDK's inline fast path: going through
  // the virtual call cost about 10 % of the fixed-frame rate on net_null (BENCHMARKS.md).
  // A test's memory I/O takes the virtual call (one predictable branch per burst).
  // `port` is the protocol's port index (0 = left, 1 = right); the ports' queues are reached
  // through the DPDK port it names (ethdev_port).
  uint16_t receive(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) {
    return ethdev_ ? rte_eth_rx_burst(ethdev_port_[port], queue, bufs, n) : rx(port, queue, bufs, n);
  }
  uint16_t send(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) {
    return ethdev_ ? rte_eth_tx_burst(ethdev_port_[port], queue, bufs, n) : tx(port, queue, bufs, n);
  }

 protected:
  explicit BurstIo(bool ethdev = false) : ethdev_(ethdev) {
    for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; ++p) ethdev_port_[p] = p;
  }

  // The DPDK port of each protocol port index. DPDK numbers ports in its probing order (PCI
  // devices by address, before virtual ones); the sides follow the configuration instead.
  std::array<uint16_t, RTE_MAX_ETHPORTS> ethdev_port_{};

 private:
  const bool ethdev_;
};

class EthdevIo final : public BurstIo {
 public:
  EthdevIo() : BurstIo(true) {}
  // Protocol port index i is DPDK port `ethdev_ports[i]`.
  void map_ports(const std::vector<uint16_t>& ethdev_ports) {
    for (size_t i = 0; i < ethdev_ports.size(); ++i) ethdev_port_[i] = ethdev_ports[i];
  }
  uint16_t rx(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) override {
    return rte_eth_rx_burst(ethdev_port_[port], queue, bufs, n);
  }
  uint16_t tx(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) override {
    return rte_eth_tx_burst(ethdev_port_[port], queue, bufs, n);
  }
};

// What a port answers ARP/ND for, and with which MAC. A reply leaves on the TX queue with
// the number of the RX queue the request came in on: the same worker serves both.
struct PortIdentity {
  std::array<uint8_t, 6> mac{};
  AddressSet owned;
};

// Answers an ARP request / Neighbor Solicitation in `m` if it asks for one of the port's
// addresses; returns true when a reply was sent.
bool answer_neighbor(BurstIo& io, uint16_t port, uint16_t queue, const rte_mbuf* m, const PortIdentity& id,
                     rte_mempool* pool);

}  // namespace xlp
