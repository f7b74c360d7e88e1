// What the receiver spends per frame, measured apart from any sender: the engine's own trial
// (its RX task: parse, CE and header checks, sequence, delay, free) on recorded frames.
// bench/header_checks.py drives it; the ring pair's rate is the sender's and the receiver's at
// once, and on a 2-vCPU VM it swung between two levels from trial to trial.
//
//     xlatperf-rx-cost CASES.json [CYCLES]
//     XLATPERF_NO_HUGE=1 valgrind --tool=callgrind xlatperf-rx-cost CASES.json 3   (instructions)
//
// CASES.json: {"frames": N, "cases": {NAME: TRIAL_REQUEST, ...}}, trial requests as the front end
// sends them (docs/protocol.md) with one flow from port 0 to port 1. Each cycle runs every case
// once, in turn: the trial's sender builds N frames into a store (a TX queue that takes them
// all), then its receiver is given them, a burst of 32 at a time, as from a NIC's RX queue
// (its mbufs' fields written as a NIC's driver writes them); the time
// from the first burst handed over to the first empty poll after the last is the receiver's.
// N frames of 2 KiB buffers: 8,192 fill 16 MiB, in the caches as frames a NIC just wrote
// would be (DDIO); more come from memory. One thread, no other worker. Prints JSON: per case
// the receiver's ns per frame in each cycle and their median.
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dataplane/runtime.hpp"
#include "ports/io.hpp"
#include "protocol/protocol.hpp"

namespace {

using xlp::BurstIo;

// Port 0's TX queue keeps every frame; port 1's RX queue hands them out once all N are there.
class ReplayIo final : public BurstIo {
 public:
  explicit ReplayIo(size_t frames) : frames_(frames) { held_.reserve(frames); }
  uint16_t tx(uint16_t port, uint16_t, rte_mbuf** bufs, uint16_t n) override {
    if (port != 0) return 0;
    held_.insert(held_.end(), bufs, bufs + n);
    return n;
  }
  uint16_t rx(uint16_t port, uint16_t, rte_mbuf** bufs, uint16_t n) override {
    if (port != 1 || held_.size() < frames_) return 0;
    const uint64_t now = rte_rdtsc();
    if (next_ == 0) start_ = now;
    const uint16_t k = uint16_t(std::min<size_t>(n, held_.size() - next_));
    std::copy_n(held_.begin() + ptrdiff_t(next_), k, bufs);
    // What a NIC's receive function does besides: it writes each mbuf's fields from its
    // descriptor (the frame's bytes came by DMA), so the receiver finds the mbufs in its cache.
    for (uint16_t i = 0; i < k; ++i) {
      bufs[i]->port = port;
      bufs[i]->ol_flags = 0;
    }
    next_ += k;
    if (k == 0 && end_ == 0) end_ = now;
    return k;
  }
  uint64_t cycles() const { return end_ - start_; }

 private:
  size_t frames_, next_ = 0;
  std::vector<rte_mbuf*> held_;
  uint64_t start_ = 0, end_ = 0;
};

[[noreturn]] void fail(const std::string& why) {
  std::cerr << "xlatperf-rx-cost: " << why << "\n";
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) fail("usage: xlatperf-rx-cost CASES.json [CYCLES]");
  const nlohmann::json spec = nlohmann::json::parse(std::ifstream(argv[1]));
  const size_t frames = spec.at("frames").get<size_t>();
  const int cycles = argc > 2 ? std::stoi(argv[2]) : 50;

  std::vector<std::string> args = {"xlatperf-rx-cost", "--in-memory", "--no-pci", "--lcores=0",
                                   "--no-telemetry",
                                   "--log-level=*:warning"};
  // Under valgrind (callgrind counts the receiver's instructions exactly, where a shared VM's
  // timings swing by tens of percent), which cannot map DPDK's hugepage memory: plain pages.
  if (const char* no_huge = std::getenv("XLATPERF_NO_HUGE"); no_huge && std::string(no_huge) == "1")
    args = {"xlatperf-rx-cost", "--no-huge", "-m", "256", "--file-prefix=xlp-rx-cost", "--no-pci", "--lcores=0",
            "--no-telemetry", "--log-level=*:warning"};
  std::vector<char*> eal_argv;
  for (auto& a : args) eal_argv.push_back(a.data());
  if (rte_eal_init(int(eal_argv.size()), eal_argv.data()) < 0) fail(std::string("EAL: ") + rte_strerror(rte_errno));
  rte_mempool* pool = rte_pktmbuf_pool_create("xlp_rx_cost", uint32_t(frames + 1024), 256, 0,
                                              RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  if (!pool) fail(std::string("mbuf pool: ") + rte_strerror(rte_errno));
  std::vector<xlp::PortIdentity> identities(2);
  identities[0].mac = {0x02, 0, 0, 0, 0, 0x01};
  identities[1].mac = {0x02, 0, 0, 0, 0, 0x02};
  std::vector<std::unique_ptr<xlp::StateTable>> tables(2);
  std::map<std::string, xlp::TrialPlan> plans;
  for (const auto& [name, request] : spec.at("cases").items()) plans.emplace(name, xlp::protocol::parse_trial(request, 2));

  std::map<std::string, std::vector<double>> ns;
  uint8_t tag = 0;
  for (int c = 0; c < cycles; ++c) {
    for (const auto& [name, plan] : plans) {
      ReplayIo io(frames);
      tag = uint8_t(tag % 255 + 1);
      xlp::Trial trial(plan, tag, io, pool, rte_get_tsc_hz(), identities, tables);
      trial.run({}, [] {});
      const xlp::TrialReport report = trial.result(0);
      const xlp::FlowReport& flow = report.flows.at(0);
      if (flow.sent != frames || flow.received != frames)
        fail(name + ": " + std::to_string(flow.received) + " of " + std::to_string(flow.sent) + " frames received as good, " +
             std::to_string(frames) + " planned: " + xlp::protocol::serialise(report).dump());
      ns[name].push_back(double(io.cycles()) * 1e9 / double(rte_get_tsc_hz()) / double(frames));
    }
  }
  nlohmann::json out = {{"frames", frames}, {"cycles", cycles}, {"cases", nlohmann::json::object()}};
  for (auto& [name, values] : ns) {
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    out["cases"][name] = {{"ns_per_frame", values}, {"median_ns_per_frame", sorted[sorted.size() / 2]}};
  }
  std::cout << out.dump(2) << "\n";
  rte_eal_cleanup();
  return 0;
}
