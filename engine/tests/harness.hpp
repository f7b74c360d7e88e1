// The data plane without a NIC: DPDK's EAL started once per process with --no-huge --no-pci
// (needs root, as CI has), and ports in memory whose "DUT" is a function of the test. Every
// frame passes a mutex on its way from the sending to the receiving worker, so the hand-over
// is a synchronisation ThreadSanitizer sees (DPDK's drivers are not instrumented).
#pragma once
#include <gtest/gtest.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ports/io.hpp"
#include "dataplane/runtime.hpp"

namespace xlp::test {

// A trial request's stream of fixed frames (docs/protocol.md) between the two test ports.
inline nlohmann::json stream(int version, uint32_t size) {
  return {{"ip_version", version}, {"src_mac", "02:00:00:00:00:01"}, {"dst_mac", "02:00:00:00:00:02"},
          {"src_ip", version == 4 ? "198.18.0.2" : "2001:2::2"},
          {"dst_ip", version == 4 ? "198.19.0.2" : "2001:2:0:8000::2"}, {"frame_size", size}};
}

struct Eal {
  rte_mempool* pool = nullptr;
  std::vector<unsigned> workers;
  uint64_t tsc_hz = 0;
  std::string error;  // why the EAL or the pool could not be set up
};

// Main lcore and two workers, spread over the CPUs this process may use: a TX task and an RX
// task on different workers, as in a bidirectional trial of the engine.
inline const Eal& eal() {
  static const Eal instance = [] {
    Eal e;
    cpu_set_t cpus;
    std::string allowed;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &cpus)) allowed += (allowed.empty() ? "" : ",") + std::to_string(c);
    const std::string lcores = "--lcores=(0-2)@(" + (allowed.empty() ? std::string("0") : allowed) + ")";
    const std::string prefix = "xlptest" + std::to_string(getpid());
    std::vector<std::string> args = {"dataplane_tests", "--no-huge", "--no-pci", "-m", "256", lcores,
                                     "--file-prefix", prefix, "--no-telemetry", "--log-level=*:warning"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    if (rte_eal_init(int(argv.size()), argv.data()) < 0) {
      e.error = std::string("EAL initialisation failed (the data-plane tests need root): ") + rte_strerror(rte_errno);
      return e;
    }
    e.pool = rte_pktmbuf_pool_create("xlp_test_pool", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    if (!e.pool) e.error = std::string("cannot create the mbuf pool: ") + rte_strerror(rte_errno);
    unsigned lcore;
    RTE_LCORE_FOREACH_WORKER(lcore) e.workers.push_back(lcore);
    e.tsc_hz = rte_get_tsc_hz();
    return e;
  }();
  return instance;
}

// Fails the calling test (never skips it) when the EAL is not there.
#define XLP_REQUIRE_EAL()                                 \
  do {                                                    \
    ASSERT_EQ(::xlp::test::eal().error, std::string());   \
    ASSERT_EQ(::xlp::test::eal().workers.size(), 2u);     \
  } while (0)

// Two ports in memory with `queues` RX/TX queue pairs each. A frame sent on a port goes to
// `dut`, which delivers it (or copies, or nothing) to a port; the default DUT is a cable:
// 0 <-> 1. A delivered frame enters the RX queue that a stand-in for RSS picks from its UDP
// ports and IP addresses (the same header, the same queue, as with a NIC's RSS).
class MemoryIo final : public BurstIo {
 public:
  using Deliver = std::function<void(uint16_t port, rte_mbuf* m)>;
  // Called under the lock for every frame sent on `port`, in sending order; it owns `m`.
  // tx_queue() tells the TX queue it was sent on.
  using Dut = std::function<void(uint16_t port, rte_mbuf* m, const Deliver& deliver)>;

  explicit MemoryIo(Dut dut = nullptr, uint16_t queues = 1) : dut_(std::move(dut)), queues_(queues) {
    for (auto& port : inbox_) port.resize(queues);
  }
  ~MemoryIo() override {
    for (auto& port : inbox_)
      for (auto& q : port)
        for (rte_mbuf* m : q) rte_pktmbuf_free(m);
    for (const Held& h : held_) rte_pktmbuf_free(h.m);
  }

  // Inside the DUT callback: delivers `m` to `port` once `delay` has passed (a DUT that holds a
  // frame back; the receivers' reads of other frames go on meanwhile).
  void deliver_after(std::chrono::steady_clock::duration delay, uint16_t port, rte_mbuf* m) {
    held_.push_back({std::chrono::steady_clock::now() + delay, port, m});
  }

  uint16_t rx(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < held_.size();)
      if (held_[i].until <= std::chrono::steady_clock::now()) {
        inbox_[held_[i].port].at(rss(held_[i].m)).push_back(held_[i].m);
        held_.erase(held_.begin() + ptrdiff_t(i));
      } else {
        ++i;
      }
    auto& q = inbox_[port].at(queue);
    uint16_t k = 0;
    for (; k < n && !q.empty(); ++k) {
      bufs[k] = q.front();
      q.pop_front();
    }
    return k;
  }

  uint16_t tx(uint16_t port, uint16_t queue, rte_mbuf** bufs, uint16_t n) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const Deliver deliver = [this](uint16_t to, rte_mbuf* m) { inbox_[to].at(rss(m)).push_back(m); };
    tx_queue_ = queue;
    for (uint16_t i = 0; i < n; ++i) {
      ++sent_[port];
      if (dut_) dut_(port, bufs[i], deliver);
      else deliver(uint16_t(1 - port), bufs[i]);
    }
    return n;
  }

  uint64_t sent(uint16_t port) {
    std::lock_guard<std::mutex> lock(mutex_);
    return sent_[port];
  }
  uint16_t tx_queue() const { return tx_queue_; }  // inside the DUT callback
  uint16_t queues() const { return queues_; }

 private:
  // The RX queue of a frame: a hash of the IPv4/IPv6 addresses and UDP ports (queue 0 for
  // anything else), like a NIC's RSS.
  uint16_t rss(const rte_mbuf* m) const {
    if (queues_ == 1) return 0;
    const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
    const uint16_t ethertype = uint16_t(p[12] << 8 | p[13]);
    size_t addrs, len, l4;
    if (ethertype == 0x0800) addrs = 14 + 12, len = 8, l4 = 14 + size_t(p[14] & 0x0f) * 4;
    else if (ethertype == 0x86DD) addrs = 14 + 8, len = 32, l4 = 14 + 40;
    else return 0;
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
    for (size_t i = 0; i < len; ++i) h = (h ^ p[addrs + i]) * 0x100000001b3ull;
    for (size_t i = 0; i < 4; ++i) h = (h ^ p[l4 + i]) * 0x100000001b3ull;
    return uint16_t(h % queues_);
  }

  std::mutex mutex_;
  Dut dut_;
  uint16_t queues_;
  std::vector<std::deque<rte_mbuf*>> inbox_[2];
  struct Held {
    std::chrono::steady_clock::time_point until;
    uint16_t port;
    rte_mbuf* m;
  };
  std::vector<Held> held_;
  uint64_t sent_[2] = {0, 0};
  uint16_t tx_queue_ = 0;
};

// One trial on MemoryIo: `tick` runs on this thread about every millisecond while the
// workers send and receive (an empty worker list runs every task on this thread).
class Bench {
 public:
  explicit Bench(MemoryIo::Dut dut = nullptr, uint16_t queues = 1) : io(std::move(dut), queues), identities(2), tables(2) {
    identities[0].mac = {0x02, 0, 0, 0, 0, 0x01};
    identities[1].mac = {0x02, 0, 0, 0, 0, 0x02};
  }

  // workers: how many of the EAL's two worker lcores run the tasks (0: this thread).
  TrialReport run(const TrialPlan& plan, const std::function<void(Trial&)>& tick = nullptr, size_t workers = 2) {
    trial_tag = uint8_t(trial_tag % 255 + 1);
    Trial trial(plan, trial_tag, io, eal().pool, eal().tsc_hz, identities, tables, io.queues());
    if (before_run) before_run(trial);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<unsigned> lcores(eal().workers.begin(), eal().workers.begin() + ptrdiff_t(workers));
    trial.run(lcores, [&] {
      if (tick) tick(trial);
    });
    return trial.result(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }

  MemoryIo io;
  std::function<void(Trial&)> before_run;  // called on each trial before it runs
  std::vector<PortIdentity> identities;
  std::vector<std::unique_ptr<StateTable>> tables;
  uint8_t trial_tag = 0;
};

}  // namespace xlp::test
