// Traffic kinds on ports in memory (harness.hpp): VLAN tags (IEEE 802.1Q, 802.1ad QinQ).
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/frame.hpp"
#include "harness.hpp"
#include "protocol/protocol.hpp"
#include "reference.hpp"

using namespace xlp;
using nlohmann::json;
using test::stream;

namespace {

json request(uint64_t frames, uint64_t rate, const json& foreground) {
  return {{"duration", 1.0}, {"timeout", 0.05}, {"finish_early", true},
          {"flows", {{{"name", "forward"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", rate}, {"frames", frames},
                      {"foreground", foreground}}}}};
}

TrialPlan plan_of(const json& request) { return protocol::parse_trial(request, 2); }

TestTag tag_of(const rte_mbuf* m) {
  TestTag tag;
  EXPECT_TRUE(parse_test_frame(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, tag));
  return tag;
}

// Replaces the frame's VLAN tags by `to` (what a VLAN-terminating router does between its
// ports), in place.
void retag(rte_mbuf* m, const VlanStack& to) {
  uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
  VlanStack from;
  const size_t type = read_vlan_tags(p, m->data_len, from);
  ASSERT_NE(type, 0u);
  std::vector<uint8_t> rest(p + type, p + m->data_len);
  uint8_t macs[12];
  std::memcpy(macs, p, 12);
  rte_pktmbuf_trim(m, uint16_t(m->data_len));
  uint8_t* out = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, uint16_t(12 + to.bytes() + rest.size())));
  ASSERT_NE(out, nullptr);
  const size_t l3 = put_ethernet(out, macs, macs + 6, to, uint16_t(rest[0] << 8 | rest[1]));
  std::memcpy(out + l3, rest.data() + 2, rest.size() - 2);
}

VlanStack vlan(std::initializer_list<uint16_t> ids) {
  VlanStack v;
  for (uint16_t id : ids) v.ids[v.count++] = id;
  return v;
}

}  // namespace

// A flow sent with the left side's tags and received with the right side's, through a DUT
// that swaps them; frames that come out on another VLAN (or untagged) are not received.
TEST(Vlan, TaggedFlowThroughAVlanRouterCountsFramesOnTheWrongVlanApart) {
  XLP_REQUIRE_EAL();
  for (const auto& [tx, rx] : std::vector<std::pair<VlanStack, VlanStack>>{
           {vlan({100}), vlan({200})}, {vlan({300, 100}), vlan({}) }, {vlan({}), vlan({4094, 1})}}) {
    std::vector<VlanStack> seen_tx;
    test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
      const TestTag tag = tag_of(m);
      seen_tx.push_back(tag.vlan);
      // The varying fields were written at the tagged offsets: the checksums still verify.
      const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
      std::vector<uint8_t> untagged(p, p + 12);
      untagged.insert(untagged.end(), p + tag.l3_offset - 2, p + m->data_len);
      EXPECT_TRUE(udp_checksum_ok(untagged.data(), untagged.size()));
      EXPECT_EQ(reference_checksum({untagged.begin() + 14, untagged.begin() + 34}), 0);
      // seq % 10 == 3 leaves on VLAN 7 instead; seq % 10 == 5 leaves with the sender's tags
      VlanStack out = rx;
      if (tag.seq % 10 == 3) out = vlan({7});
      if (tag.seq % 10 == 5) out = tx;
      retag(m, out);
      deliver(uint16_t(1 - port), m);
    });
    json fg = stream(4, 128);
    fg["vlan"] = json::array();
    for (uint8_t i = 0; i < tx.count; ++i) fg["vlan"].push_back(tx.ids[i]);
    fg["rx_vlan"] = json::array();
    for (uint8_t i = 0; i < rx.count; ++i) fg["rx_vlan"].push_back(rx.ids[i]);
    fg["vary"] = {{{"field", "src_port"}, {"mode", "random"}, {"min", 1024}, {"max", 65535}},
                  {{"field", "dst_ip"}, {"mode", "increasing"}, {"min", 2}, {"max", 200}, {"offset", 2}}};
    const TrialReport r = bench.run(plan_of(request(100, 10000, fg)));
    ASSERT_EQ(seen_tx.size(), 100u);
    for (const VlanStack& v : seen_tx) EXPECT_TRUE(v == tx);
    const StreamReport& s = r.flows[0].streams[0];
    EXPECT_EQ(s.sent, 100u);
    // Per 10 frames one leaves on VLAN 7 and one with the sender's tags: a frame with as many
    // tags as rx_vlan but other IDs is bad_vlan, one with another number of tags bad_length.
    const uint64_t wrong_ids = (rx.count == 1 ? 10 : 0) + (tx.count == rx.count ? 10 : 0);
    EXPECT_EQ(s.bad_vlan, wrong_ids);
    EXPECT_EQ(s.bad_length, 20 - wrong_ids);
    EXPECT_EQ(s.received, 80u);
    EXPECT_EQ(s.frame_size, 128u);     // without the tags, as requested
    EXPECT_EQ(s.rx_frame_size, 128u);
  }
}

namespace {

// The whole frame of a (possibly multi-segment) mbuf.
std::vector<uint8_t> bytes_of(const rte_mbuf* m) {
  std::vector<uint8_t> out(m->pkt_len);
  const uint8_t* p = static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, m->pkt_len, out.data()));
  if (p != out.data()) std::memcpy(out.data(), p, m->pkt_len);
  return out;
}

unsigned in_use(const char* pool) {
  rte_mempool* mp = rte_mempool_lookup(pool);
  return mp ? rte_mempool_in_use_count(mp) : 0;
}

}  // namespace

// Jumbo frames (RFC 8219 §5.1.1 up to 9216 bytes) leave as a 128-byte head chained to the
// stream's shared tail segment: every frame on the wire is the whole frame, with valid
// checksums, and every segment goes back to its pool after the trial.
TEST(Jumbo, FramesUpTo9216BytesAreSentWholeAndCounted) {
  XLP_REQUIRE_EAL();
  for (const auto& [version, size, tags] : std::vector<std::tuple<int, uint32_t, VlanStack>>{
           {4, 9216, vlan({})}, {6, 9000, vlan({300, 100})}, {4, 2049, vlan({7})}, {6, 4096, vlan({})}}) {
    const unsigned pool_before = rte_mempool_in_use_count(test::eal().pool);
    std::vector<std::vector<uint8_t>> wire;
    std::vector<uint16_t> segments;
    test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
      segments.push_back(m->nb_segs);
      wire.push_back(bytes_of(m));
      deliver(uint16_t(1 - port), m);
    });
    json fg = stream(version, size);
    fg["vlan"] = json::array();
    for (uint8_t i = 0; i < tags.count; ++i) fg["vlan"].push_back(tags.ids[i]);
    fg["vary"] = {{{"field", "src_port"}, {"mode", "random"}, {"min", 1024}, {"max", 65535}}};
    const TrialReport r = bench.run(plan_of(request(200, 20000, fg)));
    const StreamReport& s = r.flows[0].streams[0];
    EXPECT_TRUE(r.valid) << r.invalid_reason;
    EXPECT_EQ(s.sent, 200u);
    EXPECT_EQ(s.received, 200u) << size;
    EXPECT_EQ(s.bad_length, 0u);
    EXPECT_EQ(s.frame_size, size);
    ASSERT_EQ(wire.size(), 200u);
    for (size_t k = 0; k < wire.size(); ++k) {
      const std::vector<uint8_t>& f = wire[k];
      ASSERT_EQ(f.size(), size - 4 + tags.bytes());
      EXPECT_EQ(segments[k], 2u);  // head + shared tail
      TestTag tag;
      ASSERT_TRUE(parse_test_frame(f.data(), uint32_t(f.size()), tag));
      EXPECT_EQ(tag.seq, k);
      std::vector<uint8_t> untagged(f.begin(), f.begin() + 12);
      untagged.insert(untagged.end(), f.begin() + tag.l3_offset - 2, f.end());
      EXPECT_TRUE(udp_checksum_ok(untagged.data(), untagged.size())) << size << " frame " << k;
      // The padding continues across the segment boundary (RFC 2544 App. C pattern).
      const size_t pad = tag.l3_offset + (version == 4 ? 20 : 40) + kUdpHeader + kTagSize;
      for (size_t i = pad; i < f.size(); i += 97) ASSERT_EQ(f[i], uint8_t(i - pad)) << i;
    }
    EXPECT_EQ(rte_mempool_in_use_count(test::eal().pool), pool_before);
  }
  EXPECT_EQ(in_use("xlp_tails"), 0u);  // each stream's tail went back with its last frame
}

// Frames that arrive in several segments (a NIC's scatter RX, a copy) are read from their
// first segment and measured by their whole length.
TEST(Jumbo, MultiSegmentFramesAreReceived) {
  XLP_REQUIRE_EAL();
  // A pool of 512-byte segments: the DUT's copy of each 1518-byte frame has 3 or 4 segments.
  static rte_mempool* small = rte_pktmbuf_pool_create("xlp_test_small", 4095, 0, 0, 512 + RTE_PKTMBUF_HEADROOM,
                                                      SOCKET_ID_ANY);
  ASSERT_NE(small, nullptr);
  std::vector<uint16_t> segments;
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    rte_mbuf* copy = rte_pktmbuf_copy(m, small, 0, UINT32_MAX);
    rte_pktmbuf_free(m);
    segments.push_back(copy->nb_segs);
    deliver(uint16_t(1 - port), copy);
  });
  const TrialReport r = bench.run(plan_of(request(100, 10000, stream(6, 1518))));
  EXPECT_EQ(r.flows[0].streams[0].received, 100u);
  EXPECT_EQ(r.flows[0].streams[0].bad_length, 0u);
  ASSERT_FALSE(segments.empty());
  EXPECT_GE(segments[0], 3u);
}

TEST(Jumbo, FramesBeyondTheEnginesMaxFrameSizeAreRefused) {
  json fg = stream(4, 9000);
  fg["rx_vlan"] = {100};
  const TrialPlan plan = plan_of(request(10, 1000, fg));
  EXPECT_NO_THROW(check_frame_sizes(plan, 9004));
  try {
    check_frame_sizes(plan, 9003);
    FAIL() << "no error";
  } catch (const BadParameter& e) {
    EXPECT_EQ(e.key(), "flows[0]");
    EXPECT_EQ(std::string(e.what()).rfind("flows[0] (forward): a frame of 9004 bytes on the wire (VLAN tags included) "
                                          "exceeds --max-frame-size 9003", 0), 0u) << e.what();
  }
}

namespace {

// A flow of several streams and a frame pattern (IMIX: one stream per frame size).
json imix_request(uint64_t frames, const std::vector<std::pair<uint32_t, const char*>>& streams,
                  const std::vector<int>& pattern) {
  json req = request(frames, 20000, stream(4, 64));
  json& flow = req["flows"][0];
  flow.erase("foreground");
  flow["streams"] = json::array();
  for (const auto& [size, kind] : streams) {
    json s = stream(std::string(kind) == "background" ? 6 : 4, size);
    s["kind"] = kind;
    flow["streams"].push_back(s);
  }
  flow["pattern"] = pattern;
  return req;
}

}  // namespace

// RFC 6985 IMIX: frame k of the flow is of the stream pattern[k % len], in that order on the
// wire; each stream has its own sequence numbers; the report counts per frame size.
TEST(Imix, FramesCycleThroughTheSizesInThePatternsOrderAndAreCountedPerSize) {
  XLP_REQUIRE_EAL();
  const std::vector<int> pattern = {0, 1, 0, 0, 1, 0, 2, 0, 1, 0, 1, 0};  // Simple IMIX 7:4:1
  const std::vector<uint32_t> sizes = {64, 594, 1518};
  std::vector<std::pair<uint32_t, uint32_t>> wire;  // (length, seq)
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    wire.emplace_back(m->pkt_len + 4, tag_of(m).seq);
    // Lose every frame of 594 bytes with an odd sequence number.
    if (m->pkt_len + 4 == 594 && tag_of(m).seq % 2) rte_pktmbuf_free(m);
    else deliver(uint16_t(1 - port), m);
  });
  const TrialReport r = bench.run(plan_of(imix_request(125, {{64, "foreground"}, {594, "foreground"}, {1518, "foreground"}},
                                                       pattern)));
  ASSERT_EQ(wire.size(), 125u);
  uint32_t next[3] = {0, 0, 0};
  for (size_t k = 0; k < wire.size(); ++k) {
    const int s = pattern[k % pattern.size()];
    EXPECT_EQ(wire[k], std::make_pair(sizes[s], next[s]++)) << "frame " << k;
  }
  ASSERT_EQ(r.flows[0].streams.size(), 1u);  // one kind: foreground
  const StreamReport& fg = r.flows[0].streams[0];
  // 125 = 10 periods of 12 + the pattern's first 5: per size 70 + 3, 40 + 2, 10.
  ASSERT_EQ(fg.sizes.size(), 3u);
  EXPECT_EQ(fg.sizes[0].frame_size, 64u);
  EXPECT_EQ(fg.sizes[0].sent, 73u);
  EXPECT_EQ(fg.sizes[0].received, 73u);
  EXPECT_EQ(fg.sizes[1].frame_size, 594u);
  EXPECT_EQ(fg.sizes[1].sent, 42u);
  EXPECT_EQ(fg.sizes[1].received, 21u);
  EXPECT_EQ(fg.sizes[2].sent, 10u);
  EXPECT_EQ(fg.sizes[2].received, 10u);
  EXPECT_EQ(fg.sent, 125u);
  EXPECT_EQ(fg.received, 104u);
  EXPECT_EQ(r.flows[0].received, 104u);
}

// The same rule with several TX queues and with background streams: lane q sends the flow's
// frames k = j x Q + q, each of the stream the flow's pattern gives frame k; the kinds are
// reported apart, each with its sizes.
TEST(Imix, LanesFollowTheFlowsPatternAndKindsAreReportedApart) {
  XLP_REQUIRE_EAL();
  const std::vector<int> pattern = {0, 2, 1, 0, 3, 1, 0};
  const std::vector<uint32_t> sizes = {84, 104, 148, 168};
  std::vector<uint32_t> lengths;
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    lengths.push_back(m->pkt_len + 4);
    deliver(uint16_t(1 - port), m);
  }, 2);
  const TrialReport r = bench.run(plan_of(imix_request(70, {{84, "foreground"}, {104, "foreground"},
                                                           {148, "background"}, {168, "background"}}, pattern)));
  EXPECT_TRUE(r.valid) << r.invalid_reason;
  ASSERT_EQ(lengths.size(), 70u);
  std::map<uint32_t, uint64_t> per_size;
  for (uint32_t l : lengths) ++per_size[l];
  EXPECT_EQ(per_size, (std::map<uint32_t, uint64_t>{{84, 30}, {104, 20}, {148, 10}, {168, 10}}));
  ASSERT_EQ(r.flows[0].streams.size(), 2u);
  const StreamReport& fg = r.flows[0].streams[0];
  const StreamReport& bg = r.flows[0].streams[1];
  EXPECT_EQ(fg.kind, "foreground");
  EXPECT_EQ(bg.kind, "background");
  EXPECT_EQ(fg.sent, 50u);
  EXPECT_EQ(bg.sent, 20u);
  ASSERT_EQ(fg.sizes.size(), 2u);
  ASSERT_EQ(bg.sizes.size(), 2u);
  EXPECT_EQ(fg.sizes[0].sent, 30u);
  EXPECT_EQ(fg.sizes[1].sent, 20u);
  EXPECT_EQ(bg.sizes[0].frame_size, 148u);
  EXPECT_EQ(bg.sizes[0].received, 10u);
  EXPECT_EQ(bg.sizes[1].received, 10u);
  EXPECT_EQ(r.flows[0].received, 70u);
}

namespace {

// Sets a header byte of an IPv4 frame and keeps the IPv4 header checksum right (RFC 1624), as
// a DUT that changes the field deliberately does.
void set_ipv4_byte(uint8_t* ip, size_t at, uint8_t value) {
  const uint16_t old_word = uint16_t(ip[at & ~size_t(1)] << 8 | ip[at | 1]);
  ip[at] = value;
  const uint16_t new_word = uint16_t(ip[at & ~size_t(1)] << 8 | ip[at | 1]);
  uint32_t sum = uint16_t(~(ip[10] << 8 | ip[11])) + uint16_t(~old_word) + new_word;
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  ip[10] = uint8_t(~sum >> 8), ip[11] = uint8_t(~sum);
}

// The frame in two segments, the first of an odd length (the transport checksum's words then
// straddle the boundary).
rte_mbuf* split_odd(rte_mbuf* m, uint16_t first) {
  rte_mbuf* head = rte_pktmbuf_alloc(test::eal().pool);
  rte_mbuf* tail = rte_pktmbuf_alloc(test::eal().pool);
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  std::memcpy(rte_pktmbuf_append(head, first), p, first);
  std::memcpy(rte_pktmbuf_append(tail, uint16_t(m->data_len - first)), p + first, m->data_len - first);
  rte_pktmbuf_chain(head, tail);
  rte_pktmbuf_free(m);
  return head;
}

}  // namespace

// The header checks on the receiving path (docs/protocol.md "Header checks"): a router that
// decrements TTL passes; per ten frames one each with no TTL decrement, its DSCP zeroed, a
// wrong destination, a broken UDP checksum and a total length not the packet's is counted by
// its own verdict and not received, and frames in segments with an odd boundary verify.
TEST(HeaderChecks, AFaultyRoutersFramesAreCountedByVerdict) {
  XLP_REQUIRE_EAL();
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    const TestTag tag = tag_of(m);
    uint8_t* ip = rte_pktmbuf_mtod(m, uint8_t*) + tag.l3_offset;
    const uint32_t k = tag.seq % 10;
    if (k != 1) set_ipv4_byte(ip, 8, uint8_t(ip[8] - 1));  // k == 1: no TTL decrement
    if (k == 2) set_ipv4_byte(ip, 1, 0);                    // DSCP zeroed
    if (k == 3) set_ipv4_byte(ip, 19, uint8_t(ip[19] + 1)); // another destination, UDP checksum adjusted
    if (k == 3) {
      uint8_t* udp = ip + 20;
      const uint32_t sum = uint16_t(~(udp[6] << 8 | udp[7])) + 1u;  // the pseudo header's sum grew by 1
      const uint16_t c = uint16_t(~((sum & 0xffff) + (sum >> 16)));
      udp[6] = uint8_t(c >> 8), udp[7] = uint8_t(c);
    }
    if (k == 4) ip[20 + 7] ^= 0x01;                          // UDP checksum broken
    if (k == 5) set_ipv4_byte(ip, 3, uint8_t(ip[3] - 2));   // total length 2 short
    if (k >= 6) m = split_odd(m, 77);                        // whole, in two segments
    deliver(uint16_t(1 - port), m);
  });
  json fg = stream(4, 128);
  fg["tos"] = 0x28;
  fg["rx"] = {{"ip_version", 4}, {"src_ip", fg["src_ip"]}, {"dst_ip", fg["dst_ip"]}, {"ttl", 9}, {"tos", 0x28},
              {"df", true}, {"vary", {{{"field", "src_port"}, {"min", 1024}, {"max", 65535}}}}};
  fg["vary"] = {{{"field", "src_port"}, {"mode", "random"}, {"min", 1024}, {"max", 65535}}};
  const TrialReport r = bench.run(plan_of(request(100, 10000, fg)));
  const StreamReport& s = r.flows[0].streams[0];
  EXPECT_EQ(s.sent, 100u);
  ASSERT_TRUE(s.header_faults.has_value());
  const auto& bad = *s.header_faults;
  EXPECT_EQ(bad[size_t(Verdict::kBadTtl)], 10u);
  EXPECT_EQ(bad[size_t(Verdict::kBadTos)], 10u);
  EXPECT_EQ(bad[size_t(Verdict::kBadAddress)], 10u);
  EXPECT_EQ(bad[size_t(Verdict::kBadChecksum)], 10u);
  EXPECT_EQ(bad[size_t(Verdict::kBadHeader)], 10u);
  EXPECT_EQ(s.received, 50u);
  // The reply names every count; a stream without rx names none of them.
  const json reply = protocol::serialise(r);
  const json& stream_reply = reply["flows"][0]["streams"][0];
  for (const char* name : {"bad_address", "bad_ttl", "bad_tos", "bad_header", "bad_checksum"})
    EXPECT_EQ(stream_reply.at(name), 10) << name;
  test::Bench cable;
  const TrialReport plain = cable.run(plan_of(request(10, 10000, stream(4, 128))));
  EXPECT_FALSE(plain.flows[0].streams[0].header_faults.has_value());
  EXPECT_FALSE(protocol::serialise(plain)["flows"][0]["streams"][0].contains("bad_ttl"));
}

// What real tunnel entry points and fragmenting DUTs send: an RFC 2473 encapsulation-limit
// destination option after the tunnel header (Linux ip6tnl adds one) leaves the frame a test
// frame of the expected length; fragments of test frames are counted as fragmented, not
// foreign.
TEST(HeaderChecks, EncapsulationLimitOptionsAndFragments) {
  XLP_REQUIRE_EAL();
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    const TestTag tag = tag_of(m);
    std::vector<uint8_t> f(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_mtod(m, const uint8_t*) + m->data_len);
    const size_t outer = tag.ip.outermost();
    if (tag.seq % 2 == 0) {  // the option: next header 4, length 0, limit 4, PadN
      const uint8_t option[8] = {f[outer + 6], 0, 4, 1, 4, 1, 0, 0};
      f[outer + 6] = kProtoDestOptions;
      const uint16_t payload = uint16_t((f[outer + 4] << 8 | f[outer + 5]) + 8);
      f[outer + 4] = uint8_t(payload >> 8), f[outer + 5] = uint8_t(payload);
      f.insert(f.begin() + long(outer + kIpv6Header), option, option + 8);
    } else if (tag.seq % 4 == 1) {  // the inner IPv4 packet's first fragment (MF set)
      f[tag.l3_offset + 6] |= 0x20;
    }
    rte_pktmbuf_trim(m, m->data_len);
    std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
    deliver(uint16_t(1 - port), m);
  });
  json fg = stream(4, 104);
  fg["tunnel"] = {{"src_ip", "2001:db8::1"}, {"dst_ip", "2001:db8::2"}};
  fg["rx"] = {{"ip_version", 4}, {"src_ip", fg["src_ip"]}, {"dst_ip", fg["dst_ip"]}, {"ttl", 10},
              {"tunnel", {{"src_ip", "2001:db8::1"}, {"dst_ip", "2001:db8::2"}}}};
  const TrialReport r = bench.run(plan_of(request(100, 10000, fg)));
  const StreamReport& s = r.flows[0].streams[0];
  EXPECT_EQ(s.bad_length, 0u);
  EXPECT_EQ(s.received, 75u);  // half with the option, a quarter untouched
  for (size_t v = 1; v < kVerdicts; ++v) EXPECT_EQ((*s.header_faults)[v], 0u) << kVerdictNames[v];
  ASSERT_FALSE(r.ports.empty());
  EXPECT_EQ(r.ports.back().fragmented, 25u);
  EXPECT_EQ(r.ports.back().foreign, 0u);
}
