// The sender, the receiver and result building, run on ports in memory (harness.hpp): exact
// frame counts, sequence/duplicate/reorder accounting, delays and the report's values.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine.hpp"
#include "core/errors.hpp"
#include "core/frame.hpp"
#include "harness.hpp"
#include "ports/ports.hpp"
#include "protocol/protocol.hpp"

using namespace xlp;
using nlohmann::json;
using test::stream;

namespace {

// One flow from port 0 to port 1 sending exactly `frames` frames at `rate`. A duration well
// beyond frames / rate: a worker the OS schedules late must not make the trial invalid (the
// trial still ends as soon as everything arrived, or `timeout` after the last frame).
json request(uint64_t frames, uint64_t rate, double duration) {
  return {{"duration", duration}, {"timeout", 0.05}, {"finish_early", true},
          {"flows", {{{"name", "forward"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", rate}, {"frames", frames},
                      {"foreground", stream(4, 64)}}}}};
}

TrialPlan plan_of(const json& request) { return protocol::parse_trial(request, 2); }

TestTag tag_of(const rte_mbuf* m) {
  TestTag tag;
  EXPECT_TRUE(parse_test_frame(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, tag));
  return tag;
}

// The tag's fields as bytes of the frame (docs/protocol.md, "Test frame payload").
uint8_t* tag_bytes(rte_mbuf* m) {
  TestTag tag;
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  parse_test_frame(data, m->data_len, tag);
  return data + tag.l3_offset + (data[tag.l3_offset] >> 4 == 4 ? 20 : 40) + kUdpHeader;
}

}  // namespace

// The af_xdp ports' sockets get the larger send buffer; other sockets keep theirs.
TEST(Ports, EnlargesTheSendBufferOfAfXdpSocketsOnly) {
  const auto send_buffer = [](int fd) {
    int bytes = 0;
    socklen_t len = sizeof bytes;
    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, &len);
    return bytes;
  };
  const int xdp = socket(44 /* AF_XDP */, SOCK_RAW, 0);
  if (xdp < 0) GTEST_SKIP() << "this kernel offers no AF_XDP sockets";
  const int udp = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(udp, 0);
  const int udp_before = send_buffer(udp);
  enlarge_af_xdp_send_buffers();
  if (send_buffer(xdp) < kAfXdpSendBuffer && geteuid() != 0) GTEST_SKIP() << "needs CAP_NET_ADMIN";
  EXPECT_GE(send_buffer(xdp), kAfXdpSendBuffer);  // the kernel doubles what it is given
  EXPECT_EQ(send_buffer(udp), udp_before);
  close(xdp);
  close(udp);
}

TEST(Dataplane, SenderSendsEveryFrameOnceInOrderAndTheReceiverCountsThem) {
  XLP_REQUIRE_EAL();
  std::vector<std::pair<uint8_t, uint32_t>> wire;  // (stream, seq) of each frame, in order
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    const TestTag tag = tag_of(m);
    wire.emplace_back(tag.stream, tag.seq);
    deliver(uint16_t(1 - port), m);
  });
  uint64_t progress_reads = 0;
  const TrialReport r = bench.run(plan_of(request(300, 30000, 1.0)), [&](Trial& t) {
    progress_reads += t.progress().size();  // read while the workers write
  });
  ASSERT_EQ(wire.size(), 300u);
  for (uint32_t k = 0; k < 300; ++k) EXPECT_EQ(wire[k], std::make_pair(uint8_t(0), k));
  EXPECT_TRUE(r.valid) << r.invalid_reason;
  EXPECT_EQ(r.invalid_reason, "");
  ASSERT_EQ(r.flows.size(), 1u);
  const FlowReport& f = r.flows[0];
  EXPECT_EQ(f.name, "forward");
  EXPECT_EQ(f.rate, 30000u);
  EXPECT_EQ(f.planned, 300u);
  EXPECT_EQ(f.sent, 300u);
  EXPECT_EQ(f.received, 300u);
  EXPECT_GE(f.send_time, 299.0 / 30000);  // the last frame is due 299/rate after the start
  EXPECT_LE(f.send_time, 1.0 * (1 + 1e-5));
  ASSERT_EQ(f.streams.size(), 1u);
  const StreamReport& s = f.streams[0];
  EXPECT_EQ(s.kind, "foreground");
  EXPECT_EQ(s.sent, 300u);
  EXPECT_EQ(s.received, 300u);
  EXPECT_EQ(s.duplicates + s.reordered + s.bad_length + s.out_of_range, 0u);
  EXPECT_EQ(s.frame_size, 64u);
  EXPECT_EQ(s.rx_frame_size, 64u);
  ASSERT_TRUE(s.delay_ns.has_value());
  EXPECT_LE(s.delay_ns->min, s.delay_ns->mean);
  EXPECT_LE(s.delay_ns->mean, s.delay_ns->max);
  EXPECT_FALSE(s.late || s.delay || s.ipdv || s.tagged);  // none was asked for
  ASSERT_EQ(r.ports.size(), 1u);
  EXPECT_EQ(r.ports[0].index, 1u);
  EXPECT_EQ(r.ports[0].foreign, 0u);
  EXPECT_FALSE(r.state_table.has_value());
  EXPECT_EQ(bench.io.sent(0), 300u);
  EXPECT_EQ(bench.io.sent(1), 0u);
}

TEST(Dataplane, OneThreadRunsTheWholeTrialWithoutWorkers) {
  XLP_REQUIRE_EAL();
  test::Bench bench;
  const TrialReport r = bench.run(plan_of(request(50, 10000, 1.0)), nullptr, 0);
  EXPECT_TRUE(r.valid) << r.invalid_reason;
  EXPECT_EQ(r.flows[0].sent, 50u);
  EXPECT_EQ(r.flows[0].received, 50u);
}

TEST(Dataplane, MixSendsForegroundAndBackgroundByTheFramePattern) {
  XLP_REQUIRE_EAL();
  std::vector<std::pair<uint8_t, uint32_t>> wire;
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    const TestTag tag = tag_of(m);
    wire.emplace_back(tag.stream, tag.seq);
    deliver(uint16_t(1 - port), m);
  });
  json req = request(200, 20000, 1.0);
  req["flows"][0]["mix"] = {{"n", 4}, {"m", 3}};
  req["flows"][0]["background"] = stream(6, 84);
  const TrialReport r = bench.run(plan_of(req));
  ASSERT_EQ(wire.size(), 200u);
  uint32_t next[2] = {0, 0};
  for (uint32_t k = 0; k < 200; ++k) {
    const uint8_t s = k % 4 < 3 ? 0 : 1;  // frame k is foreground iff k % n < m
    EXPECT_EQ(wire[k], std::make_pair(s, next[s]++)) << "frame " << k;
  }
  ASSERT_EQ(r.flows[0].streams.size(), 2u);
  EXPECT_EQ(r.flows[0].streams[0].kind, "foreground");
  EXPECT_EQ(r.flows[0].streams[0].sent, 150u);
  EXPECT_EQ(r.flows[0].streams[0].received, 150u);
  EXPECT_EQ(r.flows[0].streams[1].kind, "background");
  EXPECT_EQ(r.flows[0].streams[1].sent, 50u);
  EXPECT_EQ(r.flows[0].streams[1].received, 50u);
  EXPECT_EQ(r.flows[0].streams[1].frame_size, 84u);
  EXPECT_EQ(r.flows[0].received, 200u);
}

TEST(Dataplane, ReceiverCountsLossesDuplicatesAndReordering) {
  XLP_REQUIRE_EAL();
  // The DUT swaps each pair (2i, 2i+1), drops every seq % 10 == 9 and sends seq % 10 == 0
  // twice: per 10 frames 1 lost, 1 duplicate, and 4 pairs arrive reversed (the pair with the
  // dropped frame cannot).
  rte_mbuf* held = nullptr;
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    const uint32_t seq = tag_of(m).seq;
    if (seq % 2 == 0) {
      held = m;
      return;
    }
    if (seq % 10 == 9) rte_pktmbuf_free(m);
    else deliver(uint16_t(1 - port), m);
    const uint32_t held_seq = tag_of(held).seq;
    deliver(uint16_t(1 - port), held);
    if (held_seq % 10 == 0) deliver(uint16_t(1 - port), rte_pktmbuf_copy(held, test::eal().pool, 0, UINT32_MAX));
    held = nullptr;
  });
  const TrialReport r = bench.run(plan_of(request(200, 20000, 1.0)));
  const StreamReport& s = r.flows[0].streams[0];
  EXPECT_TRUE(r.valid) << r.invalid_reason;
  EXPECT_EQ(s.sent, 200u);
  EXPECT_EQ(s.received, 180u);
  EXPECT_EQ(s.duplicates, 20u);
  EXPECT_EQ(s.reordered, 80u);
  EXPECT_EQ(s.bad_length, 0u);
  EXPECT_EQ(r.flows[0].received, 180u);
}

TEST(Dataplane, WrongLengthsAndOtherFramesAreNotCounted) {
  XLP_REQUIRE_EAL();
  // seq % 5 == 0 arrive a byte longer (bad_length); seq 0 also comes back as a frame of an
  // earlier trial (another trial tag) and as a frame without the magic: both foreign.
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    const uint32_t seq = tag_of(m).seq;
    const uint16_t to = uint16_t(1 - port);
    if (seq == 0) {
      rte_mbuf* stale = rte_pktmbuf_copy(m, test::eal().pool, 0, UINT32_MAX);
      tag_bytes(stale)[7] ^= 0x80;
      deliver(to, stale);
      rte_mbuf* other = rte_pktmbuf_copy(m, test::eal().pool, 0, UINT32_MAX);
      tag_bytes(other)[0] = 'Y';
      deliver(to, other);
    }
    if (seq % 5 == 0) rte_pktmbuf_append(m, 1);
    deliver(to, m);
  });
  const TrialReport r = bench.run(plan_of(request(200, 20000, 1.0)));
  const StreamReport& s = r.flows[0].streams[0];
  EXPECT_EQ(s.sent, 200u);
  EXPECT_EQ(s.bad_length, 40u);
  EXPECT_EQ(s.received, 160u);
  EXPECT_EQ(s.duplicates, 0u);
  ASSERT_EQ(r.ports.size(), 1u);
  EXPECT_EQ(r.ports[0].foreign, 2u);
  EXPECT_EQ(r.ports[0].neighbor_replies, 0u);  // port 1 owns no address
}

// The tester's ports run promiscuous, so frames a DUT floods reach them: a test frame whose
// Ethernet destination is not the receiving port's MAC (a MAC nobody has, broadcast, multicast)
// is bad_address, not received, on either port. A stream without rx has no header checks at
// all, this one included (docs/protocol.md "Header checks").
TEST(Dataplane, TestFramesToAnotherMacAreBadAddress) {
  XLP_REQUIRE_EAL();
  const std::array<std::array<uint8_t, 6>, 3> elsewhere = {
      parse_mac("02:00:00:00:00:09"), parse_mac("ff:ff:ff:ff:ff:ff"), parse_mac("33:33:00:00:00:01")};
  test::Bench* at = nullptr;
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    const uint16_t to = uint16_t(1 - port);
    const uint32_t k = tag_of(m).seq % 5;  // 0, 1: to the receiving port; 2..4: elsewhere
    const std::array<uint8_t, 6>& mac = k < 2 ? at->identities[to].mac : elsewhere[k - 2];
    std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), mac.data(), 6);
    deliver(to, m);
  });
  at = &bench;
  json forward = stream(4, 64);
  forward["rx"] = {{"ip_version", 4}, {"src_ip", forward["src_ip"]}, {"dst_ip", forward["dst_ip"]}};
  json reverse = forward;
  std::swap(reverse["src_mac"], reverse["dst_mac"]);
  const json req = {
      {"duration", 1.0}, {"timeout", 0.05}, {"finish_early", true},
      {"flows",
       {{{"name", "forward"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", 10000}, {"frames", 100},
         {"foreground", forward}},
        {{"name", "reverse"}, {"tx_port", 1}, {"rx_port", 0}, {"rate", 10000}, {"frames", 100},
         {"foreground", reverse}},
        {{"name", "unchecked"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", 10000}, {"frames", 100},
         {"foreground", stream(4, 64)}}}}};
  const TrialReport r = bench.run(plan_of(req));
  ASSERT_EQ(r.flows.size(), 3u);
  for (size_t f = 0; f < 2; ++f) {
    const StreamReport& s = r.flows[f].streams[0];
    EXPECT_EQ(s.sent, 100u) << r.flows[f].name;
    EXPECT_EQ(s.received, 40u) << r.flows[f].name;
    ASSERT_TRUE(s.header_faults.has_value());
    for (size_t v = 1; v < kVerdicts; ++v)
      EXPECT_EQ((*s.header_faults)[v], v == size_t(Verdict::kBadAddress) ? 60u : 0u)
          << r.flows[f].name << " " << kVerdictNames[v];
  }
  EXPECT_EQ(r.flows[2].streams[0].received, 100u);
  EXPECT_FALSE(r.flows[2].streams[0].header_faults.has_value());
  for (const auto& p : r.ports) EXPECT_EQ(p.foreign, 0u) << p.index;  // test frames all, not foreign
}

// rx.count_df: a "translator" that clears DF on every third frame (the mixed behaviour RFC
// 7915 and RFC 6145 each call wrong) has its frames received and counted by their DF flag;
// the verdict on the mix is the front end's.
TEST(Dataplane, DfCounted) {
  XLP_REQUIRE_EAL();
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    uint8_t* ip = rte_pktmbuf_mtod(m, uint8_t*) + 14;
    if (tag_of(m).seq % 3 == 0) {
      ip[6] &= uint8_t(~0x40);
      ip[10] = ip[11] = 0;
      const uint16_t c = internet_checksum(ip, 20);
      ip[10] = uint8_t(c >> 8), ip[11] = uint8_t(c);
    }
    deliver(uint16_t(1 - port), m);
  });
  json forward = stream(4, 64);
  forward["rx"] = {{"ip_version", 4}, {"src_ip", forward["src_ip"]}, {"count_df", true}};
  const json req = {{"duration", 1.0}, {"timeout", 0.05}, {"finish_early", true},
                    {"flows",
                     {{{"name", "forward"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", 10000}, {"frames", 99},
                       {"foreground", forward}}}}};
  const TrialReport r = bench.run(plan_of(req));
  const StreamReport& s = r.flows[0].streams[0];
  EXPECT_EQ(s.received, 99u);
  ASSERT_TRUE(s.df.has_value());
  EXPECT_EQ(s.df->set, 66u);
  EXPECT_EQ(s.df->clear, 33u);
}

TEST(Dataplane, PerFrameTimeoutHistogramIpdvAndTaggedFrames) {
  XLP_REQUIRE_EAL();
  // seq % 4 == 1 arrive with a send timestamp one second old: later than frame_timeout.
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    const TestTag tag = tag_of(m);
    if (tag.seq % 4 == 1) {
      const uint64_t old = (tag.timestamp - test::eal().tsc_hz) & kTimestampMask;
      uint8_t* ts = tag_bytes(m) + 12;
      for (int i = 0; i < 6; ++i) ts[i] = uint8_t(old >> (8 * (5 - i)));
    }
    deliver(uint16_t(1 - port), m);
  });
  json req = request(200, 20000, 1.0);
  req["delay"] = {{"frame_timeout", 0.5}, {"histogram", true}, {"ipdv", true}, {"tagged", 10}};
  const TrialReport r = bench.run(plan_of(req));
  const StreamReport& s = r.flows[0].streams[0];
  ASSERT_TRUE(s.late.has_value());
  EXPECT_EQ(*s.late, 50u);
  EXPECT_EQ(s.received, 150u);
  ASSERT_TRUE(s.delay.has_value());
  EXPECT_EQ(s.delay->count, 150u);
  EXPECT_LE(s.delay->min_ns, s.delay->p50_ns);
  EXPECT_LE(s.delay->p50_ns, s.delay->p99_ns);
  EXPECT_LE(s.delay->p99_ns, s.delay->p999_ns);
  EXPECT_LE(s.delay->p999_ns, s.delay->max_ns);
  EXPECT_LT(s.delay->max_ns, 0.5e9);  // the late frames are not in it
  EXPECT_DOUBLE_EQ(s.delay->relative_error, 1.0 / 2048);
  uint64_t in_buckets = 0;
  for (const auto& b : s.delay->buckets) in_buckets += b.count;
  EXPECT_EQ(in_buckets, 150u);
  ASSERT_TRUE(s.ipdv.has_value());
  EXPECT_EQ(s.ipdv->count, 99u);  // pairs (s-1, s) with both on time: s % 4 == 3 (50), s % 4 == 0 (49)
  ASSERT_TRUE(s.tagged.has_value());
  ASSERT_EQ(s.tagged->delays_ns.size(), 10u);  // seq 0, 20, ..., 180: all on time
  EXPECT_EQ(s.tagged->lost, 0u);
  for (const auto& d : s.tagged->delays_ns) EXPECT_TRUE(d.has_value());
}

TEST(Dataplane, AbortEndsTheTrialAsInvalid) {
  XLP_REQUIRE_EAL();
  test::Bench bench;
  const TrialReport r = bench.run(plan_of(request(10000, 1000, 10)), [](Trial& t) { t.request_abort(); });
  EXPECT_FALSE(r.valid);
  EXPECT_EQ(r.invalid_reason, "aborted");
  EXPECT_LT(r.flows[0].sent, 10000u);
}

TEST(Dataplane, APortThatTakesNothingMakesTheTrialInvalid) {
  XLP_REQUIRE_EAL();
  // The tester's own limit: the port accepts no frame, so sending is cut off at
  // duration x (1 + 1e-5) and the trial is a tester failure, not a DUT result.
  struct Refusing final : BurstIo {
    uint16_t rx(uint16_t, uint16_t, rte_mbuf**, uint16_t) override { return 0; }
    uint16_t tx(uint16_t, uint16_t, rte_mbuf**, uint16_t) override { return 0; }
  } io;
  std::vector<PortIdentity> ids(2);
  std::vector<std::unique_ptr<StateTable>> tables(2);
  Trial trial(plan_of(request(10, 1000, 0.01)), 1, io, test::eal().pool, test::eal().tsc_hz, ids, tables);
  trial.run(test::eal().workers, [] {});
  const TrialReport r = trial.result(0.1);
  EXPECT_FALSE(r.valid);
  EXPECT_EQ(r.invalid_reason.rfind("tester could not keep the rate: flow forward sent 0 of 10 frames in ", 0), 0u)
      << r.invalid_reason;
  EXPECT_EQ(r.flows[0].sent, 0u);
  EXPECT_EQ(r.flows[0].streams[0].sent, 0u);  // built but never accepted: not sent
}

TEST(Dataplane, StateTableLearnedInPhase1GivesPhase2ItsSwappedTuples) {
  XLP_REQUIRE_EAL();
  std::vector<std::pair<uint16_t, uint16_t>> back;  // (src_port, dst_port) sent on port 1
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    if (port == 1) {
      const uint8_t* udp = tag_bytes(m) - kUdpHeader;
      back.emplace_back(uint16_t(udp[0] << 8 | udp[1]), uint16_t(udp[2] << 8 | udp[3]));
    }
    deliver(uint16_t(1 - port), m);
  });
  json phase1 = request(16, 16000, 1.0);
  phase1["flows"][0]["foreground"]["vary"] = {
      {{"field", "src_port"}, {"mode", "enumerate"}, {"min", 1000}, {"max", 1003}},
      {{"field", "dst_port"}, {"mode", "enumerate"}, {"min", 2000}, {"max", 2003}}};
  phase1["flows"][0]["foreground"]["enumerate"] = "random";
  phase1["learn"] = {{"port", 1}, {"flow", 0}, {"table_size", 16}, {"ip_version", 4}};
  const TrialReport r1 = bench.run(plan_of(phase1));
  EXPECT_TRUE(r1.valid) << r1.invalid_reason;
  EXPECT_EQ(r1.flows[0].received, 16u);
  ASSERT_TRUE(r1.state_table.has_value());
  EXPECT_EQ(r1.state_table->port, 1u);
  EXPECT_EQ(r1.state_table->entries, 16u);
  EXPECT_EQ(r1.state_table->capacity, 16u);
  EXPECT_EQ(r1.state_table->ip_version, 4);

  json phase2 = request(16, 16000, 1.0);
  phase2["flows"][0]["tx_port"] = 1;
  phase2["flows"][0]["rx_port"] = 0;
  phase2["flows"][0]["from_table"] = {{"port", 1}, {"selection", "increasing"}};
  const TrialReport r2 = bench.run(plan_of(phase2));
  EXPECT_EQ(r2.flows[0].received, 16u);
  EXPECT_FALSE(r2.state_table.has_value());
  std::set<std::pair<uint16_t, uint16_t>> expected, seen(back.begin(), back.end());
  for (uint16_t s = 1000; s <= 1003; ++s)
    for (uint16_t d = 2000; d <= 2003; ++d) expected.emplace(d, s);  // source and destination swapped
  EXPECT_EQ(back.size(), 16u);
  EXPECT_EQ(seen, expected);
}

TEST(Dataplane, FromTableWithoutAStateTableIsAnExecutionFailure) {
  XLP_REQUIRE_EAL();
  test::Bench bench;
  json req = request(16, 16000, 1.0);
  req["flows"][0]["from_table"] = {{"port", 1}, {"selection", "fixed"}};
  try {
    bench.run(plan_of(req));
    FAIL() << "no error";
  } catch (const ExecutionFailure& e) {
    EXPECT_STREQ(e.what(), "flows[0].from_table.port = 1: no state table there (run a phase-1 trial with learn first)");
  }
}

// --- validity: the schedule rule (max_lag) and the tester's own drops ------------------------

namespace {

// A DUT that forwards every frame but holds the sender up once, for `stall`, as frame `at`
// passes (the TX path calls it on the sender's lcore): the sender falls at least that far
// behind its schedule, then catches up in bursts.
test::MemoryIo::Dut stalling(uint32_t at, std::chrono::milliseconds stall) {
  return [=](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    if (port == 0 && tag_of(m).seq == at) std::this_thread::sleep_for(stall);
    deliver(uint16_t(1 - port), m);
  };
}

// 2000 frames at 20 kfps (0.1 s of sending) in a 2 s trial, stalled 30 ms at frame 500.
TrialReport stalled_trial(const std::optional<double>& max_lag) {
  test::Bench bench(stalling(500, std::chrono::milliseconds(30)));
  json req = request(2000, 20000, 2.0);
  if (max_lag) req["max_lag"] = *max_lag;
  return bench.run(plan_of(req));
}

}  // namespace

TEST(Validity, TheScheduleRuleFailsATrialThatFellFurtherBehindThanMaxLag) {
  XLP_REQUIRE_EAL();
  const TrialReport r = stalled_trial(0.005);
  EXPECT_FALSE(r.valid);
  EXPECT_EQ(r.invalid_reason.rfind("tester could not keep the rate: flow forward fell ", 0), 0u) << r.invalid_reason;
  const FlowReport& f = r.flows[0];
  EXPECT_EQ(f.sent, 2000u);  // every frame left, but late
  EXPECT_GE(f.max_lag_us, 25000.0);
  // At least the frames due in the stall's last 25 ms (500 at 20 kfps) left more than 5 ms late.
  ASSERT_TRUE(f.lagged.has_value());
  EXPECT_GE(*f.lagged, 450u);
  EXPECT_LE(*f.lagged, 2000u);
  EXPECT_NE(r.invalid_reason.find(std::to_string(*f.lagged) + " frames left late"), std::string::npos)
      << r.invalid_reason;
}

TEST(Validity, ALagWithinMaxLagKeepsTheTrialValidAndIsReported) {
  XLP_REQUIRE_EAL();
  const TrialReport r = stalled_trial(1.0);
  EXPECT_TRUE(r.valid) << r.invalid_reason;
  EXPECT_GE(r.flows[0].max_lag_us, 25000.0);
  ASSERT_TRUE(r.flows[0].lagged.has_value());
  EXPECT_EQ(*r.flows[0].lagged, 0u);
}

TEST(Validity, SiitperfsRuleLooksOnlyAtTheEndAndPassesAStallInTheMiddle) {
  XLP_REQUIRE_EAL();
  // Without max_lag the trial is judged by when sending ended (duration x (1 + 1e-5)): the
  // 30 ms catch-up burst in the middle passes; the reply still reports the lag.
  const TrialReport r = stalled_trial(std::nullopt);
  EXPECT_TRUE(r.valid) << r.invalid_reason;
  EXPECT_GE(r.flows[0].max_lag_us, 25000.0);
  EXPECT_FALSE(r.flows[0].lagged.has_value());
}

TEST(Validity, SiitperfsRuleFailsAStallAtTheEndAndSaysWhenSendingEnded) {
  XLP_REQUIRE_EAL();
  // The last of 2000 frames at 20 kfps (0.1 s) held up 30 ms as it leaves: sending ended past
  // duration x (1 + 1e-5), with the burst it is in or cut off before the rest. Either way the
  // reason states the frames sent and when sending ended (no max_lag to speak of).
  test::Bench bench(stalling(1999, std::chrono::milliseconds(30)));
  const TrialReport r = bench.run(plan_of(request(2000, 20000, 0.1)));
  EXPECT_FALSE(r.valid);
  const std::string sent = "tester could not keep the rate: flow forward sent " + std::to_string(r.flows[0].sent) +
                           " of 2000 frames in ";
  EXPECT_EQ(r.invalid_reason.rfind(sent, 0), 0u) << r.invalid_reason;
  EXPECT_NE(r.invalid_reason.find("(limit 0.100001 s)"), std::string::npos) << r.invalid_reason;
}

TEST(Validity, FramesTheTesterItselfDroppedMakeTheTrialInvalid) {
  TrialReport r;
  r.ports.resize(2);
  r.ports[0].index = 0;
  r.ports[0].drops.oerrors = 7;   // some drivers count refused frames the sender offers again
  r.ports[0].drops.ierrors = 3;   // damaged on arrival: not the tester's doing
  r.ports[1].index = 1;
  TrialReport clean = r;
  invalidate_on_tester_drops(clean);
  EXPECT_TRUE(clean.valid);
  r.ports[1].drops.imissed = 12;
  r.ports[1].drops.rx_nombuf = 2;
  invalidate_on_tester_drops(r);
  EXPECT_FALSE(r.valid);
  EXPECT_EQ(r.invalid_reason,
            "tester dropped frames: port 1 missed 12 (imissed: its RX ring was full) and had no mbuf for 2 "
            "(rx_nombuf)");
  // An earlier reason (e.g. the rate not kept) stays the one reported.
  TrialReport late = r;
  late.valid = false;
  late.invalid_reason = "aborted";
  invalidate_on_tester_drops(late);
  EXPECT_EQ(late.invalid_reason, "aborted");
}

TEST(Validity, PortCountersThatWentDownCountNoDrops) {
  PortCounters before, after;
  before.eth.imissed = 100;
  after.eth.imissed = 40;  // reset in between
  before.eth.rx_nombuf = 1;
  after.eth.rx_nombuf = 6;
  before.eth.q_errors[1] = 2;
  after.eth.q_errors[1] = 5;
  before.kernel_rx_dropped = 7;
  after.kernel_rx_dropped = 19;
  after.kernel_interface = "xlp-tr";
  const PortDrops d = drops_between(before, after, 2);
  EXPECT_EQ(d.imissed, 0u);
  EXPECT_EQ(d.rx_nombuf, 5u);
  EXPECT_EQ(d.queue_errors, (std::vector<uint64_t>{0, 3}));
  EXPECT_EQ(d.kernel_rx_dropped, 12u);
  EXPECT_EQ(d.tester_drops(), 17u);
}

TEST(Validity, AKernelInterfaceIsFoundByItsMacForAfXdpPortsOnly) {
  // The loopback interface's MAC is 00:00:00:00:00:00 in every network namespace.
  EXPECT_EQ(kernel_interface_of("net_af_xdp", {0, 0, 0, 0, 0, 0}), "lo");
  // af_packet: the interface's rx_dropped also counts frames the socket got (see ports.cpp).
  EXPECT_EQ(kernel_interface_of("net_af_packet", {0, 0, 0, 0, 0, 0}), "");
  EXPECT_EQ(kernel_interface_of("net_ring", {0, 0, 0, 0, 0, 0}), "");
}
