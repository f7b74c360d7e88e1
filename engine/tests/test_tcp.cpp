// TCP test segments: the frame model's TCP layer (templates, the tag option, checksums, the
// parser), the keyed ISNs and the handshake's replies (tcp.hpp), checked against an
// independent checksum reference and a reference NAT written here.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <stdexcept>

#include "core/frame.hpp"
#include "reference.hpp"
#include "emulation/tcp.hpp"

using namespace xlp;

namespace {

FrameSpec tcp_spec(int version, uint8_t flags, uint32_t size = 0) {
  FrameSpec s;
  s.ip_version = version;
  s.l4 = kProtoTcp;
  s.tcp_flags = flags;
  s.src_mac = parse_mac("02:78:6c:00:00:01");
  s.dst_mac = parse_mac("02:78:6c:00:01:01");
  s.src_ip = parse_ip(version == 4 ? "198.18.0.2" : "2001:2::2", version);
  s.dst_ip = parse_ip(version == 4 ? "198.19.0.2" : "2001:2:0:8000::2", version);
  s.frame_size = size ? size : min_frame_size(version, {}, kProtoTcp, flags);
  return s;
}

uint32_t get32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }

TcpView view_of(const std::vector<uint8_t>& f, TestTag& tag) {
  EXPECT_TRUE(parse_test_frame(f.data(), uint32_t(f.size()), tag));
  EXPECT_EQ(tag.l4, kProtoTcp);
  return tcp_view(f.data(), tag);
}

}  // namespace

class TcpLayout : public ::testing::TestWithParam<int> {};

// RFC 9293 §3.1's header, the tag in an RFC 6994 experimental option, the window scale option
// (RFC 7323 §2.2) and the MSS option (RFC 9293 §3.2) on SYNs only, and correct checksums
// before and after stamping.
TEST_P(TcpLayout, HeaderOptionsAndChecksums) {
  const int v = GetParam();
  std::mt19937_64 rng(v);
  for (uint8_t flags : {uint8_t(kTcpSyn), uint8_t(kTcpSyn | kTcpAck), uint8_t(kTcpAck), uint8_t(kTcpAck | kTcpPsh),
                        uint8_t(kTcpFin | kTcpAck), uint8_t(kTcpRst)}) {
    const bool syn = flags & kTcpSyn;
    const uint32_t smallest = min_frame_size(v, {}, kProtoTcp, flags);
    EXPECT_EQ(smallest, (v == 4 ? 78u : 98u) + (syn ? 8 : 0));
    EXPECT_THROW(build_template(tcp_spec(v, flags, smallest - 1), 0, 1), std::invalid_argument);
    for (uint32_t size : {smallest, smallest + 1, 512u, 1518u, 9000u}) {
      const FrameTemplate t = build_template(tcp_spec(v, flags, size), 5, 9);
      ASSERT_EQ(t.size(), size - 4);
      std::vector<uint8_t> f = t.bytes;
      const size_t ip = 14, tcp = ip + (v == 4 ? 20 : 40);
      EXPECT_EQ(v == 4 ? f[ip + 9] : f[ip + 6], 6);
      EXPECT_EQ(t.l4_offset, tcp);
      EXPECT_EQ(t.checksum_offset, tcp + 16);
      EXPECT_EQ(t.tag_offset, tcp + 22);
      const size_t header = (f[tcp + 12] >> 4) * 4u;
      EXPECT_EQ(header, syn ? 48u : 40u);
      EXPECT_EQ(f[tcp + 12] & 0x0f, 0);  // reserved bits
      EXPECT_EQ(f[tcp + 13], flags);
      EXPECT_EQ(f[tcp + 14] << 8 | f[tcp + 15], 0xffff);      // window
      EXPECT_EQ(f[tcp + 18] << 8 | f[tcp + 19], 0);           // urgent pointer
      EXPECT_EQ(f[tcp + 20], 254);                            // experimental option
      EXPECT_EQ(f[tcp + 21], 20);
      EXPECT_EQ(f[tcp + 22] << 8 | f[tcp + 23], 0x584c);      // its ExID: "XL"
      EXPECT_EQ(std::string(f.begin() + ptrdiff_t(tcp) + 22, f.begin() + ptrdiff_t(tcp) + 28), std::string("XLAT\0\0", 6));
      if (syn) {
        EXPECT_EQ(std::vector<uint8_t>(f.begin() + ptrdiff_t(tcp) + 40, f.begin() + ptrdiff_t(tcp) + 44),
                  (std::vector<uint8_t>{1, 3, 3, 14}));       // NOP, window scale 14
        // MSS: what a host on Ethernet takes (1500 less the IP and TCP headers)
        const uint16_t mss = v == 4 ? 1460 : 1440;
        EXPECT_EQ(std::vector<uint8_t>(f.begin() + ptrdiff_t(tcp) + 44, f.begin() + ptrdiff_t(tcp) + 48),
                  (std::vector<uint8_t>{2, 4, uint8_t(mss >> 8), uint8_t(mss)}));
        EXPECT_EQ(announced_mss(f.data(), uint32_t(f.size()), uint32_t(tcp), v == 4), mss);
      }
      for (size_t i = tcp + header; i < f.size(); ++i) ASSERT_EQ(f[i], uint8_t(i - tcp - header));  // payload
      EXPECT_TRUE(tcp_checksum_ok(f.data(), f.size())) << "template, size " << size;
      if (v == 4) {
        EXPECT_EQ(reference_checksum({f.begin() + 14, f.begin() + 34}), 0);
      }
      for (int k = 0; k < 50; ++k) {
        const uint32_t seq = uint32_t(rng());
        const uint64_t tsc = rng();
        stamp_frame(f.data(), t, seq, tsc);
        ASSERT_TRUE(tcp_checksum_ok(f.data(), f.size())) << "size " << size;
        TestTag tag;
        ASSERT_TRUE(parse_test_frame(f.data(), uint32_t(f.size()), tag));
        EXPECT_EQ(tag.l4, kProtoTcp);
        EXPECT_EQ(tag.l4_offset, tcp);
        EXPECT_EQ(tag.tag_offset, tcp + 22);
        EXPECT_EQ(tag.stream, 5);
        EXPECT_EQ(tag.trial_tag, 9);
        EXPECT_EQ(tag.seq, seq);
        EXPECT_EQ(tag.timestamp, tsc & kTimestampMask);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Versions, TcpLayout, ::testing::Values(4, 6));

TEST(TcpLayout, InAnIpv6Tunnel) {
  FrameSpec s = tcp_spec(4, kTcpSyn);
  s.tunnels = {Tunnel{parse_ip("2001:db8:0:1::1", 6), parse_ip("2001:db8:ffff::1", 6)}};
  EXPECT_EQ(min_frame_size(4, {Tunnel{}}, kProtoTcp, kTcpSyn), 126u);
  s.frame_size = 126;
  const FrameTemplate t = build_template(s, 1, 2);
  EXPECT_EQ(t.l4_offset, 74);
  EXPECT_TRUE(tcp_checksum_ok(t.bytes.data(), t.size(), 54));
  TestTag tag;
  ASSERT_TRUE(parse_test_frame(t.bytes.data(), uint32_t(t.size()), tag));
  EXPECT_EQ(tag.l3_offset, 54);
  EXPECT_EQ(tag.tag_offset, 74 + 22);
  // The largest head a sender writes: two VLAN tags, an IPv6 tunnel, IPv6 and a SYN.
  EXPECT_LE(14 + 8 + 40 + 40 + tcp_header_size(kTcpSyn), kJumboHead);
}

TEST(TcpLayout, ParserRefusesTcpWithoutTheTagOption) {
  const std::vector<uint8_t> f = build_template(tcp_spec(4, kTcpAck), 0, 1).bytes;
  TestTag tag;
  ASSERT_TRUE(parse_test_frame(f.data(), uint32_t(f.size()), tag));
  auto refused = [&](std::vector<uint8_t> g, const char* what) {
    EXPECT_FALSE(parse_test_frame(g.data(), uint32_t(g.size()), tag)) << what;
  };
  auto g = f; g[34 + 20] = 1;      refused(g, "a NOP where the tag option starts");
  g = f; g[34 + 21] = 18;          refused(g, "the option's length");
  g = f; g[34 + 12] = 0x50;        refused(g, "a data offset without options");
  g = f; g[34 + 24] = 'x';         refused(g, "no magic");
  refused(std::vector<uint8_t>(f.begin(), f.begin() + 34 + 30), "truncated in the option");
}

// The ISNs: a function of the key and the tuple, the same from either side's view, sensitive
// to every bit of the tuple, and spread (few collisions among many tuples).
TEST(TcpIsn, KeyedHashOfTheTuple) {
  const TcpKey key{0x0123456789abcdefull, 0xfedcba9876543210ull};
  for (size_t alen : {size_t(4), size_t(16)}) {
    std::array<uint8_t, 36> t{};
    for (size_t i = 0; i < t.size(); ++i) t[i] = uint8_t(i * 37 + 1);
    const uint8_t* local = t.data();
    const uint8_t* remote = t.data() + alen;
    const uint8_t* ports = t.data() + 2 * alen;
    const uint32_t isn = initiator_isn(key, local, remote, alen, ports, ports + 2);
    EXPECT_EQ(isn, initiator_isn(key, local, remote, alen, ports, ports + 2));
    EXPECT_NE(isn, initiator_isn(TcpKey{key.k0 + 1, key.k1}, local, remote, alen, ports, ports + 2));
    EXPECT_NE(isn, initiator_isn(key, remote, local, alen, ports + 2, ports)) << "direction matters";
    const size_t bytes = 2 * alen + 4;
    for (size_t bit = 0; bit < bytes * 8; ++bit) {
      auto u = t;
      u[bit / 8] ^= uint8_t(1 << bit % 8);
      EXPECT_NE(isn, initiator_isn(key, u.data(), u.data() + alen, alen, u.data() + 2 * alen, u.data() + 2 * alen + 2))
          << "bit " << bit;
    }
  }
  std::set<uint32_t> seen;
  const uint8_t a[4] = {198, 18, 0, 2}, b[4] = {198, 19, 0, 2};
  for (uint32_t i = 0; i < 100000; ++i) {
    const uint8_t ports[4] = {uint8_t(i >> 8), uint8_t(i), uint8_t(i >> 24), uint8_t(i >> 16)};
    seen.insert(initiator_isn(key, a, b, 4, ports, ports + 2));
  }
  EXPECT_GE(seen.size(), 100000u - 10);  // about 1.2 collisions expected among 2^32 values
  EXPECT_NE(responder_isn(key, 1), responder_isn(key, 2));
  EXPECT_NE(responder_isn(key, 1), responder_isn(TcpKey{key.k0, key.k1 ^ 1}, 1));
}

// The handshake through a reference NAT, each side answering only what it received: the
// numbers each segment carries (RFC 9293 §3.5, Figure 6) and correct checksums throughout.
class TcpHandshake : public ::testing::TestWithParam<int> {};

TEST_P(TcpHandshake, ThroughAReferenceNat) {
  const int v = GetParam();
  const TcpKey key{42, 4242};
  const SegmentTemplate syn_t(tcp_spec(v, kTcpSyn), 1, 7);
  const SegmentTemplate ack_t(tcp_spec(v, kTcpAck), 3, 7);
  FrameSpec back = tcp_spec(v, kTcpSyn | kTcpAck);
  std::swap(back.src_mac, back.dst_mac);
  const SegmentTemplate syn_ack_t(back, 2, 7);
  const auto client = parse_ip(v == 4 ? "10.0.0.7" : "fd00::7", v);
  const auto server = parse_ip(v == 4 ? "198.19.0.2" : "2001:2:0:8000::2", v);
  const auto outside = parse_ip(v == 4 ? "198.18.0.1" : "2001:2::1", v);
  const size_t alen = v == 4 ? 4 : 16;
  for (uint16_t port : {uint16_t(1024), uint16_t(40000), uint16_t(65535)}) {
    const uint8_t cport[2] = {uint8_t(port >> 8), uint8_t(port)}, sport[2] = {0, 80};
    const uint32_t isn_i = initiator_isn(key, client.data(), server.data(), alen, cport, sport);
    // The Initiator's SYN as its sender builds it: the template's tuple, then the ISN.
    FrameSpec syn_spec = tcp_spec(v, kTcpSyn);
    syn_spec.src_ip = client;
    syn_spec.dst_ip = server;
    syn_spec.src_port = port;
    syn_spec.dst_port = 80;
    const FrameTemplate syn_tmpl = build_template(syn_spec, 1, 7);
    std::vector<uint8_t> syn = syn_tmpl.bytes;
    stamp_frame(syn.data(), syn_tmpl, 11, 0x1234);
    stamp_initiator(syn.data(), syn_tmpl, key, TcpStep::kSyn);
    EXPECT_EQ(get32(&syn[14 + (v == 4 ? 20 : 40) + 4]), isn_i);
    // The same SYN from the segment writer.
    TcpSegment seg;
    std::copy(client.begin(), client.end(), seg.src.begin());
    std::copy(server.begin(), server.end(), seg.dst.begin());
    seg.src_port = {cport[0], cport[1]};
    seg.dst_port = {sport[0], sport[1]};
    seg.seq = isn_i;
    seg.tag_seq = 11;
    seg.timestamp = 0x1234;
    std::vector<uint8_t> written(syn_t.tmpl.size());
    write_segment(written.data(), syn_t, seg);
    EXPECT_EQ(written, syn);
    ASSERT_TRUE(tcp_checksum_ok(syn.data(), syn.size()));
    if (v == 4) {
      ASSERT_EQ(reference_checksum({syn.begin() + 14, syn.begin() + 34}), 0);
    }
    // The DUT's translation: source address and port.
    const uint16_t mapped = uint16_t(port ^ 0x5a5a);
    const std::vector<uint8_t> syn_in = reference_snat(syn, outside, mapped);
    TestTag tag;
    const TcpView s = view_of(syn_in, tag);
    EXPECT_EQ(s.seq(), isn_i);
    // Answered in place, in the received frame's buffer, as the Responder's receiver does.
    std::vector<uint8_t> syn_ack = syn_in;
    TestTag in_place;
    ASSERT_TRUE(parse_test_frame(syn_ack.data(), uint32_t(syn_ack.size()), in_place));
    ASSERT_TRUE(expected_segment(TcpStep::kSyn, key, s));
    write_segment(syn_ack.data(), syn_ack_t, answer(TcpStep::kSyn, key, tcp_view(syn_ack.data(), in_place), tag.seq, tag.timestamp));
    syn_ack.resize(syn_ack_t.tmpl.size());
    ASSERT_TRUE(tcp_checksum_ok(syn_ack.data(), syn_ack.size()));
    if (v == 4) {
      ASSERT_EQ(reference_checksum({syn_ack.begin() + 14, syn_ack.begin() + 34}), 0);
    }
    const size_t tcp = 14 + (v == 4 ? 20 : 40);
    EXPECT_EQ(syn_ack[tcp + 13], kTcpSyn | kTcpAck);
    EXPECT_EQ(get32(&syn_ack[tcp + 4]), responder_isn(key, isn_i));
    EXPECT_EQ(get32(&syn_ack[tcp + 8]), isn_i + 1);
    EXPECT_EQ(std::vector<uint8_t>(&syn_ack[14 + (v == 4 ? 16 : 24)], &syn_ack[14 + (v == 4 ? 16 : 24)] + alen),
              std::vector<uint8_t>(outside.begin(), outside.begin() + ptrdiff_t(alen)));  // to the mapped address
    EXPECT_EQ(syn_ack[tcp + 2] << 8 | syn_ack[tcp + 3], mapped);
    EXPECT_EQ(syn_ack[tcp + 0] << 8 | syn_ack[tcp + 1], 80);
    // The DUT translates the reply back: destination address and port.
    const std::vector<uint8_t> syn_ack_in = reference_snat(syn_ack, client, port, true);
    TestTag tag2;
    const TcpView sa = view_of(syn_ack_in, tag2);
    EXPECT_EQ(tag2.seq, 11u);          // the SYN's tag, echoed
    EXPECT_EQ(tag2.timestamp, 0x1234u);
    std::vector<uint8_t> ack(ack_t.tmpl.size());
    ASSERT_TRUE(expected_segment(TcpStep::kSynAck, key, sa));
    write_segment(ack.data(), ack_t, answer(TcpStep::kSynAck, key, sa, tag2.seq, tag2.timestamp));
    ASSERT_TRUE(tcp_checksum_ok(ack.data(), ack.size()));
    EXPECT_EQ(ack[tcp + 13], kTcpAck);
    EXPECT_EQ(get32(&ack[tcp + 4]), isn_i + 1);
    EXPECT_EQ(get32(&ack[tcp + 8]), responder_isn(key, isn_i) + 1);
    EXPECT_EQ(ack.size(), syn.size() - 8);  // no window scale and MSS options, no payload
    const std::vector<uint8_t> ack_in = reference_snat(ack, outside, mapped);
    TestTag tag3;
    const TcpView a = view_of(ack_in, tag3);
    EXPECT_TRUE(expected_segment(TcpStep::kAck, key, a));
    // What each step refuses: a segment that is not the one it expects.
    EXPECT_FALSE(expected_segment(TcpStep::kSyn, key, a)) << "an ACK is no SYN";
    EXPECT_FALSE(expected_segment(TcpStep::kSyn, key, sa)) << "a SYN-ACK is no SYN";
    EXPECT_FALSE(expected_segment(TcpStep::kSynAck, key, s)) << "a SYN is no SYN-ACK";
    EXPECT_FALSE(expected_segment(TcpStep::kAck, key, s)) << "a SYN completes nothing";
    EXPECT_FALSE(expected_segment(TcpStep::kSynAck, TcpKey{43, 4242}, sa)) << "another key's ISN";
    EXPECT_FALSE(expected_segment(TcpStep::kAck, TcpKey{42, 4243}, a)) << "another key's ISN";
    auto wrong = ack_in;
    wrong[tcp + 11] ^= 1;  // the acknowledgement off by one (checksum aside: the logic only)
    EXPECT_FALSE(expected_segment(TcpStep::kAck, key, view_of(wrong, tag3)));
  }
}

INSTANTIATE_TEST_SUITE_P(Versions, TcpHandshake, ::testing::Values(4, 6));

// DS-Lite (RFC 6333): the AFTR sends the SYN-ACK to the emulated B4 through its softwire (IPv4
// in IPv6, RFC 2473); the Initiator's ACK goes back through the same softwire, from the B4
// that received it, whatever B4 the ACK flow's template was built with.
TEST(TcpHandshake, AcrossADsLiteSoftwire) {
  const TcpKey key{42, 4242};
  const auto aftr = parse_ip("2001:db8:ffff::1", 6), b4 = parse_ip("2001:db8:0:17::1", 6);
  const auto template_b4 = parse_ip("2001:db8:0:1::1", 6);
  const auto client = parse_ip("192.168.0.7", 4), server = parse_ip("198.19.0.2", 4);
  const uint8_t cport[2] = {0x9c, 0x40}, sport[2] = {0, 80};
  const uint32_t isn_i = initiator_isn(key, client.data(), server.data(), 4, cport, sport);
  FrameSpec back = tcp_spec(4, kTcpSyn | kTcpAck, 126);
  back.tunnels = {Tunnel{aftr, template_b4}};
  const SegmentTemplate syn_ack_t(back, 2, 7);
  TcpSegment sa;
  std::copy(server.begin(), server.begin() + 4, sa.src.begin());
  std::copy(client.begin(), client.begin() + 4, sa.dst.begin());
  sa.src_port = {sport[0], sport[1]};
  sa.dst_port = {cport[0], cport[1]};
  sa.seq = responder_isn(key, isn_i);
  sa.ack = isn_i + 1;
  sa.tag_seq = 5;
  sa.tunnelled = true;
  std::copy(aftr.begin(), aftr.end(), sa.tunnel_src.begin());
  std::copy(b4.begin(), b4.end(), sa.tunnel_dst.begin());
  std::vector<uint8_t> frame(syn_ack_t.tmpl.size());
  write_segment(frame.data(), syn_ack_t, sa);
  ASSERT_TRUE(tcp_checksum_ok(frame.data(), frame.size(), 54));
  EXPECT_EQ(std::vector<uint8_t>(&frame[14 + 24], &frame[14 + 40]), std::vector<uint8_t>(b4.begin(), b4.end()))
      << "the segment's softwire, not the template's";
  TestTag tag;
  const TcpView in = view_of(frame, tag);
  ASSERT_NE(in.tunnel, nullptr);
  ASSERT_TRUE(expected_segment(TcpStep::kSynAck, key, in));
  FrameSpec ack_spec = tcp_spec(4, kTcpAck, 118);
  ack_spec.tunnels = {Tunnel{template_b4, aftr}};
  const SegmentTemplate ack_t(ack_spec, 3, 7);
  // In place, over the SYN-ACK's buffer, as the Initiator's receiver answers.
  write_segment(frame.data(), ack_t, answer(TcpStep::kSynAck, key, in, tag.seq, tag.timestamp));
  frame.resize(ack_t.tmpl.size());
  ASSERT_TRUE(tcp_checksum_ok(frame.data(), frame.size(), 54));
  EXPECT_EQ(std::vector<uint8_t>(&frame[14 + 8], &frame[14 + 24]), std::vector<uint8_t>(b4.begin(), b4.end()));
  EXPECT_EQ(std::vector<uint8_t>(&frame[14 + 24], &frame[14 + 40]), std::vector<uint8_t>(aftr.begin(), aftr.end()));
  TestTag tag2;
  const TcpView ack = view_of(frame, tag2);
  EXPECT_EQ(tag2.l3_offset, 54);
  EXPECT_EQ(std::vector<uint8_t>(ack.src(), ack.src() + 4), std::vector<uint8_t>(client.begin(), client.begin() + 4));
  EXPECT_EQ(std::vector<uint8_t>(ack.dst(), ack.dst() + 4), std::vector<uint8_t>(server.begin(), server.begin() + 4));
  EXPECT_EQ(ack.flags(), kTcpAck);
  EXPECT_EQ(ack.seq(), isn_i + 1);
  EXPECT_EQ(ack.ack(), responder_isn(key, isn_i) + 1);
  EXPECT_TRUE(expected_segment(TcpStep::kAck, key, ack));
}

// Closing (RFC 9293 §3.6, Figure 12's normal close) and resetting an established connection
// through the reference NAT: the Initiator's FIN and RST from its enumeration alone, each
// answer from the segment it answers, and the numbers each carries.
TEST_P(TcpHandshake, CloseAndResetThroughAReferenceNat) {
  const int v = GetParam();
  const TcpKey key{7, 77};
  const auto client = parse_ip(v == 4 ? "10.0.0.7" : "fd00::7", v);
  const auto server = parse_ip(v == 4 ? "198.19.0.2" : "2001:2:0:8000::2", v);
  const auto outside = parse_ip(v == 4 ? "198.18.0.1" : "2001:2::1", v);
  const size_t alen = v == 4 ? 4 : 16, tcp = 14 + (v == 4 ? 20 : 40);
  const uint8_t cport[2] = {0x9c, 0x41}, sport[2] = {0, 80};
  const uint16_t mapped = 20001;
  const uint32_t isn_i = initiator_isn(key, client.data(), server.data(), alen, cport, sport);
  const uint32_t isn_r = responder_isn(key, isn_i);
  FrameSpec fin_spec = tcp_spec(v, tcp_flags_of(TcpStep::kFin));
  fin_spec.src_ip = client;
  fin_spec.dst_ip = server;
  fin_spec.src_port = 0x9c41;
  fin_spec.dst_port = 80;
  EXPECT_EQ(fin_spec.frame_size, v == 4 ? 78u : 98u);
  const FrameTemplate fin_tmpl = build_template(fin_spec, 1, 7);
  std::vector<uint8_t> fin = fin_tmpl.bytes;
  stamp_frame(fin.data(), fin_tmpl, 5, 0x99);
  stamp_initiator(fin.data(), fin_tmpl, key, TcpStep::kFin);
  ASSERT_TRUE(tcp_checksum_ok(fin.data(), fin.size()));
  EXPECT_EQ(fin[tcp + 13], kTcpFin | kTcpAck);
  EXPECT_EQ(get32(&fin[tcp + 4]), isn_i + 1);  // the next sequence number after the SYN
  EXPECT_EQ(get32(&fin[tcp + 8]), isn_r + 1);  // acknowledging the Responder's SYN
  const std::vector<uint8_t> fin_in = reference_snat(fin, outside, mapped);
  TestTag tag;
  const TcpView f = view_of(fin_in, tag);
  ASSERT_TRUE(expected_segment(TcpStep::kFin, key, f));
  EXPECT_FALSE(expected_segment(TcpStep::kAck, key, f)) << "a FIN is no handshake ACK";
  FrameSpec back = tcp_spec(v, tcp_flags_of(TcpStep::kFinAck));
  std::swap(back.src_mac, back.dst_mac);
  const SegmentTemplate fin_ack_t(back, 2, 7);
  std::vector<uint8_t> fin_ack(fin_ack_t.tmpl.size());
  write_segment(fin_ack.data(), fin_ack_t, answer(TcpStep::kFin, key, f, tag.seq, tag.timestamp));
  ASSERT_TRUE(tcp_checksum_ok(fin_ack.data(), fin_ack.size()));
  EXPECT_EQ(fin_ack[tcp + 13], kTcpFin | kTcpAck);
  EXPECT_EQ(get32(&fin_ack[tcp + 4]), isn_r + 1);
  EXPECT_EQ(get32(&fin_ack[tcp + 8]), isn_i + 2);  // the Initiator's FIN took one number
  const std::vector<uint8_t> fin_ack_in = reference_snat(fin_ack, client, 0x9c41, true);
  TestTag tag2;
  const TcpView fa = view_of(fin_ack_in, tag2);
  ASSERT_TRUE(expected_segment(TcpStep::kFinAck, key, fa));
  EXPECT_FALSE(expected_segment(TcpStep::kFinAck, TcpKey{8, 77}, fa)) << "another key's ISN";
  const SegmentTemplate last_t(tcp_spec(v, tcp_flags_of(TcpStep::kLastAck)), 3, 7);
  std::vector<uint8_t> last(last_t.tmpl.size());
  write_segment(last.data(), last_t, answer(TcpStep::kFinAck, key, fa, tag2.seq, tag2.timestamp));
  ASSERT_TRUE(tcp_checksum_ok(last.data(), last.size()));
  EXPECT_EQ(last[tcp + 13], kTcpAck);
  EXPECT_EQ(get32(&last[tcp + 4]), isn_i + 2);
  EXPECT_EQ(get32(&last[tcp + 8]), isn_r + 2);
  TestTag tag3;
  const std::vector<uint8_t> last_in = reference_snat(last, outside, mapped);
  const TcpView l = view_of(last_in, tag3);
  EXPECT_TRUE(expected_segment(TcpStep::kLastAck, key, l));
  EXPECT_FALSE(expected_segment(TcpStep::kAck, key, l)) << "it acknowledges the FIN, not the SYN";
  // RST: one segment, the connection's next sequence number.
  FrameSpec rst_spec = fin_spec;
  rst_spec.tcp_flags = tcp_flags_of(TcpStep::kRst);
  const FrameTemplate rst_tmpl = build_template(rst_spec, 4, 7);
  std::vector<uint8_t> rst = rst_tmpl.bytes;
  stamp_frame(rst.data(), rst_tmpl, 6, 0x98);
  stamp_initiator(rst.data(), rst_tmpl, key, TcpStep::kRst);
  ASSERT_TRUE(tcp_checksum_ok(rst.data(), rst.size()));
  EXPECT_EQ(rst[tcp + 13], kTcpRst | kTcpAck);
  EXPECT_EQ(get32(&rst[tcp + 4]), isn_i + 1);
  TestTag tag4;
  const std::vector<uint8_t> rst_in = reference_snat(rst, outside, mapped);
  EXPECT_TRUE(expected_segment(TcpStep::kRst, key, view_of(rst_in, tag4)));
  EXPECT_FALSE(expected_segment(TcpStep::kFin, key, view_of(rst_in, tag4)));
}

// A sum whose complement is 0: TCP sends 0x0000 (RFC 9293 §3.1: the complement itself, what a
// receiver or a decoder computes), UDP 0xffff (RFC 768: 0 means "no checksum").
TEST(TcpLayout, AZeroChecksumIsSentAsZero) {
  for (uint8_t l4 : {kProtoTcp, kProtoUdp}) {
    FrameSpec spec = tcp_spec(4, kTcpAck);
    spec.l4 = l4;
    spec.frame_size = 128;
    const FrameTemplate t = build_template(spec, 0, 1);
    const uint64_t tsc = 0x123456789aull;
    const uint16_t rest = fold(uint64_t(t.base_sum) + timestamp_sum(tag_timestamp(tsc)));
    const uint32_t seq = uint16_t(0xffff - rest);  // makes the whole sum 0xffff
    std::vector<uint8_t> f = t.bytes;
    stamp_frame(f.data(), t, seq, tsc);
    const size_t at = t.checksum_offset;
    EXPECT_EQ(f[at] << 8 | f[at + 1], l4 == kProtoTcp ? 0x0000 : 0xffff) << int(l4);
    if (l4 == kProtoTcp) EXPECT_TRUE(tcp_checksum_ok(f.data(), f.size()));
    else EXPECT_TRUE(udp_checksum_ok(f.data(), f.size()));
  }
}
