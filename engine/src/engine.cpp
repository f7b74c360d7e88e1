#include "engine.hpp"

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_version.h>

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"

#ifndef XLP_VERSION
#define XLP_VERSION "0.1.0"
#endif

namespace xlp {

Engine::Engine(const volatile std::sig_atomic_t& interrupted, const PortOptions& ports)
    : interrupted_(interrupted), max_frame_(ports.max_frame), link_timeout_(ports.link_timeout), ports_(ports) {
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
  // A link that is down (a cable pulled, a DUT rebooting) is waited for as at start; a trial
  // never runs on a dead link.
  if (const std::vector<uint16_t> down = ports_.wait_for_links(link_timeout_); !down.empty()) {
    std::string names;
    for (uint16_t p : down) names += (names.empty() ? "" : ", ") + std::to_string(p) + " (" + ports_.info()[p].name + ")";
    throw ExecutionFailure("link down on port " + names + " (waited " + nlohmann::json(link_timeout_).dump() +
                           " s, tester.link_timeout)");
  }
  trial_tag_ = uint8_t(trial_tag_ % 255 + 1);  // 1..255, never 0
  ports_.service();
  const std::vector<PortCounters> before = ports_.counters();
  Trial trial(plan, trial_tag_, ports_.io(), PortPools(ports_.pools()), tsc_hz_, ports_.identities(), ports_.tables(),
              ports_.queues());
  const auto t0 = std::chrono::steady_clock::now();
  auto last_progress = t0, last_link_check = t0;
  const auto interval = std::chrono::duration<double>(plan.progress_interval);
  // The links are polled while the trial runs: one that goes down and comes back up between
  // two trials' checks still invalidates the trial it happened in.
  std::vector<bool> up = ports_.links_up();
  std::vector<uint32_t> went_down(up.size(), 0);
  const auto check_links = [&] {
    const std::vector<bool> now = ports_.links_up();
    for (size_t i = 0; i < now.size(); ++i) {
      if (up[i] && !now[i]) ++went_down[i];
      up[i] = now[i];
    }
  };
  trial.run(workers_, [&] {
    if (interrupted_) trial.request_abort();
    const auto now = std::chrono::steady_clock::now();
    if (now - last_link_check >= std::chrono::milliseconds(50)) {
      last_link_check = now;
      check_links();
    }
    if (plan.progress_interval > 0 && now - last_progress >= interval) {
      last_progress = now;
      progress({std::chrono::duration<double>(now - t0).count(), trial.progress()});
    }
  });
  TrialReport report = trial.result(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  check_links();
  const std::vector<PortCounters> after = ports_.counters();
  // Every port's counters: a port that received no test frames has no entry yet, and gets one
  // when it has something to say (frames it failed to send, pause frames, its link).
  for (uint16_t i = 0; i < ports_.count(); ++i) {
    auto it = std::find_if(report.ports.begin(), report.ports.end(), [&](const PortReport& p) { return p.index == i; });
    PortReport port;
    port.index = i;
    PortReport& entry = it != report.ports.end() ? *it : port;
    entry.drops = drops_between(before.at(i), after.at(i), ports_.queues());
    entry.pause_received = pause_between(before.at(i), after.at(i));
    entry.link_down = went_down.at(i);
    if (it == report.ports.end() && (entry.drops.tester_drops() > 0 || !entry.pause_received.empty() || entry.link_down))
      report.ports.push_back(entry);
  }
  invalidate_on_link_down(report);
  invalidate_on_tester_drops(report);
  return report;
}

void invalidate_on_link_down(TrialReport& report) {
  std::string down;
  for (const PortReport& port : report.ports)
    if (port.link_down > 0)
      down += (down.empty() ? "" : ", ") + std::to_string(port.index) + " (" + std::to_string(port.link_down) +
              (port.link_down == 1 ? " time)" : " times)");
  if (down.empty() || !report.valid) return;
  report.valid = false;
  report.invalid_reason = "link down during the trial on port " + down;
}

void invalidate_on_tester_drops(TrialReport& report) {
  std::string dropped;
  for (const PortReport& port : report.ports) {
    if (port.drops.tester_drops() == 0) continue;
    dropped += (dropped.empty() ? "" : "; ") + std::string("port ") + std::to_string(port.index) + " missed " +
               std::to_string(port.drops.imissed) + " (imissed: its RX ring was full) and had no mbuf for " +
               std::to_string(port.drops.rx_nombuf) + " (rx_nombuf)";
    for (const auto& [name, count] : port.drops.xstats)
      dropped += ", its driver counted " + std::to_string(count) + " in " + name;
    if (port.drops.tx_lost)
      dropped += ", and " + std::to_string(port.drops.tx_lost) + " frames it took for sending failed to leave (oerrors)";
    if (!port.drops.kernel_interface.empty())
      dropped += ", its kernel interface " + port.drops.kernel_interface + " dropped " +
                 std::to_string(port.drops.kernel_rx_dropped) + " (rx_dropped)";
    if (port.drops.xsk && port.drops.xsk->lost())
      dropped += ", its AF_XDP sockets lost " + std::to_string(port.drops.xsk->lost()) + " (" +
                 std::to_string(port.drops.xsk->rx_full) + " for a full RX ring, " +
                 std::to_string(port.drops.xsk->rx_dropped) + " without a free buffer)";
  }
  if (dropped.empty() || !report.valid) return;
  report.valid = false;
  report.invalid_reason = "tester dropped frames: " + dropped;
}

}  // namespace xlp
