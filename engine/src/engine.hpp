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
  // `ports`: how the ports are set up (their queue pairs are served by the EAL's worker
  // lcores; trials with frames above ports.max_frame are refused).
  Engine(const volatile std::sig_atomic_t& interrupted, const PortOptions& ports);

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
  double link_timeout_;
  Ports ports_;
  std::vector<unsigned> workers_;
  uint64_t tsc_hz_ = 0;
  uint8_t trial_tag_ = 0;
};

// A trial in which a port of the tester dropped frames itself (PortDrops::tester_drops) is
// invalid: its losses may be the tester's, not the DUT's. The reason names the ports.
void invalidate_on_tester_drops(TrialReport& report);
// A trial during which a port's link went down is invalid: its losses are the link's.
void invalidate_on_link_down(TrialReport& report);

}  // namespace xlp
