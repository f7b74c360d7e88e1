// The capture sample (docs/protocol.md, "Capture"), on ports in memory: bounded per port,
// every stride-th frame, cut at the snap length, foreign frames only when asked for, merged
// over RX queues in arrival order, and a pcapng file whose blocks parse (read here with a
// small reader of the pcapng format, independent of the writer).
#include <gtest/gtest.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/frame.hpp"
#include "harness.hpp"
#include "protocol/protocol.hpp"

using namespace xlp;
using nlohmann::json;

namespace {

struct Packet {
  uint32_t interface = 0, captured = 0, original = 0;
  uint64_t ns = 0;
  std::string data;
};

struct PcapngFile {
  bool ok = false;
  std::string error;
  size_t interfaces = 0;
  std::vector<Packet> packets;
};

uint32_t u32(const std::string& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);  // the section is in this host's byte order (checked below)
  return v;
}

// Walks the blocks: a Section Header first, then Interface Description and Enhanced Packet
// Blocks (others skipped), each with its length repeated at its end.
PcapngFile parse_pcapng(const std::string& b) {
  PcapngFile f;
  if (b.size() < 28 || u32(b, 0) != 0x0A0D0D0A || u32(b, 8) != 0x1A2B3C4D) {
    f.error = "no section header block in this byte order";
    return f;
  }
  for (size_t at = 0; at < b.size();) {
    if (b.size() - at < 12) { f.error = "truncated block at " + std::to_string(at); return f; }
    const uint32_t type = u32(b, at), len = u32(b, at + 4);
    if (len < 12 || len % 4 || len > b.size() - at || u32(b, at + len - 4) != len) {
      f.error = "bad block length at " + std::to_string(at);
      return f;
    }
    if (type == 1) ++f.interfaces;
    if (type == 6) {
      Packet p{u32(b, at + 8), u32(b, at + 20), u32(b, at + 24),
               uint64_t(u32(b, at + 12)) << 32 | u32(b, at + 16), {}};
      if (28 + p.captured > len) { f.error = "packet longer than its block"; return f; }
      p.data = b.substr(at + 28, p.captured);
      f.packets.push_back(std::move(p));
    }
    at += len;
  }
  f.ok = true;
  return f;
}

json stream(uint32_t size) {
  return {{"ip_version", 4}, {"src_mac", "02:00:00:00:00:01"}, {"dst_mac", "02:00:00:00:00:02"},
          {"src_ip", "198.18.0.2"}, {"dst_ip", "198.19.0.2"}, {"frame_size", size}};
}

json request(uint64_t frames, uint32_t size, json capture) {
  return {{"duration", 1.0}, {"timeout", 0.05}, {"capture", capture},
          {"flows", {{{"name", "forward"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", 20000}, {"frames", frames},
                      {"foreground", stream(size)}}}}};
}

uint64_t wall_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch()).count());
}

// rte_pcapng describes the EAL's ethdev ports in the file (an EPB names its port's interface):
// the in-memory ports get two ring ports to stand for them.
void ensure_two_ethdev_ports() {
  static const bool done = [] {
    for (uint16_t i = rte_eth_dev_count_avail(); i < 2; ++i) {
      const std::string name = "xlp_cap_ring" + std::to_string(i);
      rte_ring* r = rte_ring_create(name.c_str(), 64, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
      if (!r || rte_eth_from_rings(name.c_str(), &r, 1, &r, 1, SOCKET_ID_ANY) < 0) return false;
    }
    return true;
  }();
  ASSERT_TRUE(done);
}

TestTag tag_of(const std::string& frame) {
  TestTag tag;
  EXPECT_TRUE(parse_test_frame(reinterpret_cast<const uint8_t*>(frame.data()), frame.size(), tag));
  return tag;
}

}  // namespace

TEST(Capture, TheFirstFramesEveryStrideBoundedWithWallClockTimesInAFileThatParses) {
  XLP_REQUIRE_EAL();
  ensure_two_ethdev_ports();
  test::Bench bench;
  const uint64_t before = wall_ns();
  const TrialReport r = bench.run(protocol::parse_trial(request(300, 64, {{"frames", 40}, {"stride", 3}}), 2));
  const uint64_t after = wall_ns();
  EXPECT_EQ(r.flows[0].received, 300u);  // capturing takes nothing from the measurement
  ASSERT_EQ(r.ports.size(), 1u);
  ASSERT_TRUE(r.ports[0].capture.has_value());
  const CaptureReport& c = *r.ports[0].capture;
  EXPECT_EQ(c.frames, 40u);
  EXPECT_EQ(c.missed, 0u);
  const PcapngFile f = parse_pcapng(c.pcapng);
  ASSERT_TRUE(f.ok) << f.error;
  EXPECT_GE(f.interfaces, 2u);
  ASSERT_EQ(f.packets.size(), 40u);
  uint64_t last_ns = 0;
  for (size_t i = 0; i < f.packets.size(); ++i) {
    const Packet& p = f.packets[i];
    EXPECT_LT(p.interface, f.interfaces);
    EXPECT_EQ(p.captured, 60u);  // 64 bytes on the wire without the FCS
    EXPECT_EQ(p.original, 60u);
    const TestTag tag = tag_of(p.data);
    EXPECT_EQ(tag.seq, 3 * i);  // every third frame, the first 40 of them, in order
    EXPECT_EQ(tag.trial_tag, bench.trial_tag);
    EXPECT_GE(p.ns, before);  // the receive TSC as wall-clock time
    EXPECT_LE(p.ns, after);
    EXPECT_GE(p.ns, last_ns);
    last_ns = p.ns;
  }
  // The JSON reply carries the file in base64.
  const json reply = protocol::serialise(r);
  const json& cap = reply["ports"][0]["capture"];
  EXPECT_EQ(cap["frames"], 40);
  EXPECT_EQ(cap["bytes"], c.pcapng.size());
  EXPECT_EQ(cap["pcapng"].get<std::string>().size(), (c.pcapng.size() + 2) / 3 * 4);
}

TEST(Capture, SnapLengthCutsLongFramesAndForeignFramesComeOnlyWhenAskedFor) {
  XLP_REQUIRE_EAL();
  ensure_two_ethdev_ports();
  // seq 0 also comes back without the magic (a foreign frame), right before the original.
  const auto dut = [](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    TestTag tag;
    uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
    parse_test_frame(data, m->data_len, tag);
    if (tag.seq == 0) {
      rte_mbuf* other = rte_pktmbuf_copy(m, test::eal().pool, 0, UINT32_MAX);
      rte_pktmbuf_mtod(other, uint8_t*)[tag.l3_offset + 20 + kUdpHeader] = 'Y';
      deliver(uint16_t(1 - port), other);
    }
    deliver(uint16_t(1 - port), m);
  };
  for (const bool foreign : {false, true}) {
    test::Bench bench(dut);
    const TrialReport r = bench.run(protocol::parse_trial(
        request(20, 1518, {{"frames", 5}, {"snaplen", 100}, {"foreign", foreign}}), 2));
    ASSERT_TRUE(r.ports[0].capture.has_value());
    const PcapngFile f = parse_pcapng(r.ports[0].capture->pcapng);
    ASSERT_TRUE(f.ok) << f.error;
    ASSERT_EQ(f.packets.size(), 5u);
    for (const Packet& p : f.packets) {
      EXPECT_EQ(p.captured, 100u);
      EXPECT_EQ(p.original, 1514u);
    }
    TestTag tag;
    const bool first_is_test = parse_test_frame(reinterpret_cast<const uint8_t*>(f.packets[0].data.data()), 100, tag);
    EXPECT_EQ(first_is_test, !foreign) << "foreign = " << foreign;
    EXPECT_EQ(tag_of(f.packets[1].data).seq, foreign ? 0u : 1u);
  }
}

TEST(Capture, SeveralQueuesShareThePortsBoundAndMergeInArrivalOrder) {
  XLP_REQUIRE_EAL();
  ensure_two_ethdev_ports();
  json req = request(400, 64, {{"frames", 30}});
  // Frames on different source ports go to different RX queues (the harness's RSS).
  req["flows"][0]["foreground"]["vary"] = {{{"field", "src_port"}, {"mode", "increasing"}, {"min", 1000}, {"max", 1063}}};
  test::Bench bench(nullptr, 4);
  const TrialReport r = bench.run(protocol::parse_trial(req, 2));
  ASSERT_TRUE(r.ports[0].capture.has_value());
  size_t queues_with_frames = 0;
  for (const auto& q : r.ports[0].queues) queues_with_frames += q.test_frames > 0;
  EXPECT_GE(queues_with_frames, 2u);
  const PcapngFile f = parse_pcapng(r.ports[0].capture->pcapng);
  ASSERT_TRUE(f.ok) << f.error;
  ASSERT_EQ(f.packets.size(), 30u);  // the port's bound, not the queue's
  for (size_t i = 1; i < f.packets.size(); ++i) EXPECT_GE(f.packets[i].ns, f.packets[i - 1].ns);
}

TEST(Capture, BadParametersNameTheKeyTheValueAndTheRange) {
  const auto error = [](const json& capture) {
    try {
      protocol::parse_trial(request(10, 64, capture), 2);
    } catch (const BadParameter& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error({{"frames", 0}}), "capture.frames = 0: must be an integer in 1..4096");
  EXPECT_EQ(error({{"frames", 4097}}), "capture.frames = 4097: must be an integer in 1..4096");
  EXPECT_EQ(error({{"snaplen", 63}}), "capture.snaplen = 63: must be an integer in 64..65535");
  EXPECT_EQ(error({{"stride", 0}}), "capture.stride = 0: must be an integer in 1..1000000");
  EXPECT_EQ(error({{"foreign", 1}}), "capture.foreign = 1: must be true or false");
  EXPECT_EQ(error({{"frame", 1}}), "capture.frame: unknown key (keys: frames, stride, snaplen, foreign)");
}
