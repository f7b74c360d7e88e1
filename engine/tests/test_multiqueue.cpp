// Several RX/TX queue pairs per port, served by one or two workers: a flow's lanes share its
// schedule exactly, each lane's frames form sub-streams with their own sequence numbers, and
// the receive queues' counts, delays, tagged frames and state tables merge into one report.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "emulation/fields.hpp"
#include "core/frame.hpp"
#include "harness.hpp"
#include "core/pacing.hpp"
#include "protocol/protocol.hpp"

using namespace xlp;
using nlohmann::json;

namespace {

json stream(uint32_t size = 64) {
  return {{"ip_version", 4}, {"src_mac", "02:00:00:00:00:01"}, {"dst_mac", "02:00:00:00:00:02"},
          {"src_ip", "198.18.0.2"}, {"dst_ip", "198.19.0.2"}, {"frame_size", size}};
}

json request(uint64_t frames, uint64_t rate, double duration = 1.0) {
  return {{"duration", duration}, {"timeout", 0.05}, {"finish_early", true},
          {"flows", {{{"name", "forward"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", rate}, {"frames", frames},
                      {"foreground", stream()}}}}};
}

TrialPlan plan_of(const json& request) { return protocol::parse_trial(request, 2); }

TestTag tag_of(const rte_mbuf* m) {
  TestTag tag;
  EXPECT_TRUE(parse_test_frame(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, tag));
  return tag;
}

struct Sent {
  uint16_t tx_queue;
  uint8_t stream;
  uint32_t seq;
};

// Records what the DUT saw (in sending order per TX queue) and forwards it.
struct Recording {
  std::vector<Sent> wire;
  std::unique_ptr<test::Bench> bench;
  explicit Recording(uint16_t queues) {
    bench = std::make_unique<test::Bench>(
        [this](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
          const TestTag tag = tag_of(m);
          wire.push_back({bench->io.tx_queue(), tag.stream, tag.seq});
          deliver(uint16_t(1 - port), m);
        },
        queues);
  }
};

class Queues : public ::testing::TestWithParam<std::tuple<uint16_t, size_t>> {};

}  // namespace

TEST_P(Queues, EveryLaneSendsItsShareOnceInOrderAndTheFlowKeepsItsRate) {
  XLP_REQUIRE_EAL();
  const auto [queues, workers] = GetParam();
  const uint64_t frames = 1001, rate = 100000;
  Recording rec(queues);
  const TrialReport r = rec.bench->run(plan_of(request(frames, rate)), nullptr, workers);
  ASSERT_TRUE(r.valid) << r.invalid_reason;
  ASSERT_EQ(rec.wire.size(), frames);
  // Lane q sends on TX queue q, with stream id 2q (one flow), sequence numbers 0, 1, ... in
  // order, and exactly its share: the flow's frames k with k % queues == q.
  std::map<uint16_t, std::vector<uint32_t>> seqs;
  for (const Sent& s : rec.wire) {
    EXPECT_EQ(s.stream, 2 * s.tx_queue);
    seqs[s.tx_queue].push_back(s.seq);
  }
  ASSERT_EQ(seqs.size(), queues);
  for (uint16_t q = 0; q < queues; ++q) {
    ASSERT_EQ(seqs[q].size(), Schedule::lane_frames(frames, q, queues)) << "queue " << q;
    for (uint32_t j = 0; j < seqs[q].size(); ++j) ASSERT_EQ(seqs[q][j], j) << "queue " << q;
  }
  const FlowReport& f = r.flows[0];
  EXPECT_EQ(f.sent, frames);
  EXPECT_EQ(f.received, frames);
  ASSERT_EQ(f.streams.size(), 1u);
  EXPECT_EQ(f.streams[0].sent, frames);
  EXPECT_EQ(f.streams[0].received, frames);
  EXPECT_EQ(f.streams[0].duplicates + f.streams[0].reordered + f.streams[0].out_of_range, 0u);
  // The aggregate never runs ahead of the schedule: no lane sends its last frame (the flow's
  // frame (n_q - 1) * queues + q) before it is due, and every lane ends within the validity
  // rule's duration x (1 + 1e-5).
  ASSERT_EQ(f.queues.size(), queues);
  uint64_t sum = 0;
  for (const QueueSendReport& q : f.queues) {
    sum += q.sent;
    EXPECT_EQ(q.sent, q.planned);
    EXPECT_GE(q.send_time, double((q.planned - 1) * queues + q.queue) / double(rate)) << "queue " << q.queue;
    EXPECT_LE(q.send_time, 1.0 * (1 + 1e-5));
  }
  EXPECT_EQ(sum, frames);
  EXPECT_GE(f.send_time, double(frames - 1) / double(rate));
  // Every test frame was received on one of port 1's queues.
  ASSERT_EQ(r.ports.size(), 1u);
  ASSERT_EQ(r.ports[0].queues.size(), queues);
  uint64_t received = 0;
  for (const auto& q : r.ports[0].queues) received += q.test_frames;
  EXPECT_EQ(received, frames);
}

INSTANTIATE_TEST_SUITE_P(QueuesAndWorkers, Queues,
                         ::testing::Combine(::testing::Values(uint16_t(2), uint16_t(4)), ::testing::Values(size_t(1), size_t(2))));

TEST(Multiqueue, MixedStreamsFollowTheFlowPatternAcrossLanes) {
  XLP_REQUIRE_EAL();
  Recording rec(2);
  json req = request(200, 20000);
  req["flows"][0]["mix"] = {{"n", 4}, {"m", 3}};
  req["flows"][0]["background"] = stream(84);
  const TrialReport r = rec.bench->run(plan_of(req));
  ASSERT_TRUE(r.valid) << r.invalid_reason;
  // Lane q's j-th frame is the flow's frame k = 2j + q, foreground iff k % 4 < 3; the
  // background sub-streams have ids 2q + 1.
  std::map<uint16_t, uint32_t> j;
  uint64_t kinds[2] = {0, 0};
  for (const Sent& s : rec.wire) {
    const uint64_t k = 2 * uint64_t(j[s.tx_queue]++) + s.tx_queue;
    const uint8_t kind = k % 4 < 3 ? 0 : 1;
    EXPECT_EQ(s.stream, 2 * s.tx_queue + kind) << "frame " << k;
    ++kinds[kind];
  }
  EXPECT_EQ(kinds[0], 150u);
  EXPECT_EQ(kinds[1], 50u);
  ASSERT_EQ(r.flows[0].streams.size(), 2u);
  EXPECT_EQ(r.flows[0].streams[0].sent, 150u);
  EXPECT_EQ(r.flows[0].streams[0].received, 150u);
  EXPECT_EQ(r.flows[0].streams[1].sent, 50u);
  EXPECT_EQ(r.flows[0].streams[1].received, 50u);
}

TEST(Multiqueue, LossDuplicatesAndReorderingAreCountedPerSubStream) {
  XLP_REQUIRE_EAL();
  // Per sub-stream the DUT swaps each pair (2i, 2i+1), drops seq % 10 == 9 and sends
  // seq % 10 == 0 twice: per 10 frames of a lane 1 lost, 1 duplicate, 4 pairs reversed.
  std::map<uint8_t, rte_mbuf*> held;
  test::Bench bench(
      [&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
        const TestTag tag = tag_of(m);
        if (tag.seq % 2 == 0) {
          held[tag.stream] = m;
          return;
        }
        if (tag.seq % 10 == 9) rte_pktmbuf_free(m);
        else deliver(uint16_t(1 - port), m);
        rte_mbuf* h = held[tag.stream];
        const uint32_t held_seq = tag_of(h).seq;
        deliver(uint16_t(1 - port), h);
        if (held_seq % 10 == 0) deliver(uint16_t(1 - port), rte_pktmbuf_copy(h, test::eal().pool, 0, UINT32_MAX));
        held[tag.stream] = nullptr;
      },
      2);
  const TrialReport r = bench.run(plan_of(request(200, 20000)));
  const StreamReport& s = r.flows[0].streams[0];
  EXPECT_TRUE(r.valid) << r.invalid_reason;
  EXPECT_EQ(s.sent, 200u);
  EXPECT_EQ(s.received, 180u);
  EXPECT_EQ(s.duplicates, 20u);
  EXPECT_EQ(s.reordered, 80u);
}

TEST(Multiqueue, FramesOfDifferentQueuesOvertakingEachOtherAreNotReordering) {
  XLP_REQUIRE_EAL();
  // The rule: order is kept per TX queue (a NIC serves its queues independently), so the
  // receiver checks the order of each lane's sub-stream only. Here the DUT holds every frame
  // of queue 0 back until queue 1's have all gone through: nothing is reordered.
  std::vector<rte_mbuf*> queue0;
  uint64_t forwarded1 = 0;
  test::Bench* bench_ptr = nullptr;
  test::Bench bench(
      [&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
        if (bench_ptr->io.tx_queue() == 0) {
          queue0.push_back(m);
        } else {
          deliver(uint16_t(1 - port), m);
          ++forwarded1;
        }
        if (forwarded1 == 100 && queue0.size() == 100) {
          for (rte_mbuf* h : queue0) deliver(uint16_t(1 - port), h);
          queue0.clear();
        }
      },
      2);
  bench_ptr = &bench;
  const TrialReport r = bench.run(plan_of(request(200, 20000)));
  const StreamReport& s = r.flows[0].streams[0];
  EXPECT_TRUE(r.valid) << r.invalid_reason;
  EXPECT_EQ(s.received, 200u);
  EXPECT_EQ(s.reordered, 0u);
  EXPECT_EQ(s.duplicates, 0u);
}

TEST(Multiqueue, LatencyTagsHistogramAndIpdvAcrossQueues) {
  XLP_REQUIRE_EAL();
  test::Bench bench(nullptr, 2);
  json req = request(200, 20000);
  req["delay"] = {{"histogram", true}, {"ipdv", true}, {"tagged", 11}};
  const TrialReport r = bench.run(plan_of(req));
  ASSERT_TRUE(r.valid) << r.invalid_reason;
  const StreamReport& s = r.flows[0].streams[0];
  EXPECT_EQ(s.received, 200u);
  ASSERT_TRUE(s.delay.has_value());
  EXPECT_EQ(s.delay->count, 200u);  // both queues' histograms merged
  uint64_t in_buckets = 0;
  for (const auto& b : s.delay->buckets) in_buckets += b.count;
  EXPECT_EQ(in_buckets, 200u);
  ASSERT_TRUE(s.ipdv.has_value());
  EXPECT_EQ(s.ipdv->count, 2 * 99u);  // consecutive frames of each lane: 99 pairs per lane
  ASSERT_TRUE(s.tagged.has_value());
  ASSERT_EQ(s.tagged->delays_ns.size(), 11u);  // 6 on queue 0, 5 on queue 1
  EXPECT_EQ(s.tagged->lost, 0u);
  for (const auto& d : s.tagged->delays_ns) ASSERT_TRUE(d.has_value());
}

TEST(Multiqueue, StatefulPhasesWithTheResponderOnTwoQueues) {
  XLP_REQUIRE_EAL();
  std::vector<std::pair<uint16_t, uint16_t>> back;  // (src_port, dst_port) sent on port 1
  std::set<uint16_t> back_queues;
  test::Bench* bench_ptr = nullptr;
  test::Bench bench(
      [&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
        if (port == 1) {
          const TestTag tag = tag_of(m);
          const uint8_t* udp = rte_pktmbuf_mtod(m, const uint8_t*) + tag.l3_offset + 20;
          back.emplace_back(uint16_t(udp[0] << 8 | udp[1]), uint16_t(udp[2] << 8 | udp[3]));
          back_queues.insert(bench_ptr->io.tx_queue());
        }
        deliver(uint16_t(1 - port), m);
      },
      2);
  bench_ptr = &bench;
  // Phase 1: 64 tuples enumerated by two lanes (each a contiguous share of the order); the
  // frames reach both of port 1's RX queues, whose tables merge into the port's.
  json phase1 = request(64, 64000);
  phase1["flows"][0]["foreground"]["vary"] = {
      {{"field", "src_port"}, {"mode", "enumerate"}, {"min", 1000}, {"max", 1007}},
      {{"field", "dst_port"}, {"mode", "enumerate"}, {"min", 2000}, {"max", 2007}}};
  phase1["flows"][0]["foreground"]["enumerate"] = "random";
  phase1["learn"] = {{"port", 1}, {"flow", 0}, {"table_size", 64}, {"ip_version", 4}};
  const TrialReport r1 = bench.run(plan_of(phase1));
  EXPECT_TRUE(r1.valid) << r1.invalid_reason;
  EXPECT_EQ(r1.flows[0].received, 64u);
  ASSERT_TRUE(r1.state_table.has_value());
  EXPECT_EQ(r1.state_table->entries, 64u);
  ASSERT_EQ(r1.ports[0].queues.size(), 2u);
  EXPECT_GT(r1.ports[0].queues[0].test_frames, 0u);
  EXPECT_GT(r1.ports[0].queues[1].test_frames, 0u);

  // Phase 2: both lanes of the Responder's flow send from the table, increasing: together
  // every entry once, with source and destination swapped.
  json phase2 = request(64, 64000);
  phase2["flows"][0]["tx_port"] = 1;
  phase2["flows"][0]["rx_port"] = 0;
  phase2["flows"][0]["from_table"] = {{"port", 1}, {"selection", "increasing"}};
  const TrialReport r2 = bench.run(plan_of(phase2));
  EXPECT_TRUE(r2.valid) << r2.invalid_reason;
  EXPECT_EQ(r2.flows[0].received, 64u);
  std::set<std::pair<uint16_t, uint16_t>> expected, seen(back.begin(), back.end());
  for (uint16_t s = 1000; s <= 1007; ++s)
    for (uint16_t d = 2000; d <= 2007; ++d) expected.emplace(d, s);
  EXPECT_EQ(back.size(), 64u);
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(back_queues, (std::set<uint16_t>{0, 1}));
}

TEST(Multiqueue, RssSpreadsRandomTrafficOverTheReceiveQueues) {
  XLP_REQUIRE_EAL();
  test::Bench bench(nullptr, 4);
  json req = request(4000, 100000);
  req["flows"][0]["foreground"]["vary"] = {{{"field", "src_port"}, {"mode", "random"}, {"min", 1024}, {"max", 65535}},
                                           {{"field", "dst_port"}, {"mode", "random"}, {"min", 1}, {"max", 49151}}};
  const TrialReport r = bench.run(plan_of(req));
  ASSERT_TRUE(r.valid) << r.invalid_reason;
  EXPECT_EQ(r.flows[0].received, 4000u);
  EXPECT_EQ(r.flows[0].streams[0].duplicates, 0u);
  ASSERT_EQ(r.ports[0].queues.size(), 4u);
  uint64_t sum = 0;
  for (const auto& q : r.ports[0].queues) {
    EXPECT_GT(q.test_frames, 700u) << "queue " << q.queue;  // about 1000 each
    sum += q.test_frames;
  }
  EXPECT_EQ(sum, 4000u);
}

TEST(Multiqueue, TooManyStreamIdsForTheTagIsAnExecutionFailure) {
  XLP_REQUIRE_EAL();
  test::Bench bench(nullptr, 64);
  json req = request(10, 1000);
  json second = req["flows"][0];
  second["name"] = "second";
  json third = second;
  third["name"] = "third";
  req["flows"].push_back(second);
  req["flows"].push_back(third);
  try {
    bench.run(plan_of(req));
    FAIL() << "no error";
  } catch (const ExecutionFailure& e) {
    EXPECT_STREQ(e.what(), "3 flows x 2 streams x 64 queues need 384 stream ids; the test tag has 256");
  }
}

TEST(Multiqueue, LanesTakeEveryLanesThValueOfIncreasingAndDecreasingFields) {
  // One queue sends 10, 11, 12, 13, 14, 10, ...; with two queues lane 0 takes 10, 12, 14, 11,
  // 13, ... and lane 1 takes 11, 13, 10, 12, 14, ...: frame k of the flow still gets the value
  // one queue would give it.
  const auto values = [](VaryMode mode, uint32_t start, uint32_t stride) {
    FieldGenerator g(FieldSpec{"src_port", 34, 0, false, false, mode, 10, 14}, 0, 1, start, stride);
    uint16_t out[7];
    g.generate(out, 7);
    return std::vector<uint16_t>(out, out + 7);
  };
  using V = std::vector<uint16_t>;
  EXPECT_EQ(values(VaryMode::kIncreasing, 0, 1), (V{10, 11, 12, 13, 14, 10, 11}));
  EXPECT_EQ(values(VaryMode::kIncreasing, 0, 2), (V{10, 12, 14, 11, 13, 10, 12}));
  EXPECT_EQ(values(VaryMode::kIncreasing, 1, 2), (V{11, 13, 10, 12, 14, 11, 13}));
  EXPECT_EQ(values(VaryMode::kDecreasing, 1, 2), (V{13, 11, 14, 12, 10, 13, 11}));
  EXPECT_EQ(values(VaryMode::kIncreasing, 2, 5), (V{12, 12, 12, 12, 12, 12, 12}));  // stride = range
}
