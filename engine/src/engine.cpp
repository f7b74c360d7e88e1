#include "engine.hpp"

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_version.h>

#include <chrono>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"

#ifndef XLP_VERSION
#define XLP_VERSION "0.1.0"
#endif

namespace xlp {

Engine::Engine(const volatile std::sig_atomic_t& interrupted, uint16_t queues, uint32_t max_frame)
    : interrupted_(interrupted), max_frame_(max_frame), ports_(queues, max_frame) {
  unsigned lcore;
  RTE_LCORE_FOREACH_WORKER(lcore) workers_.push_back(lcore);
  tsc_hz_ = rte_get_tsc_hz();
}

HelloReport Engine::hello() {
  HelloReport r;
  r.engine = XLP_VERSION;
  r.dpdk = rte_version();
  r.tsc_hz = tsc_hz_;
  r.main_lcore = rte_get_main_lcore();
  r.workers = workers_;
  r.ports = ports_.info();
  return r;
}

void Engine::addresses(const protocol::AddressesRequest& request) {
  for (const auto& [port, set] : request.ports) ports_.identities().at(port).owned = set;
}

std::array<uint8_t, 6> Engine::resolve(const protocol::ResolveRequest& r) {
  const auto mac = ports_.resolve(r.port, r.ip_version, r.own_ip.data(), r.target.data(), r.vlan, r.timeout,
                                  [this] { return interrupted_ != 0; });
  if (!mac) {
    throw ExecutionFailure("no reply from " + r.target_text + " on port " + std::to_string(r.port) +
                           " within " + nlohmann::json(r.timeout).dump() + " s");
  }
  return *mac;
}

TrialReport Engine::trial(const TrialPlan& plan, const std::function<void(const ProgressReport&)>& progress) {
  check_frame_sizes(plan, max_frame_);
  trial_tag_ = uint8_t(trial_tag_ % 255 + 1);  // 1..255, never 0
  ports_.service();
  const std::vector<PortCounters> before = ports_.counters();
  Trial trial(plan, trial_tag_, ports_.io(), ports_.pool(), tsc_hz_, ports_.identities(), ports_.tables(),
              ports_.queues());
  const auto t0 = std::chrono::steady_clock::now();
  auto last_progress = t0;
  const auto interval = std::chrono::duration<double>(plan.progress_interval);
  trial.run(workers_, [&] {
    if (interrupted_) trial.request_abort();
    const auto now = std::chrono::steady_clock::now();
    if (plan.progress_interval > 0 && now - last_progress >= interval) {
      last_progress = now;
      progress({std::chrono::duration<double>(now - t0).count(), trial.progress()});
    }
  });
  TrialReport report = trial.result(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const std::vector<PortCounters> after = ports_.counters();
  for (PortReport& port : report.ports)
    port.drops = drops_between(before.at(port.index), after.at(port.index), ports_.queues());
  invalidate_on_tester_drops(report);
  return report;
}

void invalidate_on_tester_drops(TrialReport& report) {
  std::string dropped;
  for (const PortReport& port : report.ports) {
    if (port.drops.tester_drops() == 0) continue;
    dropped += (dropped.empty() ? "" : "; ") + std::string("port ") + std::to_string(port.index) + " missed " +
               std::to_string(port.drops.imissed) + " (imissed: its RX ring was full) and had no mbuf for " +
               std::to_string(port.drops.rx_nombuf) + " (rx_nombuf)";
    if (!port.drops.kernel_interface.empty())
      dropped += ", its kernel interface " + port.drops.kernel_interface + " dropped " +
                 std::to_string(port.drops.kernel_rx_dropped) + " (rx_dropped)";
  }
  if (dropped.empty() || !report.valid) return;
  report.valid = false;
  report.invalid_reason = "tester dropped frames: " + dropped;
}

}  // namespace xlp
