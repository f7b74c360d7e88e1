// Emulated CEs (ce.hpp) on ports in memory (harness.hpp): each frame of a MAP-E, MAP-T,
// DS-Lite or lw4o6 stream comes from one CE, with all of that CE's fields and valid checksums,
// checked here against the MAP algorithm (maprule.hpp, itself tested on the RFCs' examples)
// and an independent checksum reference; the receiver counts frames a "DUT" delivered to
// another CE as wrong_ce, not as received.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstdio>
#include <fstream>
#include <set>

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

json request(uint64_t frames, const json& foreground) {
  return {{"duration", 1.0}, {"timeout", 0.05}, {"finish_early", true}, {"seed", 7},
          {"flows", {{{"name", "upstream"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", 20000}, {"frames", frames},
                      {"foreground", foreground}}}}};
}
TrialPlan plan_of(const json& request) { return protocol::parse_trial(request, 2); }

uint32_t be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }
uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
Ipv6Bits ipv6_at(const uint8_t* p) {
  std::array<uint8_t, 16> a;
  std::memcpy(a.data(), p, 16);
  return ipv6_bits(a);
}
void put_ipv6(uint8_t* p, Ipv6Bits v) {
  const auto a = ipv6_bytes(v);
  std::memcpy(p, a.data(), 16);
}
std::string format_ipv6(Ipv6Bits v) {
  char out[48];
  const auto a = ipv6_bytes(v);
  std::snprintf(out, sizeof out, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", a[0], a[1],
                a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]);
  return out;
}
uint32_t v4(const char* text) { return be32(parse_ip(text, 4).data()); }

// What a DUT that encapsulates does (RFC 2473): an IPv6 header from src to dst in front of the
// IPv4 packet of the Ethernet frame m.
void encapsulate(rte_mbuf* m, Ipv6Bits src, Ipv6Bits dst) {
  uint8_t* out = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, 40));
  ASSERT_NE(out, nullptr);
  std::memmove(out, out + 40, 14);
  out[12] = 0x86, out[13] = 0xDD;
  uint8_t* ip6 = out + 14;
  std::memset(ip6, 0, 40);
  ip6[0] = 0x60, ip6[4] = uint8_t((m->data_len - 54) >> 8), ip6[5] = uint8_t(m->data_len - 54);
  ip6[6] = kProtoIpv4, ip6[7] = 64;
  put_ipv6(ip6 + 8, src);
  put_ipv6(ip6 + 24, dst);
}

// A million CEs: 2001:2::/48 (RFC 5180), 198.18.0.0/16 (RFC 2544), 20 EA bits (16 bits of
// IPv4 suffix, a 4-bit PSID: 16 CEs per address), PSID offset 6.
const json kMillionCes = {{"ipv6_prefix", "2001:2::/48"}, {"ipv4_prefix", "198.18.0.0/16"}, {"ea_bits", 20},
                          {"psid_offset", 6}};
MapRule million_ces() { return MapRule(parse_ip("2001:2::", 6), 48, v4("198.18.0.0"), 16, 20, 6); }

}  // namespace

// MAP-E upstream (RFC 7597 §5.4, RFC 2473): IPv4 in IPv6 from a million CEs. Every frame's
// tunnel source is the MAP IPv6 address of the CE that owns its IPv4 source and port, the IPv4
// and UDP checksums verify, the tunnel's payload length is right; a DUT that puts every tenth
// frame into another CE's tunnel has those counted as wrong_ce.
TEST(Ce, MapEFramesFromAMillionCesCarryOneCesFieldsEach) {
  XLP_REQUIRE_EAL();
  const MapRule rule = million_ces();
  std::set<uint64_t> ces;
  uint64_t checked = 0;
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
    TestTag tag;
    EXPECT_TRUE(parse_test_frame(p, m->data_len, tag));
    EXPECT_EQ(tag.ip.outermost(), 14);
    EXPECT_EQ(tag.l3_offset, 54);
    EXPECT_EQ(be16(p + 12), 0x86DD);
    EXPECT_EQ(p[14 + 6], kProtoIpv4);                      // next header: IPv4 (RFC 2473 §3)
    EXPECT_EQ(be16(p + 14 + 4), m->data_len - 14 - 40);    // payload length: the inner packet
    EXPECT_EQ(reference_checksum({p + 54, p + 74}), 0);    // the inner IPv4 header
    EXPECT_TRUE(udp_checksum_ok(p, m->data_len, 54));
    const uint32_t src = be32(p + 54 + 12);
    const uint16_t port_ = be16(p + 74);
    const auto index = rule.index_of(src, port_);
    EXPECT_TRUE(index.has_value()) << "IPv4 source and port of no CE";
    if (index) {
      ces.insert(*index);
      EXPECT_TRUE(ipv6_at(p + 22) == rule.fields(*index).ipv6)
          << "tunnel source of another CE: " << format_ipv6(ipv6_at(p + 22)) << " for CE " << *index << " ("
          << format_ipv6(rule.fields(*index).ipv6) << ")";
      if (tag.seq % 10 == 4) put_ipv6(p + 22, rule.fields((*index + 1) % rule.ce_count()).ipv6);
    }
    ++checked;
    deliver(uint16_t(1 - port), m);
  });
  json fg = stream(4, 128);
  fg["tunnel"] = {{"src_ip", "2001:2::1"}, {"dst_ip", "2001:db8:ffff::1"}};
  fg["vary"] = {{{"field", "dst_port"}, {"mode", "random"}, {"min", 1}, {"max", 49151}}};
  fg["ce"] = {{"map", kMillionCes}, {"fields", {"tunnel", "ipv4", "port"}}, {"rx_fields", {"tunnel", "ipv4", "port"}}};
  const TrialReport r = bench.run(plan_of(request(2000, fg)));
  const StreamReport& s = r.flows[0].streams[0];
  EXPECT_EQ(checked, 2000u);
  EXPECT_EQ(s.sent, 2000u);
  ASSERT_TRUE(s.wrong_ce.has_value());
  EXPECT_EQ(*s.wrong_ce, 200u);
  EXPECT_EQ(s.received, 1800u);
  EXPECT_GT(ces.size(), 1990u);  // 2,000 draws among 2^20 CEs: about 2 repeats
}

// 6rd upstream (RFC 5969 §7, RFC 4213): IPv6 in IPv4 from 131,072 CEs of a domain with
// IPv4MaskLen 15 (198.18.0.0/15) and 6rd prefix 2001:db8::/32, a MAP rule of 17 EA bits and no
// PSID. Every frame's IPv4 tunnel source is a CE's address and its IPv6 source lies in that
// CE's delegated prefix (the 6rd prefix, then the address's 17 low bits: checked here by that
// arithmetic, not the rule's), the tunnel header's checksum and the inner UDP checksum verify;
// a DUT that puts every tenth frame into another CE's tunnel has those counted as wrong_ce.
TEST(Ce, SixRdCesSendIpv6InTheirOwnIpv4Tunnels) {
  XLP_REQUIRE_EAL();
  std::set<uint32_t> ces;
  uint64_t checked = 0;
  const auto put_v4 = [](uint8_t* p, uint32_t a) {
    for (int b = 0; b < 4; ++b) p[b] = uint8_t(a >> (24 - 8 * b));
  };
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
    TestTag tag;
    EXPECT_TRUE(parse_test_frame(p, m->data_len, tag));
    EXPECT_EQ(be16(p + 12), 0x0800);
    EXPECT_EQ(p[14 + 9], kProtoIpv6);                       // protocol 41 (RFC 4213 §3.5)
    EXPECT_EQ(be16(p + 14 + 2), m->data_len - 14);          // total length: the whole packet
    EXPECT_EQ(reference_checksum({p + 14, p + 34}), 0);     // the tunnel header
    EXPECT_EQ(be32(p + 14 + 16), v4("203.0.113.1"));        // to the BR
    EXPECT_TRUE(udp_checksum_ok(p, m->data_len, 34));
    const uint32_t ce = be32(p + 14 + 12);
    const Ipv6Bits inner = ipv6_at(p + 34 + 8);
    EXPECT_EQ(ce >> 17, v4("198.18.0.0") >> 17) << "a tunnel source outside the domain";
    EXPECT_EQ(uint32_t(inner >> 96), 0x20010db8u) << "an IPv6 source outside the 6rd prefix";
    EXPECT_EQ(uint32_t(inner >> (128 - 49)) & 0x1ffff, ce & 0x1ffff)
        << "IPv6 source " << format_ipv6(inner) << " outside the delegated prefix of CE " << ce;
    ces.insert(ce);
    if (tag.seq % 10 == 4) {  // into the next CE's tunnel, its header's checksum made right
      put_v4(p + 14 + 12, v4("198.18.0.0") | ((ce + 1) & 0x1ffff));
      p[14 + 10] = p[14 + 11] = 0;
      const uint16_t c = reference_checksum({p + 14, p + 34});
      p[14 + 10] = uint8_t(c >> 8), p[14 + 11] = uint8_t(c);
    }
    ++checked;
    deliver(uint16_t(1 - port), m);
  });
  json fg = stream(6, 104);
  fg["tunnel"] = {{"version", 4}, {"src_ip", "192.0.2.1"}, {"dst_ip", "203.0.113.1"}};
  fg["ce"] = {{"map", {{"ipv6_prefix", "2001:db8::/32"}, {"ipv4_prefix", "198.18.0.0/15"}, {"ea_bits", 17}}},
              {"fields", {"tunnel", "ipv6"}}, {"rx_fields", {"tunnel", "ipv6"}}};
  const TrialReport r = bench.run(plan_of(request(2000, fg)));
  const StreamReport& s = r.flows[0].streams[0];
  EXPECT_EQ(checked, 2000u);
  EXPECT_EQ(s.sent, 2000u);
  ASSERT_TRUE(s.wrong_ce.has_value());
  EXPECT_EQ(*s.wrong_ce, 200u);
  EXPECT_EQ(s.received, 1800u);
  EXPECT_GT(ces.size(), 1950u);  // 2,000 draws among 2^17 CEs: about 15 repeats
  // A CE names its IPv4 address once: in the tunnel or in the packet.
  json both = stream(4, 84);
  both["tunnel"] = fg["tunnel"];
  both["ce"] = {{"map", {{"ipv6_prefix", "2001:db8::/32"}, {"ipv4_prefix", "198.18.0.0/15"}, {"ea_bits", 17}}},
                {"fields", {"tunnel", "ipv4"}}};
  EXPECT_THROW(plan_of(request(10, both)), BadParameter);
}

// CEs that own an IPv4 prefix (RFC 7597 §5.2: 192.0.2.0/24 and 4 EA bits, 16 CEs of a /28
// each, no sharing): their packets come from several addresses of the prefix, while the MAP
// address holds the prefix padded with zeros (§6); a BR that builds a CE's address from the
// whole IPv4 destination (here: every tenth frame towards the CEs) has those counted wrong_ce.
TEST(Ce, CesWithAnIpv4PrefixUseMoreThanItsFirstAddress) {
  XLP_REQUIRE_EAL();
  const MapRule rule(parse_ip("2001:db8::", 6), 40, v4("192.0.2.0"), 24, 4, 6);
  ASSERT_EQ(rule.host_mask(), 0xfu);
  std::set<uint32_t> hosts;
  uint32_t k = 0;
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
    const uint32_t dst = be32(p + 54 + 16);
    hosts.insert(dst & 0xf);
    const auto index = rule.index_of(dst, be16(p + 74 + 2));
    ASSERT_TRUE(index.has_value());
    // The "BR": into the tunnel to the CE's MAP address, whose IID pads the prefix; every
    // tenth frame the faulty BR's IID, the whole address.
    const Ipv6Bits ce = rule.fields(*index).ipv6;
    EXPECT_EQ(uint32_t(ce >> 16) & 0xf, 0u);
    put_ipv6(p + 38, k++ % 10 == 0 ? (ce & ~(Ipv6Bits(0xffffffff) << 16)) | Ipv6Bits(dst) << 16 : ce);
    deliver(uint16_t(1 - port), m);
  });
  json fg = stream(4, 104);
  fg["src_ip"] = "198.19.0.2";
  fg["tunnel"] = {{"src_ip", "2001:db8:ffff::1"}, {"dst_ip", "2001:db8::1"}};
  fg["ce"] = {{"map", {{"ipv6_prefix", "2001:db8::/40"}, {"ipv4_prefix", "192.0.2.0/24"}, {"ea_bits", 4}}},
              {"side", "dst"}, {"prefix_hosts", true}, {"fields", {"ipv4", "port"}},
              {"rx_fields", {"tunnel", "ipv4", "port"}}};
  const TrialReport r = bench.run(plan_of(request(1000, fg)));
  EXPECT_EQ(hosts.size(), 16u) << "every address of the CEs' /28 prefixes";
  // The faulty frames whose address is the prefix's first keep the right IID.
  const StreamReport& s = r.flows[0].streams[0];
  EXPECT_GT(*s.wrong_ce, 80u);
  EXPECT_LE(*s.wrong_ce, 100u);
  EXPECT_EQ(s.received + *s.wrong_ce, 1000u);
}

// MAP-T upstream (RFC 7599 §5.1): the CE's MAP IPv6 address is the IPv6 source, inside the
// UDP checksum's pseudo-header; the receiver checks the address against the port's PSID.
TEST(Ce, MapTFramesCarryTheCesAddressInTheChecksummedHeader) {
  XLP_REQUIRE_EAL();
  const MapRule rule = million_ces();
  uint64_t wrong_psid = 0;
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
    EXPECT_TRUE(udp_checksum_ok(p, m->data_len, 14));
    const auto index = rule.index_of(ipv6_at(p + 22));
    EXPECT_TRUE(index.has_value());
    if (index) {
      const auto ce = rule.fields(*index);
      EXPECT_TRUE(ipv6_at(p + 22) == ce.ipv6);
      EXPECT_EQ(rule.psid_of_port(be16(p + 54)), ce.psid);
      EXPECT_TRUE(rule.ports().in_a_set(be16(p + 54)));
    }
    // A DUT that rewrites the source port into PSID 0's first port (a NAPT that ignores the
    // port set): wrong for every CE but those of PSID 0.
    const TestTag tag = [&] { TestTag t; parse_test_frame(p, m->data_len, t); return t; }();
    if (tag.seq % 5 == 0) {
      if (index && rule.fields(*index).psid != 0) ++wrong_psid;
      p[54] = 0x04, p[55] = 0x00;  // 1024: PSID 0 (a = 6, k = 4)
    }
    deliver(uint16_t(1 - port), m);
  });
  json fg = stream(6, 128);
  fg["ce"] = {{"map", kMillionCes}, {"fields", {"ipv6", "port"}}, {"rx_fields", {"ipv6", "port"}}};
  const TrialReport r = bench.run(plan_of(request(1000, fg)));
  const StreamReport& s = r.flows[0].streams[0];
  EXPECT_EQ(s.sent, 1000u);
  EXPECT_GT(wrong_psid, 150u);
  EXPECT_EQ(*s.wrong_ce, wrong_psid);
  EXPECT_EQ(s.received, 1000u - wrong_psid);
}

// DS-Lite (RFC 6333): B4 i has 2001:db8:b4::1 + i and all share the private address
// 192.0.0.2; with increasing mode the B4s take turns.
TEST(Ce, DsLiteB4sTakeTurnsAndShareTheirPrivateAddress) {
  XLP_REQUIRE_EAL();
  std::vector<Ipv6Bits> sources;
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
    sources.push_back(ipv6_at(p + 22));
    EXPECT_EQ(be32(p + 54 + 12), v4("192.0.0.2"));
    EXPECT_EQ(reference_checksum({p + 54, p + 74}), 0);
    EXPECT_TRUE(udp_checksum_ok(p, m->data_len, 54));
    deliver(uint16_t(1 - port), m);
  });
  json fg = stream(4, 104);
  fg["src_ip"] = "192.0.0.2";
  fg["tunnel"] = {{"src_ip", "2001:db8:b4::1"}, {"dst_ip", "2001:db8:af::1"}};
  fg["vary"] = {{{"field", "src_port"}, {"mode", "random"}, {"min", 1024}, {"max", 65535}}};
  fg["ce"] = {{"b4", {{"ipv6", "2001:db8:b4::1"}, {"ipv4", "192.0.0.2"}}}, {"count", 300}, {"mode", "increasing"},
              {"fields", {"tunnel", "ipv4"}}, {"rx_fields", {"tunnel", "ipv4"}}};
  const TrialReport r = bench.run(plan_of(request(700, fg)));
  ASSERT_EQ(sources.size(), 700u);
  const Ipv6Bits first = ipv6_bits(parse_ip("2001:db8:b4::1", 6));
  for (size_t k = 0; k < sources.size(); ++k) ASSERT_TRUE(sources[k] == first + k % 300) << k;
  EXPECT_EQ(r.flows[0].streams[0].received, 700u);
  EXPECT_EQ(*r.flows[0].streams[0].wrong_ce, 0u);
}

// DS-Lite (RFC 6333 §6.6): all B4s share one private IPv4 address, so only the test tag's CE
// word tells whose softwire a frame belongs in: each frame carries its B4's index there, and a
// "DUT" that moves every tenth frame into another B4's softwire (its fields then still name one
// B4 in use, consistently) has those counted as wrong_ce.
TEST(Ce, ADsLiteFrameInAnotherB4sSoftwireIsCaughtByItsTag) {
  XLP_REQUIRE_EAL();
  const Ipv6Bits first = ipv6_bits(parse_ip("2001:db8:b4::1", 6));
  uint32_t k = 0;
  bool tagged = true;
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
    const uint64_t b4 = uint64_t(ipv6_at(p + 22) - first);
    EXPECT_EQ(be16(p + 54 + 20 + 8 + kTagCe), tagged ? b4 : 0) << k;  // the tag names the frame's B4
    if (k++ % 10 == 0) put_ipv6(p + 22, first + (b4 ^ 1));  // B4 0 <-> 1, 2 <-> 3, ...
    deliver(uint16_t(1 - port), m);
  });
  json fg = stream(4, 104);
  fg["src_ip"] = "192.0.0.2";
  fg["tunnel"] = {{"src_ip", "2001:db8:b4::1"}, {"dst_ip", "2001:db8:af::1"}};
  fg["ce"] = {{"b4", {{"ipv6", "2001:db8:b4::1"}, {"ipv4", "192.0.0.2"}}}, {"count", 300}, {"tag", true},
              {"fields", {"tunnel", "ipv4"}}, {"rx_fields", {"tunnel", "ipv4"}}};
  const TrialReport r = bench.run(plan_of(request(700, fg)));
  EXPECT_EQ(*r.flows[0].streams[0].wrong_ce, 70u);
  EXPECT_EQ(r.flows[0].streams[0].received, 630u);
  // Without the tag the swapped frames' fields still name a B4 in use: not caught.
  k = 0, tagged = false;
  fg["ce"].erase("tag");
  EXPECT_EQ(*bench.run(plan_of(request(700, fg))).flows[0].streams[0].wrong_ce, 0u);
}

// lw4o6 (RFC 7596): lwB4s from a binding table file; frames sent to them (downstream) carry
// an lwB4's shared IPv4 address and a port of its set; the receiver takes the tunnel's
// destination from the table.
TEST(Ce, Lw4o6SoftwiresFromABindingTable) {
  XLP_REQUIRE_EAL();
  const std::string path = "/tmp/xlp-softwires-" + std::to_string(getpid()) + ".csv";
  {
    std::ofstream f(path);
    f << "b4_ipv6,ipv4,psid,psid_length,psid_offset\n";
    for (int i = 0; i < 64; ++i)
      f << "2001:db8:1::" << std::hex << (i + 1) << std::dec << ",198.51.100." << (1 + i / 16) << "," << i % 16
        << ",4,6\n";
  }
  const SoftwireTable table = read_softwires(path);
  ASSERT_EQ(table.softwires.size(), 64u);
  std::set<uint32_t> seen;
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
    const uint32_t dst = be32(p + 14 + 16);
    const uint16_t dport = be16(p + 14 + 22);
    const PortSet ports(6, 4);
    const uint32_t i = (dst & 0xff) - 1, psid = ports.psid_of_port(dport);
    EXPECT_LT(i, 4u);
    EXPECT_TRUE(ports.in_a_set(dport));
    seen.insert(i * 16 + psid);
    // The lwAFTR's job, done here by the test: encapsulate towards the binding table's lwB4.
    encapsulate(m, ipv6_bits(parse_ip("2001:db8:ffff::1", 6)), table.softwires[i * 16 + psid].ipv6);
    deliver(uint16_t(1 - port), m);
  });
  json fg = stream(4, 100);
  fg["rx_frame_size"] = 140;
  fg["ce"] = {{"softwires", path}, {"side", "dst"}, {"fields", {"ipv4", "port"}}, {"rx_fields", {"tunnel", "ipv4", "port"}}};
  const TrialReport r = bench.run(plan_of(request(1000, fg)));
  std::remove(path.c_str());
  EXPECT_EQ(r.flows[0].streams[0].received, 1000u);
  EXPECT_EQ(*r.flows[0].streams[0].wrong_ce, 0u);
  EXPECT_EQ(seen.size(), 64u);
}

// A MAP-E CE alone (the tester plays its BR): `first` picks the one CE the DUT is, the left
// port sends as that CE's IPv4 address from ports of its set, the "CE" encapsulates towards the
// BR; the receiver checks that the tunnel's source is that CE's MAP address. Every tenth frame
// the "DUT" puts the next CE's address in: counted as wrong_ce.
TEST(Ce, FirstPicksTheOneCeADutPlays) {
  XLP_REQUIRE_EAL();
  const MapRule rule = million_ces();
  const uint64_t the_ce = 123457;
  const auto fields = rule.fields(the_ce);
  uint64_t checked = 0;
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
    EXPECT_EQ(be32(p + 14 + 12), fields.ipv4);
    EXPECT_EQ(rule.index_of(be32(p + 14 + 12), be16(p + 34)), std::optional<uint64_t>(the_ce));
    TestTag tag;
    EXPECT_TRUE(parse_test_frame(p, m->data_len, tag));
    encapsulate(m, tag.seq % 10 == 3 ? rule.fields(the_ce + 1).ipv6 : fields.ipv6,
                ipv6_bits(parse_ip("2001:db8:ffff::1", 6)));
    ++checked;
    deliver(uint16_t(1 - port), m);
  });
  json fg = stream(4, 100);
  fg["rx_frame_size"] = 140;
  fg["ce"] = {{"map", kMillionCes}, {"first", the_ce}, {"count", 1}, {"fields", {"ipv4", "port"}},
              {"rx_fields", {"tunnel", "ipv4", "port"}}};
  const TrialReport r = bench.run(plan_of(request(1000, fg)));
  EXPECT_EQ(checked, 1000u);
  EXPECT_EQ(*r.flows[0].streams[0].wrong_ce, 100u);
  EXPECT_EQ(r.flows[0].streams[0].received, 900u);
}

// What the protocol refuses, with the key, the value and what is allowed.
TEST(Ce, BadCeRequestsNameTheKey) {
  const auto error_of = [](const json& ce, int version = 4, bool tunnel = true) {
    json fg = stream(version, 128);
    if (tunnel) fg["tunnel"] = {{"src_ip", "2001:2::1"}, {"dst_ip", "2001:db8::1"}};
    fg["ce"] = ce;
    try {
      plan_of(request(10, fg));
    } catch (const BadParameter& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error_of({{"map", kMillionCes}}).find("the sender or the receiver needs some"), std::string::npos);
  EXPECT_NE(error_of({{"fields", {"tunnel"}}}).find("needs exactly one of map, b4, softwires"), std::string::npos);
  json rule = kMillionCes;
  rule["ea_bits"] = 40;
  EXPECT_NE(error_of({{"map", rule}, {"fields", {"tunnel"}}}).find("must be at most 80 bits"), std::string::npos);
  EXPECT_NE(error_of({{"map", kMillionCes}, {"count", 2000000}, {"fields", {"tunnel"}}}).find("must be in 1..1048576"),
            std::string::npos);
  EXPECT_NE(error_of({{"map", kMillionCes}, {"fields", {"ipv6"}}}).find("the stream's IP is IPv4"), std::string::npos);
  EXPECT_NE(error_of({{"map", kMillionCes}, {"fields", {"tunnel"}}}, 6, false).find("tunnel: the stream has none"),
            std::string::npos);
  EXPECT_NE(error_of({{"b4", {{"ipv6", "2001:db8::1"}, {"ipv4", "192.0.0.2"}}}, {"fields", {"tunnel"}}})
                .find("count: missing"),
            std::string::npos);
  EXPECT_NE(error_of({{"b4", {{"ipv6", "2001:db8::1"}, {"ipv4", "192.0.0.2"}}}, {"count", 5}, {"fields", {"port"}}})
                .find("B4s own no port set"),
            std::string::npos);
  EXPECT_NE(error_of({{"softwires", "/nonexistent.csv"}, {"fields", {"tunnel"}}}).find("cannot be read"),
            std::string::npos);
  EXPECT_NE(error_of({{"map", kMillionCes}, {"first", 1048576}, {"fields", {"tunnel"}}}).find("first = 1048576: must be in 0..1048575"),
            std::string::npos);
  EXPECT_NE(error_of({{"map", kMillionCes}, {"first", 1048000}, {"count", 1000}, {"fields", {"tunnel"}}})
                .find("must be in 1..576"),
            std::string::npos);
  json rule6 = kMillionCes;
  rule6["ipv6_prefix"] = "2001:2::/129";
  EXPECT_NE(error_of({{"map", rule6}, {"fields", {"tunnel"}}}).find("ipv6_prefix"), std::string::npos);
}
