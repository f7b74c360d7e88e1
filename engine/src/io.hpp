// Where the data plane's bursts go. In the engine: the ports' queues (EthdevIo). In the unit
// tests: memory, so that a sender and a receiver run without a NIC and every hand-over
// between workers is visible to ThreadSanitizer (DPDK's own drivers are not instrumented).
#pragma once
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cstdint>

namespace xlp {

class BurstIo {
 public:
  virtual ~BurstIo() = default;
  // rte_eth_rx_burst / rte_eth_tx_burst semantics: tx takes ownership of the first n
  // accepted mbufs and returns n; the caller keeps the rest.
  virtual uint16_t rx(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) = 0;
  virtual uint16_t tx(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) = 0;
};

// One indirect call per burst on top of the driver's own: nothing next to the per-frame work.
class EthdevIo final : public BurstIo {
 public:
  uint16_t rx(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) override {
    return rte_eth_rx_burst(port, queue, bufs, n);
  }
  uint16_t tx(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) override {
    return rte_eth_tx_burst(port, queue, bufs, n);
  }
};

}  // namespace xlp
