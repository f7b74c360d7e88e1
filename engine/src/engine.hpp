// The engine as the protocol sees it: requests carried out on the DPDK ports and workers.
#pragma once
#include <csignal>
#include <cstdint>
#include <vector>

#include "dataplane/runtime.hpp"
#include "ports/ports.hpp"
#include "protocol/protocol.hpp"

namespace xlp {

class Engine final : public protocol::Executor {
 public:
  // `interrupted`: set by the signal handler; aborts a running trial or resolution.
  // `queues`: RX/TX queue pairs per port, served by the EAL's worker lcores. `max_frame`: the
  // largest frame the ports must carry (bytes on the wire with FCS and VLAN tags,
  // --max-frame-size): trials with larger frames are refused.
  Engine(const volatile std::sig_atomic_t& interrupted, uint16_t queues, uint32_t max_frame = kDefaultMaxFrame);

  uint16_t port_count() const override { return ports_.count(); }
  HelloReport hello() override;
  void addresses(const protocol::AddressesRequest& request) override;
  std::array<uint8_t, 6> resolve(const protocol::ResolveRequest& request) override;
  TrialReport trial(const TrialPlan& plan,
                    const std::function<void(const ProgressReport&)>& progress) override;
  // Between requests (the main thread polls every 20 ms): ARP/ND answers, stale frames out.
  void idle() { ports_.service(); }

 private:
  const volatile std::sig_atomic_t& interrupted_;
  uint32_t max_frame_;
  Ports ports_;
  std::vector<unsigned> workers_;
  uint64_t tsc_hz_ = 0;
  uint8_t trial_tag_ = 0;
};

// A trial in which a port of the tester dropped frames itself (PortDrops::tester_drops) is
// invalid: its losses may be the tester's, not the DUT's. The reason names the ports.
void invalidate_on_tester_drops(TrialReport& report);

}  // namespace xlp
