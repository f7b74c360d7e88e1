#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include "core/frame.hpp"
#include "reference.hpp"

using namespace xlp;

namespace {

FrameSpec spec_for(int version, uint32_t size) {
  FrameSpec s;
  s.ip_version = version;
  s.src_mac = parse_mac("02:78:6c:00:00:01");
  s.dst_mac = parse_mac("02:78:6c:00:01:01");
  s.src_ip = parse_ip(version == 4 ? "198.18.0.2" : "2001:2::2", version);
  s.dst_ip = parse_ip(version == 4 ? "198.19.0.2" : "2001:2:0:8000::2", version);
  s.frame_size = size;
  return s;
}

const uint32_t kSizes[] = {64, 84, 128, 256, 512, 768, 1024, 1280, 1518, 1522, 2048, 4096, 9000, 9216};

}  // namespace

// Every side combination of siitperf's Table XV sends either IPv4 or IPv6 frames on a port,
// so the two frame kinds cover 4/4, 6/6, 6/4 and 4/6.
class FrameLayout : public ::testing::TestWithParam<int> {};

TEST_P(FrameLayout, HeadersLengthsAndChecksumsForEverySize) {
  const int v = GetParam();
  std::mt19937_64 rng(v);
  for (uint32_t size : kSizes) {
    if (size < min_frame_size(v)) continue;
    FrameTemplate t = build_template(spec_for(v, size), 5, 9);
    ASSERT_EQ(t.size(), size - 4);
    std::vector<uint8_t> f = t.bytes;
    const uint8_t* ip = f.data() + 14;
    EXPECT_EQ(f[12] << 8 | f[13], v == 4 ? 0x0800 : 0x86DD);
    const size_t udp = 14 + (v == 4 ? 20 : 40);
    if (v == 4) {
      EXPECT_EQ(ip[0], 0x45);
      EXPECT_EQ(ip[2] << 8 | ip[3], int(size - 18));  // RFC 2544 App. C: frame - 18
      EXPECT_EQ(ip[6], 0x40);                         // DF, no fragment offset
      EXPECT_EQ(ip[8], 10);                           // TTL
      EXPECT_EQ(ip[9], 17);
      EXPECT_EQ(reference_checksum({ip, ip + 20}), 0) << "IPv4 header checksum, size " << size;
    } else {
      EXPECT_EQ(ip[0] >> 4, 6);
      EXPECT_EQ(ip[4] << 8 | ip[5], int(size - 4 - 14 - 40));
      EXPECT_EQ(ip[6], 17);
    }
    EXPECT_EQ(f[udp + 4] << 8 | f[udp + 5], int(size - 4 - udp));
    EXPECT_EQ(t.tag_offset, udp + 8);
    EXPECT_EQ(std::string(f.begin() + udp + 8, f.begin() + udp + 14), std::string("XLAT\0\0", 6));  // magic, no CE
    // Padding after the tag: incrementing octets, never all zero.
    for (size_t i = udp + 8 + kTagSize; i < f.size(); ++i)
      ASSERT_EQ(f[i], uint8_t(i - (udp + 8 + kTagSize)));
    EXPECT_TRUE(udp_checksum_ok(f.data(), f.size())) << "template, size " << size;
    for (int k = 0; k < 200; ++k) {
      const uint32_t seq = uint32_t(rng());
      const uint64_t tsc = rng();
      stamp_frame(f.data(), t, seq, tsc);
      ASSERT_TRUE(udp_checksum_ok(f.data(), f.size())) << "size " << size << " seq " << seq;
      ASSERT_NE(f[udp + 6] << 8 | f[udp + 7], 0);
      TestTag tag;
      ASSERT_TRUE(parse_test_frame(f.data(), uint32_t(f.size()), tag));
      EXPECT_EQ(tag.stream, 5);
      EXPECT_EQ(tag.trial_tag, 9);
      EXPECT_EQ(tag.seq, seq);
      EXPECT_EQ(tag.timestamp, tsc & kTimestampMask);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Versions, FrameLayout, ::testing::Values(4, 6));

TEST(Frame, SmallestFramesHoldTheTagExactly) {
  EXPECT_EQ(min_frame_size(4), 64u);
  EXPECT_EQ(min_frame_size(6), 84u);
  EXPECT_THROW(build_template(spec_for(4, 63), 0, 1), std::invalid_argument);
  EXPECT_THROW(build_template(spec_for(6, 83), 0, 1), std::invalid_argument);
  EXPECT_THROW(build_template(spec_for(4, 9217), 0, 1), std::invalid_argument);
  EXPECT_NO_THROW(build_template(spec_for(4, 64), 0, 1));
  EXPECT_NO_THROW(build_template(spec_for(6, 84), 0, 1));
}

TEST(Frame, ParserRejectsNonTestFrames) {
  FrameTemplate t = build_template(spec_for(4, 64), 0, 1);
  std::vector<uint8_t> f = t.bytes;
  TestTag tag;
  EXPECT_TRUE(parse_test_frame(f.data(), uint32_t(f.size()), tag));
  EXPECT_FALSE(parse_test_frame(f.data(), uint32_t(f.size() - 1 - 18), tag));  // truncated
  auto g = f; g[12] = 0x08; g[13] = 0x06;                                         // ARP
  EXPECT_FALSE(parse_test_frame(g.data(), uint32_t(g.size()), tag));
  g = f; g[14 + 9] = 6;                                                           // TCP
  EXPECT_FALSE(parse_test_frame(g.data(), uint32_t(g.size()), tag));
  g = f; g[14 + 20 + 8] = 'x';                                                    // no magic
  EXPECT_FALSE(parse_test_frame(g.data(), uint32_t(g.size()), tag));
  g = f; g[14 + 6] = 0x20;                                                        // MF fragment
  EXPECT_FALSE(parse_test_frame(g.data(), uint32_t(g.size()), tag));
}

// RFC 2473 §3: an IPv6 tunnel header whose payload is the original packet, next header 4
// (IPv4) or 41 (IPv6); the inner packet is unchanged, its UDP checksum over its own addresses.
TEST(Frame, TunnelledFramesCarryTheInnerPacketAsPayload) {
  for (int v : {4, 6}) {
    for (uint32_t size : kSizes) {
      if (size < min_frame_size(v, {Tunnel{}})) continue;
      FrameSpec s = spec_for(v, size);
      s.tunnels = {Tunnel{parse_ip("2001:db8:0:1::1", 6), parse_ip("2001:db8:ffff::1", 6)}};
      FrameTemplate t = build_template(s, 3, 7);
      ASSERT_EQ(t.size(), size - 4);
      const std::vector<uint8_t>& f = t.bytes;
      EXPECT_EQ(f[12] << 8 | f[13], 0x86DD);
      EXPECT_EQ(t.ip.outermost(), 14);
      EXPECT_EQ(t.ip_offset, 54);
      const uint8_t* outer = f.data() + 14;
      EXPECT_EQ(outer[0], 0x60);
      EXPECT_EQ(outer[4] << 8 | outer[5], int(size - 4 - 14 - 40));  // the inner packet
      EXPECT_EQ(outer[6], v == 4 ? 4 : 41);
      EXPECT_EQ(std::vector<uint8_t>(outer + 8, outer + 24), std::vector<uint8_t>(s.tunnels.innermost().src.begin(), s.tunnels.innermost().src.end()));
      EXPECT_EQ(std::vector<uint8_t>(outer + 24, outer + 40), std::vector<uint8_t>(s.tunnels.innermost().dst.begin(), s.tunnels.innermost().dst.end()));
      // The inner packet is the untunnelled frame's, byte for byte (but for the stream id).
      FrameTemplate plain = build_template(spec_for(v, size - 40), 3, 7);
      EXPECT_EQ(std::vector<uint8_t>(f.begin() + 54, f.end()),
                std::vector<uint8_t>(plain.bytes.begin() + 14, plain.bytes.end()));
      if (v == 4) {
        EXPECT_EQ(reference_checksum({f.data() + 54, f.data() + 74}), 0);
      }
      std::vector<uint8_t> g = f;
      stamp_frame(g.data(), t, 0x01020304, 0x0000aabbccddeeffull);
      EXPECT_TRUE(udp_checksum_ok(g.data(), g.size(), 54)) << "IPv" << v << " in IPv6, size " << size;
      TestTag tag;
      ASSERT_TRUE(parse_test_frame(g.data(), uint32_t(g.size()), tag));
      EXPECT_EQ(tag.ip.outermost(), 14);
      EXPECT_EQ(tag.l3_offset, 54);
      EXPECT_EQ(tag.seq, 0x01020304u);
    }
  }
  EXPECT_EQ(min_frame_size(4, {Tunnel{}}), 104u);
  EXPECT_EQ(min_frame_size(6, {Tunnel{}}), 124u);
  FrameSpec small = spec_for(4, 103);
  small.tunnels = {Tunnel{}};
  EXPECT_THROW(build_template(small, 0, 0), std::invalid_argument);
}

// The parser walks every stack it may meet, and refuses what a DUT may have mangled.
TEST(Frame, ParserWalksEveryStackAndRefusesMangledOnes) {
  FrameSpec s = spec_for(4, 104);
  s.tunnels = {Tunnel{parse_ip("2001:db8::1", 6), parse_ip("2001:db8::2", 6)}};
  const std::vector<uint8_t> f = build_template(s, 0, 1).bytes;
  TestTag tag;
  ASSERT_TRUE(parse_test_frame(f.data(), uint32_t(f.size()), tag));
  // An RFC 2473 §5.1 encapsulation limit: a destination options header before the inner packet.
  std::vector<uint8_t> g(f.begin(), f.begin() + 54);
  g[14 + 6] = 60;
  const uint8_t options[8] = {4, 0, 4, 1, 4, 1, 0, 0};  // next 4, length 0; limit 4; PadN
  g.insert(g.end(), options, options + 8);
  g.insert(g.end(), f.begin() + 54, f.end());
  ASSERT_TRUE(parse_test_frame(g.data(), uint32_t(g.size()), tag));
  EXPECT_EQ(tag.l3_offset, 62);
  auto refused = [&](std::vector<uint8_t> h, const char* what) {
    EXPECT_FALSE(parse_test_frame(h.data(), uint32_t(h.size()), tag)) << what;
  };
  g = f; g[14 + 6] = 17;  refused(g, "outer header says UDP: the inner IPv4 header is no UDP header");
  g = f; g[54] = 0x65;    refused(g, "inner version nibble 6 behind next header 4");
  g = f; g[14 + 6] = 41;  refused(g, "next header 41 before an IPv4 packet");
  g = f; g[54 + 9] = 4;   refused(g, "IPv4 in IPv4 in IPv6: the UDP header is no IPv4 header");
  g = f; g[54 + 6] = 0x20; refused(g, "inner fragment");
  g = f; g[54] = 0x44;    refused(g, "inner IHL below 5");
  refused(std::vector<uint8_t>(f.begin(), f.begin() + 60), "truncated inside the inner header");
  // IPv6 in IPv6 in IPv6 where the UDP header lies: no IPv6 header.
  FrameSpec six = spec_for(6, 164);
  six.tunnels = {Tunnel{}};
  std::vector<uint8_t> h = build_template(six, 0, 1).bytes;
  ASSERT_TRUE(parse_test_frame(h.data(), uint32_t(h.size()), tag));
  h[54 + 6] = 41;
  refused(h, "a second tunnel header that is none");
  // An IPv4 header of protocol 41 carries an IPv6 packet (RFC 4213): a UDP header is none.
  std::vector<uint8_t> v4 = build_template(spec_for(4, 64), 0, 1).bytes;
  v4[14 + 9] = 41;
  refused(v4, "IPv4 protocol 41 before a UDP header");
  // IPv6 in IPv4 in IPv4 where the IPv6 header lies: no IPv4 header.
  FrameSpec sixin4 = spec_for(6, 104);
  sixin4.tunnels = {Tunnel{{}, {}, 4}};
  std::vector<uint8_t> k = build_template(sixin4, 0, 1).bytes;
  ASSERT_TRUE(parse_test_frame(k.data(), uint32_t(k.size()), tag));
  k[34 + 6] = 4;
  refused(k, "an IPv6 header of next header 4 inside an IPv4 tunnel");
}

// RFC 4213 §3.5 (which 6rd uses, RFC 5969 §7): an IPv4 header of protocol 41 whose payload is
// the IPv6 packet, 20 bytes more than the packet; RFC 2003's IPv4 in IPv4 (protocol 4) alike.
// The tunnel header's checksum is right, its DF clear (RFC 4213 §3.2's static MTU), its TTL the
// stream's; the parser walks it as it walks an IPv6 tunnel; a fragmented tunnel packet is a
// fragment.
TEST(Frame, Ipv4TunnelHeaderCarriesTheInnerPacketAsPayload) {
  for (int v : {6, 4}) {
    for (uint32_t size : kSizes) {
      const Tunnel ipv4_tunnel{parse_ip("192.0.2.1", 4), parse_ip("203.0.113.1", 4), 4};
      if (size < min_frame_size(v, {ipv4_tunnel})) continue;
      FrameSpec s = spec_for(v, size);
      s.tunnels = {ipv4_tunnel};
      FrameTemplate t = build_template(s, 3, 7);
      ASSERT_EQ(t.size(), size - 4);
      const std::vector<uint8_t>& f = t.bytes;
      EXPECT_EQ(f[12] << 8 | f[13], 0x0800);
      EXPECT_EQ(t.ip.outermost(), 14);
      EXPECT_EQ(t.ip_offset, 34);
      const uint8_t* outer = f.data() + 14;
      EXPECT_EQ(outer[0], 0x45);
      EXPECT_EQ(outer[2] << 8 | outer[3], int(size - 4 - 14));  // the whole tunnel packet
      EXPECT_EQ(outer[6], 0) << "DF clear, not a fragment";
      EXPECT_EQ(outer[8], s.ttl);
      EXPECT_EQ(outer[9], v == 6 ? 41 : 4);
      EXPECT_EQ(std::vector<uint8_t>(outer + 12, outer + 16), std::vector<uint8_t>({192, 0, 2, 1}));
      EXPECT_EQ(std::vector<uint8_t>(outer + 16, outer + 20), std::vector<uint8_t>({203, 0, 113, 1}));
      EXPECT_EQ(reference_checksum({f.data() + 14, f.data() + 34}), 0);
      // The inner packet is the untunnelled frame's, byte for byte.
      FrameTemplate plain = build_template(spec_for(v, size - 20), 3, 7);
      EXPECT_EQ(std::vector<uint8_t>(f.begin() + 34, f.end()),
                std::vector<uint8_t>(plain.bytes.begin() + 14, plain.bytes.end()));
      std::vector<uint8_t> g = f;
      stamp_frame(g.data(), t, 0x01020304, 0x0000aabbccddeeffull);
      EXPECT_TRUE(udp_checksum_ok(g.data(), g.size(), 34)) << "IPv" << v << " in IPv4, size " << size;
      TestTag tag;
      ASSERT_TRUE(parse_test_frame(g.data(), uint32_t(g.size()), tag));
      EXPECT_EQ(tag.ip.outermost(), 14);
      EXPECT_EQ(tag.l3_offset, 34);
      EXPECT_EQ(tag.l4_offset, v == 6 ? 74 : 54);
      EXPECT_EQ(tag.seq, 0x01020304u);
      EXPECT_EQ(tunnel_extra_bytes(tag), 0u);
      EXPECT_EQ(ipv6_tunnel_header(g.data(), tag), nullptr) << "no softwire of the stateful emulation's";
      EXPECT_FALSE(is_ip_fragment(g.data(), uint32_t(g.size())));
      g[14 + 6] = 0x20;  // the tunnel packet's first fragment (MF)
      EXPECT_TRUE(is_ip_fragment(g.data(), uint32_t(g.size())));
      EXPECT_FALSE(parse_test_frame(g.data(), uint32_t(g.size()), tag));
    }
  }
  EXPECT_EQ(min_frame_size(6, {Tunnel{{}, {}, 4}}), 104u);  // RFC 8219 App. A: 20 bytes of 6in4
  EXPECT_EQ(min_frame_size(4, {Tunnel{{}, {}, 4}}), 84u);
  EXPECT_EQ(ethernet_mss(6, {Tunnel{{}, {}, 4}}), 1420);
  FrameSpec small = spec_for(6, 103);
  small.tunnels = {Tunnel{{}, {}, 4}};
  EXPECT_THROW(build_template(small, 0, 0), std::invalid_argument);
  small.frame_size = 104;
  small.tunnels.innermost().version = 5;
  EXPECT_THROW(build_template(small, 0, 0), std::invalid_argument);
}

// Tunnels nest as deep as kMaxTunnels allows, each header the same IP layer as at the top: an
// IPv6 packet in 6rd's IPv4 tunnel (RFC 4213) carried in an IPv6 one (RFC 2473). Each header's
// length and next protocol say what follows it, the IPv4 one's checksum verifies, the parser
// finds every header where the writer put it, and a frame one tunnel deeper is no test frame.
TEST(Frame, TunnelsNestAsDeepAsDeclared) {
  FrameSpec s = spec_for(6, 200);
  s.tunnels = {Tunnel{parse_ip("2001:db8:0:1::1", 6), parse_ip("2001:db8:ffff::1", 6), 6},
               Tunnel{parse_ip("192.0.2.1", 4), parse_ip("203.0.113.1", 4), 4}};
  EXPECT_EQ(min_frame_size(6, s.tunnels), 84u + 40 + 20);
  EXPECT_EQ(ethernet_mss(6, s.tunnels), 1500 - 40 - 20 - 40 - 20);
  const FrameTemplate t = build_template(s, 3, 7);
  ASSERT_EQ(t.size(), 196u);
  const std::vector<uint8_t>& f = t.bytes;
  EXPECT_EQ(f[12] << 8 | f[13], 0x86DD);
  ASSERT_EQ(t.ip.count, 3);
  EXPECT_EQ(t.ip.at[0], 14);
  EXPECT_EQ(t.ip.at[1], 54);
  EXPECT_EQ(t.ip.at[2], 74);
  EXPECT_EQ(t.ip.tunnel(), 54);
  EXPECT_EQ(t.ip_offset, 74);
  EXPECT_EQ(t.l4_offset, 114);
  EXPECT_EQ(f[14 + 6], 4) << "the outer IPv6 header carries IPv4";
  EXPECT_EQ(f[14 + 4] << 8 | f[14 + 5], 196 - 54);
  EXPECT_EQ(f[54 + 9], 41) << "the IPv4 tunnel carries IPv6";
  EXPECT_EQ(f[54 + 2] << 8 | f[54 + 3], 196 - 54);
  EXPECT_EQ(reference_checksum({f.data() + 54, f.data() + 74}), 0);
  EXPECT_EQ(t.ipv4_checksum_at, 54 + 10) << "the innermost tunnel's: a 6rd CE's address lies in it";
  // The packet is the untunnelled frame's, byte for byte; the tunnels' fields are marked as theirs.
  FrameTemplate plain = build_template(spec_for(6, 200 - 60), 3, 7);
  EXPECT_EQ(std::vector<uint8_t>(f.begin() + 74, f.end()), std::vector<uint8_t>(plain.bytes.begin() + 14, plain.bytes.end()));
  for (const FieldMark& m : t.fields) {
    if (m.role == FieldRole::kSrcAddress && m.layer != Layer::kTcp && m.layer != Layer::kUdp) {
      EXPECT_EQ(m.offset, t.ip.at[m.ip_header] + (m.layer == Layer::kIpv4 ? 12 : 8));
    }
  }
  std::vector<uint8_t> g = f;
  stamp_frame(g.data(), t, 0x01020304, 0x0000aabbccddeeffull);
  EXPECT_TRUE(udp_checksum_ok(g.data(), g.size(), 74));
  TestTag tag;
  ASSERT_TRUE(parse_test_frame(g.data(), uint32_t(g.size()), tag));
  ASSERT_EQ(tag.ip.count, 3);
  EXPECT_EQ(tag.ip.at[0], 14);
  EXPECT_EQ(tag.ip.at[1], 54);
  EXPECT_EQ(tag.l3_offset, 74);
  EXPECT_EQ(tag.l4_offset, 114);
  EXPECT_EQ(tag.seq, 0x01020304u);
  EXPECT_EQ(tunnel_extra_bytes(tag), 0u);
  EXPECT_EQ(ipv6_tunnel_header(g.data(), tag), nullptr) << "the innermost tunnel is IPv4";
  g[54 + 6] = 0x20;  // the inner tunnel's packet fragmented
  EXPECT_TRUE(is_ip_fragment(g.data(), uint32_t(g.size())));
  // One tunnel deeper than declared: an IPv6 header of next header 41 in front.
  std::vector<uint8_t> deeper(f.begin(), f.begin() + 54);
  deeper[14 + 6] = 41;
  deeper.insert(deeper.end(), f.begin() + 14, f.end());
  EXPECT_FALSE(parse_test_frame(deeper.data(), uint32_t(deeper.size()), tag));
  EXPECT_THROW((TunnelStack{Tunnel{}, Tunnel{}, Tunnel{}}), std::invalid_argument);
  FrameSpec small = s;
  small.frame_size = 143;
  EXPECT_THROW(build_template(small, 0, 0), std::invalid_argument);
}

TEST(Frame, ParsesFramesWithNoneOneOrTwoVlanTagsOfAnyTpid) {
  FrameTemplate t = build_template(spec_for(6, 128), 3, 4);
  for (const std::vector<uint8_t>& tags : std::vector<std::vector<uint8_t>>{
           {}, {0x81, 0x00, 0x00, 0x64}, {0x88, 0xa8, 0x00, 0xc8, 0x81, 0x00, 0x00, 0x64},
           {0x91, 0x00, 0x2f, 0xff, 0x81, 0x00, 0xe0, 0x01}}) {  // PCP bits set: only the ID counts
    std::vector<uint8_t> f(t.bytes.begin(), t.bytes.begin() + 12);
    f.insert(f.end(), tags.begin(), tags.end());
    f.insert(f.end(), t.bytes.begin() + 12, t.bytes.end());
    TestTag tag;
    ASSERT_TRUE(parse_test_frame(f.data(), uint32_t(f.size()), tag)) << tags.size();
    EXPECT_EQ(tag.stream, 3);
    EXPECT_EQ(tag.l3_offset, 14 + tags.size());
    EXPECT_EQ(tag.vlan.count, tags.size() / 4);
    for (size_t i = 0; i < tags.size() / 4; ++i) EXPECT_EQ(tag.vlan.ids[i], (tags[4 * i + 2] << 8 | tags[4 * i + 3]) & 0xfff);
  }
  // Three tags: more than this tester sends or expects, so not a test frame.
  std::vector<uint8_t> f(t.bytes.begin(), t.bytes.begin() + 12);
  for (int i = 0; i < 3; ++i) f.insert(f.end(), {0x81, 0x00, 0x00, 0x05});
  f.insert(f.end(), t.bytes.begin() + 12, t.bytes.end());
  TestTag tag;
  EXPECT_FALSE(parse_test_frame(f.data(), uint32_t(f.size()), tag));
}

// IEEE 802.1Q: one C-tag (TPID 0x8100); IEEE 802.1ad: the S-tag (0x88a8) outside the C-tag. The
// tags come on top of frame_size and shift every header by 4 bytes each.
TEST(Frame, TemplatesCarryTheirVlanTags) {
  for (int v : {4, 6})
    for (uint8_t count : {1, 2}) {
      FrameSpec spec = spec_for(v, 128);
      spec.vlan.count = count;
      spec.vlan.ids = {200, 100};
      const FrameTemplate t = build_template(spec, 7, 1);
      const FrameTemplate plain = build_template(spec_for(v, 128), 7, 1);
      ASSERT_EQ(t.size(), 124u + 4 * count);
      const std::vector<uint8_t>& f = t.bytes;
      if (count == 1) {
        EXPECT_EQ(std::vector<uint8_t>(f.begin() + 12, f.begin() + 16), (std::vector<uint8_t>{0x81, 0x00, 0x00, 200}));
      } else {
        EXPECT_EQ(std::vector<uint8_t>(f.begin() + 12, f.begin() + 20),
                  (std::vector<uint8_t>{0x88, 0xa8, 0x00, 200, 0x81, 0x00, 0x00, 100}));
      }
      // Everything after the tags is the untagged frame's.
      EXPECT_EQ(std::vector<uint8_t>(f.begin() + 12 + 4 * count, f.end()),
                std::vector<uint8_t>(plain.bytes.begin() + 12, plain.bytes.end()));
      EXPECT_EQ(t.ip_offset, 14 + 4 * count);
      EXPECT_EQ(t.l4_offset, plain.l4_offset + 4 * count);
      EXPECT_EQ(t.base_sum, plain.base_sum);
      std::vector<uint8_t> g = f;
      stamp_frame(g.data(), t, 77, 12345);
      std::vector<uint8_t> untagged(g.begin(), g.begin() + 12);
      untagged.insert(untagged.end(), g.begin() + 12 + 4 * count, g.end());
      EXPECT_TRUE(udp_checksum_ok(untagged.data(), untagged.size()));
      TestTag tag;
      ASSERT_TRUE(parse_test_frame(g.data(), uint32_t(g.size()), tag));
      EXPECT_EQ(tag.seq, 77u);
      EXPECT_TRUE(tag.vlan == spec.vlan);
    }
}

TEST(Frame, MacAndAddressParsing) {
  EXPECT_EQ(format_mac(parse_mac("02:AB:cd:00:00:ff").data()), "02:ab:cd:00:00:ff");
  EXPECT_THROW(parse_mac("02:ab:cd:00:00"), std::invalid_argument);
  EXPECT_THROW(parse_mac("02:ab:cd:00:00:ff:11"), std::invalid_argument);
  EXPECT_THROW(parse_ip("198.18.0.256", 4), std::invalid_argument);
  EXPECT_THROW(parse_ip("198.18.0.1", 6), std::invalid_argument);
  EXPECT_EQ(parse_ip("2001:2::2", 6)[15], 2);
}
