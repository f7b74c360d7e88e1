// Where the data plane's bursts go. In the engine: the ports' queues (EthdevIo). In the unit
// tests: memory, so that a sender and a receiver run without a NIC and every hand-over
// between workers is visible to ThreadSanitizer (DPDK's own drivers are not instrumented).
#pragma once
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <array>
#include <cstdint>

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
  uint16_t receive(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) {
    return ethdev_ ? rte_eth_rx_burst(port, queue, bufs, n) : rx(port, queue, bufs, n);
  }
  uint16_t send(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) {
    return ethdev_ ? rte_eth_tx_burst(port, queue, bufs, n) : tx(port, queue, bufs, n);
  }

 protected:
  explicit BurstIo(bool ethdev = false) : ethdev_(ethdev) {}

 private:
  const bool ethdev_;
};

class EthdevIo final : public BurstIo {
 public:
  EthdevIo() : BurstIo(true) {}
  uint16_t rx(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) override {
    return rte_eth_rx_burst(port, queue, bufs, n);
  }
  uint16_t tx(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) override {
    return rte_eth_tx_burst(port, queue, bufs, n);
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
