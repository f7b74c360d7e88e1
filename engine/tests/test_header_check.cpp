// The receiver's header checks (header_check.hpp): per layer, a frame a correct DUT delivers
// passes, and each fault a DUT can make is counted by its own verdict. The frames the "DUT"
// delivers are built here by the engine's layer writers and then changed byte by byte, their
// checksums recomputed with the independent reference (reference.hpp) where the fault is not
// the checksum itself.
#include <gtest/gtest.h>

#include <bit>

#include "core/header_check.hpp"
#include "reference.hpp"

using namespace xlp;

namespace {

FrameSpec sent_spec(int version, uint32_t size = 0, uint8_t l4 = kProtoUdp) {
  FrameSpec s;
  s.ip_version = version;
  s.l4 = l4;
  s.src_mac = parse_mac("02:78:6c:00:00:01");
  s.dst_mac = parse_mac("02:78:6c:00:01:01");
  s.src_ip = parse_ip(version == 4 ? "198.18.0.2" : "2001:2::2", version);
  s.dst_ip = parse_ip(version == 4 ? "198.19.0.2" : "2001:2:0:8000::2", version);
  s.tos = 0x28;  // DSCP 10 (AF11): a DUT that zeroes it is caught
  s.frame_size = size ? size : min_frame_size(version, {}, l4, s.tcp_flags);
  return s;
}

// What a router delivers: the sent frame with the TTL one lower.
RxSpec routed(const FrameSpec& s) {
  RxSpec rx;
  rx.ip_version = s.ip_version;
  rx.src_ip = s.src_ip;
  rx.dst_ip = s.dst_ip;
  rx.src_port = s.src_port;
  rx.dst_port = s.dst_port;
  rx.ttl = {uint8_t(s.ttl - 1), uint8_t(s.ttl - 1)};
  rx.tos = s.tos;
  if (s.ip_version == 4) rx.df = true;
  return rx;
}

// The receiving tester port's MAC, and the DUT's on that side.
const std::array<uint8_t, 6> kTesterMac = parse_mac("02:78:6c:00:00:02");
const std::array<uint8_t, 6> kDutMac = parse_mac("02:78:6c:00:01:02");

// The frame as a DUT would write it: `spec`'s frame from the DUT's MAC to the receiving tester
// port's, with a tag stamped in.
std::vector<uint8_t> frame_of(FrameSpec spec) {
  spec.src_mac = kDutMac;
  spec.dst_mac = kTesterMac;
  FrameTemplate t = build_template(spec, 3, 7);
  std::vector<uint8_t> f = t.bytes;
  stamp_frame(f.data(), t, 12345, 0x123456789abcull);
  return f;
}

// Recomputes the IPv4 header checksum (if any) and the transport checksum of the IP header
// at `ip`, as a DUT that changed a header correctly would.
void fix_checksums(std::vector<uint8_t>& f, size_t ip) {
  uint8_t* h = f.data() + ip;
  const bool v4 = (h[0] >> 4) == 4;
  if (v4) {
    h[10] = h[11] = 0;
    const uint16_t c = reference_checksum({h, h + 20});
    h[10] = uint8_t(c >> 8), h[11] = uint8_t(c);
  }
  const size_t l4 = ip + (v4 ? 20 : 40);
  const uint8_t proto = v4 ? h[9] : h[6];
  const size_t at = l4 + (proto == kProtoTcp ? 16 : 6);
  f[at] = f[at + 1] = 0;
  std::vector<uint8_t> pseudo(h + (v4 ? 12 : 8), h + (v4 ? 20 : 40));
  const size_t len = f.size() - l4;
  pseudo.insert(pseudo.end(), {0, proto, uint8_t(len >> 8), uint8_t(len)});
  pseudo.insert(pseudo.end(), f.begin() + long(l4), f.end());
  uint16_t c = reference_checksum(pseudo);
  if (c == 0 && proto == kProtoUdp) c = 0xffff;
  f[at] = uint8_t(c >> 8), f[at + 1] = uint8_t(c);
}

// The verdict on `f` as it arrives at the tester port whose MAC is `port` (kTesterMac's).
Verdict judge(const HeaderCheck& check, const std::vector<uint8_t>& f,
              const std::array<uint8_t, 6>& port = kTesterMac) {
  TestTag tag;
  if (!parse_test_frame(f.data(), uint32_t(f.size()), tag)) return Verdict(255);
  const uint32_t l4_len = uint32_t(f.size() - tag.l4_offset);
  return check.judge(f.data(), tag, l4_len, sum_native(f.data() + tag.l4_offset, l4_len), PortMac(port));
}

constexpr size_t kIp = 14;  // untagged, no tunnel

}  // namespace

// The expectations come from the same layer list that builds the frames: the expected frame's
// fields are, layer by layer and role by role, those of a sent frame of that stack.
TEST(HeaderCheck, ExpectationsAreTheLayerWritersFields) {
  for (int v : {4, 6})
    for (uint8_t l4 : {kProtoUdp, kProtoTcp}) {
      const FrameSpec s = sent_spec(v, 0, l4);
      const HeaderCheck check(s, routed(s), s.frame_size, {});
      const FrameTemplate t = build_template(s, 0, 0);
      ASSERT_EQ(check.expected().fields.size(), t.fields.size());
      for (size_t i = 0; i < t.fields.size(); ++i) {
        EXPECT_EQ(check.expected().fields[i].layer, t.fields[i].layer);
        EXPECT_EQ(check.expected().fields[i].role, t.fields[i].role);
        EXPECT_EQ(check.expected().fields[i].offset, t.fields[i].offset);
      }
      // ... in the order of the frame's layer list.
      const LayerList layers = layers_of(s);
      size_t next = 0;
      for (const FieldMark& m : t.fields) {
        while (next < layers.count && layers.items[next] != m.layer) ++next;
        ASSERT_LT(next, layers.count) << "a field of a layer out of the list's order";
      }
    }
}

// The tester's ports run promiscuous: a frame the DUT did not address to the receiving port
// (flooded by a bridge that has not learned its destination, or sent to a group) arrives all
// the same, and is the DUT's fault, whatever its other headers hold.
TEST(HeaderCheck, TheEthernetDestinationIsTheReceivingPorts) {
  for (int v : {4, 6})
    for (uint8_t l4 : {kProtoUdp, kProtoTcp}) {
      const FrameSpec s = sent_spec(v, 0, l4);
      const HeaderCheck check(s, routed(s), s.frame_size, {});
      FrameSpec out = s;
      out.ttl = 9;
      const std::vector<uint8_t> good = frame_of(out);
      EXPECT_EQ(judge(check, good), Verdict::kGood) << v << " " << int(l4);
      const auto to = [&](const char* mac) {
        auto f = good;
        const std::array<uint8_t, 6> m = parse_mac(mac);
        std::copy(m.begin(), m.end(), f.begin());
        return judge(check, f);
      };
      EXPECT_EQ(to("02:78:6c:00:01:01"), Verdict::kBadAddress) << "to the MAC the tester sent it to (flooded)";
      EXPECT_EQ(to("02:78:6c:00:00:01"), Verdict::kBadAddress) << "to the other tester port";
      EXPECT_EQ(to("ff:ff:ff:ff:ff:ff"), Verdict::kBadAddress) << "broadcast";
      EXPECT_EQ(to("01:00:5e:00:00:01"), Verdict::kBadAddress) << "IPv4 multicast";
      EXPECT_EQ(to("33:33:00:00:00:01"), Verdict::kBadAddress) << "IPv6 multicast";
      EXPECT_EQ(to("03:78:6c:00:00:02"), Verdict::kBadAddress) << "the group bit set";
      EXPECT_EQ(to("02:78:6c:00:00:03"), Verdict::kBadAddress) << "another last byte";
      EXPECT_EQ(to("02:78:6c:00:01:02"), Verdict::kBadAddress) << "another fifth byte";
      EXPECT_EQ(to("02:78:6c:01:00:02"), Verdict::kBadAddress) << "another fourth byte";
      // The same frame judged at another port: addressed to the one it was meant for.
      EXPECT_EQ(judge(check, good, parse_mac("02:78:6c:00:00:01")), Verdict::kBadAddress);
      // The destination comes first: a flooded frame that is faulty otherwise too.
      auto f = frame_of(s);  // no TTL decrement
      ASSERT_EQ(judge(check, f), Verdict::kBadTtl);
      f[0] = 0xff;
      EXPECT_EQ(judge(check, f), Verdict::kBadAddress);
      // The source MAC: not checked where rx names none; where it does (the DUT's MAC on the
      // receiving side), a frame from any other MAC is bad_address, whatever else it holds.
      f = good;
      f[6 + 5] ^= 0x40;
      EXPECT_EQ(judge(check, f), Verdict::kGood);
      RxSpec from = routed(s);
      from.src_mac = kDutMac;
      const HeaderCheck sourced(s, from, s.frame_size, {});
      EXPECT_EQ(judge(sourced, good), Verdict::kGood);
      EXPECT_EQ(judge(sourced, f), Verdict::kBadAddress) << "another last byte";
      f = good;
      f[6] ^= 0x01;
      EXPECT_EQ(judge(sourced, f), Verdict::kBadAddress) << "another first byte";
      f = frame_of(s);  // no TTL decrement either: the source comes first
      f[6 + 2] ^= 0x10;
      EXPECT_EQ(judge(sourced, f), Verdict::kBadAddress);
      // A side that sends from another MAC (rx.dst_mac): frames to it pass too, to the port's
      // own still, to any third one not.
      RxSpec also = routed(s);
      also.dst_mac = parse_mac("02:00:00:00:aa:01");
      const HeaderCheck aliased(s, also, s.frame_size, {});
      auto to_alias = good;
      std::copy(also.dst_mac->begin(), also.dst_mac->end(), to_alias.begin());
      EXPECT_EQ(judge(aliased, to_alias), Verdict::kGood);
      EXPECT_EQ(judge(aliased, good), Verdict::kGood);
      EXPECT_EQ(judge(check, to_alias), Verdict::kBadAddress);
      to_alias[5] ^= 1;
      EXPECT_EQ(judge(aliased, to_alias), Verdict::kBadAddress);
    }
  // A port without a MAC of its own (a ring pair's, 00:00:00:00:00:00) takes any destination:
  // the pair is wired inside the engine.
  {
    const FrameSpec s = sent_spec(4);
    const HeaderCheck check(s, routed(s), s.frame_size, {});
    FrameSpec out = s;
    out.ttl = 9;
    auto f = frame_of(out);
    for (const char* mac : {"02:78:6c:00:00:02", "ff:ff:ff:ff:ff:ff", "33:33:00:00:00:01", "00:00:00:00:00:00"}) {
      const std::array<uint8_t, 6> m = parse_mac(mac);
      std::copy(m.begin(), m.end(), f.begin());
      EXPECT_EQ(judge(check, f, std::array<uint8_t, 6>{}), Verdict::kGood) << mac;
    }
    EXPECT_EQ(judge(check, f), Verdict::kBadAddress) << "00:00:00:00:00:00 to a port with a MAC";
  }
  // Behind VLAN tags the destination is still the frame's first six bytes.
  FrameSpec s = sent_spec(4);
  s.vlan.count = 1;
  s.vlan.ids[0] = 100;
  const HeaderCheck check(s, routed(s), s.frame_size, s.vlan);
  FrameSpec out = s;
  out.ttl = 9;
  auto f = frame_of(out);
  EXPECT_EQ(judge(check, f), Verdict::kGood);
  f[5] ^= 1;
  EXPECT_EQ(judge(check, f), Verdict::kBadAddress);
}

TEST(HeaderCheck, Ipv4RouterEveryFaultByItsVerdict) {
  const FrameSpec s = sent_spec(4);
  const HeaderCheck check(s, routed(s), s.frame_size, {});
  FrameSpec out = s;
  out.ttl = 9;
  const std::vector<uint8_t> good = frame_of(out);
  EXPECT_EQ(judge(check, good), Verdict::kGood);

  EXPECT_EQ(judge(check, frame_of(s)), Verdict::kBadTtl) << "no TTL decrement";
  auto f = good;
  f[kIp + 1] = 0;  // DSCP zeroed
  fix_checksums(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kBadTos);
  f = good;
  f[kIp + 19] ^= 1;  // another destination
  fix_checksums(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kBadAddress);
  f = good;
  f[kIp + 20 + 1] ^= 1;  // another source port
  fix_checksums(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kBadAddress);
  f = good;
  f[kIp + 6] &= uint8_t(~0x40);  // DF cleared
  fix_checksums(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kBadHeader);
  f = good;
  f[kIp + 3] -= 2;  // a total length that is not the packet's
  fix_checksums(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kBadHeader);
  f = good;
  f[kIp + 9] = 99;  // another protocol: not a test frame at all (the parser's: foreign)
  fix_checksums(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict(255));
  f = good;
  f[kIp + 10] ^= 0x10;  // a broken IPv4 header checksum
  EXPECT_EQ(judge(check, f), Verdict::kBadChecksum);
  f = good;
  f[kIp + 8] = 9;
  f[kIp + 12] ^= 4;  // the source rewritten without the UDP checksum's adjustment (IPv4 header fixed)
  {
    uint8_t* h = f.data() + kIp;
    h[10] = h[11] = 0;
    const uint16_t c = reference_checksum({h, h + 20});
    h[10] = uint8_t(c >> 8), h[11] = uint8_t(c);
  }
  EXPECT_EQ(judge(check, f), Verdict::kBadAddress) << "the address comes first";
  f = good;
  f[f.size() - 1] ^= 0x55;  // payload damaged: the UDP checksum catches it
  EXPECT_EQ(judge(check, f), Verdict::kBadChecksum);
  f = good;
  f[kIp + 4] ^= 0x12;  // the identification is the DUT's to set (RFC 7915 §5.1)
  fix_checksums(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kGood);
  f = good;
  f[kIp + 20 + 6] = f[kIp + 20 + 7] = 0;  // UDP over IPv4 without a checksum: allowed (RFC 768)
  EXPECT_EQ(judge(check, f), Verdict::kGood);
}

TEST(HeaderCheck, Ipv6EveryFaultByItsVerdict) {
  const FrameSpec s = sent_spec(6);
  const HeaderCheck check(s, routed(s), s.frame_size, {});
  FrameSpec out = s;
  out.ttl = 9;
  const std::vector<uint8_t> good = frame_of(out);
  EXPECT_EQ(judge(check, good), Verdict::kGood);
  EXPECT_EQ(judge(check, frame_of(s)), Verdict::kBadTtl);
  auto f = good;
  f[kIp] = 0x60, f[kIp + 1] &= 0x0f;  // traffic class zeroed
  EXPECT_EQ(judge(check, f), Verdict::kBadTos);
  f = good;
  f[kIp + 3] = 1;  // a flow label where the tester sent none: a forwarding node may (RFC 6437 §3)
  EXPECT_EQ(judge(check, f), Verdict::kGood);
  f = good;
  f[kIp + 5] -= 2;  // a payload length that is not the packet's (checked against the frame)
  fix_checksums(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kBadHeader);
  f = good;
  f[kIp + 8 + 15] ^= 1;  // another source address, checksum adjusted
  fix_checksums(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kBadAddress);
  f = good;
  f[kIp + 40 + 6] = f[kIp + 40 + 7] = 0;  // UDP over IPv6 needs its checksum (RFC 8200 §8.1)
  EXPECT_EQ(judge(check, f), Verdict::kBadChecksum);
  f = good;
  f[kIp + 40 + 6] ^= 1;
  EXPECT_EQ(judge(check, f), Verdict::kBadChecksum);

  // A datagram whose checksum is 0xffff, written as 0 (TAYGA's slip): refused, unless
  // ipv6_zero_udp_checksum accepts it, and then only where its sum verifies.
  FrameSpec zero_sum = out;
  std::vector<uint8_t> z;
  for (uint16_t port = 1; port; ++port) {  // a source port that makes the checksum 0xffff
    zero_sum.src_port = port;
    z = frame_of(zero_sum);
    if (z[kIp + 40 + 6] == 0xff && z[kIp + 40 + 7] == 0xff) break;
  }
  ASSERT_EQ(z[kIp + 40 + 6] << 8 | z[kIp + 40 + 7], 0xffff);
  z[kIp + 40 + 6] = z[kIp + 40 + 7] = 0;
  RxSpec lenient = routed(s);
  lenient.src_port = zero_sum.src_port;
  const HeaderCheck strict(s, lenient, s.frame_size, {});
  EXPECT_EQ(judge(strict, z), Verdict::kBadChecksum);
  lenient.ipv6_zero_udp_checksum = true;
  const HeaderCheck accepting(s, lenient, s.frame_size, {});
  EXPECT_EQ(judge(accepting, z), Verdict::kGood);
  f = good;  // a zero field where the checksum is not 0xffff: still a fault
  f[kIp + 40 + 6] = f[kIp + 40 + 7] = 0;
  EXPECT_EQ(judge(HeaderCheck(s, routed(s), s.frame_size, VlanStack{}), f), Verdict::kBadChecksum);
  RxSpec accept_all = routed(s);
  accept_all.ipv6_zero_udp_checksum = true;
  EXPECT_EQ(judge(HeaderCheck(s, accept_all, s.frame_size, VlanStack{}), f), Verdict::kBadChecksum);
}

// The IPv6 flow label (RFC 6437): written into the inner header as sent, never into a tunnel
// header; compared where rx names it (a non-zero one through a router, 0 from a translator),
// any label accepted where it does not. The label shares its first byte with the traffic
// class: a label check must not judge the class, nor the class check the label.
TEST(HeaderCheck, FlowLabel) {
  FrameSpec s = sent_spec(6);
  s.flow_label = 0xabcde;
  const std::vector<uint8_t> sent = frame_of(s);
  EXPECT_EQ((sent[kIp + 1] & 0x0f) << 16 | sent[kIp + 2] << 8 | sent[kIp + 3], 0xabcde);
  EXPECT_EQ(sent[kIp] >> 4, 6);
  EXPECT_EQ(uint8_t(sent[kIp] << 4 | sent[kIp + 1] >> 4), s.tos) << "the traffic class beside it";

  RxSpec rx = routed(s);
  rx.flow_label = 0xabcde;
  const HeaderCheck check(s, rx, s.frame_size, {});
  FrameSpec out = s;
  out.ttl = 9;
  const std::vector<uint8_t> good = frame_of(out);
  EXPECT_EQ(judge(check, good), Verdict::kGood);
  for (const auto& [byte, bits] : {std::pair{1, 0x08}, {2, 0x40}, {3, 0x01}}) {
    auto f = good;  // one bit of the label changed: the UDP checksum does not cover it
    f[kIp + byte] ^= uint8_t(bits);
    EXPECT_EQ(judge(check, f), Verdict::kBadHeader) << "label bit in byte " << byte;
  }
  auto zeroed = good;  // a router that clears the label
  zeroed[kIp + 1] &= 0xf0, zeroed[kIp + 2] = zeroed[kIp + 3] = 0;
  EXPECT_EQ(judge(check, zeroed), Verdict::kBadHeader);
  auto reclassed = good;  // the class changed, the label kept: the TOS verdict, not the label's
  reclassed[kIp] = 0x60, reclassed[kIp + 1] &= 0x0f;
  EXPECT_EQ(judge(check, reclassed), Verdict::kBadTos);

  // Sent without a label: any arrives (rx names none); a translator's must be 0 (rx 0).
  FrameSpec unlabelled = out;
  unlabelled.flow_label = 0;
  RxSpec any = routed(s);
  EXPECT_EQ(judge(HeaderCheck(s, any, s.frame_size, {}), good), Verdict::kGood);
  any.flow_label = 0;
  const HeaderCheck translator(s, any, s.frame_size, {});
  EXPECT_EQ(judge(translator, frame_of(unlabelled)), Verdict::kGood);
  EXPECT_EQ(judge(translator, good), Verdict::kBadHeader);

  // A tunnel header carries the entry point's label, not the stream's.
  FrameSpec tunnelled = s;
  tunnelled.ip_version = 4;
  tunnelled.src_ip = parse_ip("198.18.0.2", 4);
  tunnelled.dst_ip = parse_ip("198.19.0.2", 4);
  tunnelled.tunnels = {Tunnel{parse_ip("2001:db8::1", 6), parse_ip("2001:db8::2", 6)}};
  tunnelled.frame_size = min_frame_size(4, {Tunnel{}});
  const std::vector<uint8_t> t = frame_of(tunnelled);
  EXPECT_EQ(t[kIp + 1] & 0x0f, 0);
  EXPECT_EQ(t[kIp + 2] | t[kIp + 3], 0);
}

// SIIT (RFC 7915): an IPv6 frame arrives as IPv4. A translator that forgets to adjust the UDP
// checksum for the new pseudo header is caught; the DF rule of §5.1 (0 up to 1260 bytes) and
// a TTL range are honoured.
TEST(HeaderCheck, TranslatedFramesAndTheChecksumAdjustment) {
  const FrameSpec s = sent_spec(6, 84);
  RxSpec rx;
  rx.ip_version = 4;
  rx.src_ip = parse_ip("198.18.0.2", 4);
  rx.dst_ip = parse_ip("198.19.0.2", 4);
  rx.src_port = s.src_port;
  rx.dst_port = s.dst_port;
  rx.ttl = {8, 9};
  rx.tos = s.tos;
  rx.df = false;
  const HeaderCheck check(s, rx, 64, {});
  FrameSpec out = sent_spec(4, 64);
  out.ttl = 9;
  auto good = frame_of(out);
  good[kIp + 6] = 0;  // DF 0: a 64-byte frame
  fix_checksums(good, kIp);
  EXPECT_EQ(judge(check, good), Verdict::kGood);
  auto f = good;
  f[kIp + 8] = 8;
  fix_checksums(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kGood) << "8 is in the range";
  f[kIp + 8] = 10;
  fix_checksums(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kBadTtl);
  // The UDP checksum as it was in the IPv6 frame: not adjusted to the IPv4 pseudo header.
  const auto sent = frame_of(s);
  f = good;
  f[kIp + 20 + 6] = sent[kIp + 40 + 6], f[kIp + 20 + 7] = sent[kIp + 40 + 7];
  EXPECT_EQ(judge(check, f), Verdict::kBadChecksum);
  f = good;
  f[kIp + 6] = 0x40;  // DF set on a small packet
  fix_checksums(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kBadHeader);
}

// An IPv4 packet of at most 1,260 bytes translated from IPv6, where RFC 7915 §5.1 (DF 0) and
// the obsoleted RFC 6145 §5.1 (DF 1) differ: with count_df either flag passes and the receiver
// is told which one the frame carried; without it nothing is counted.
TEST(HeaderCheck, DfCountedWhereTheRfcsDiffer) {
  const FrameSpec s = sent_spec(6, 84);
  RxSpec rx = routed(sent_spec(4, 64));  // as a translator writes it, but for the TTL and DF
  rx.ttl.reset();
  rx.df.reset();
  rx.count_df = true;
  const HeaderCheck check(s, rx, 64, {});
  EXPECT_TRUE(check.counts_df());
  auto f = frame_of(sent_spec(4, 64));
  for (const uint8_t flags : {uint8_t(0x40), uint8_t(0)}) {
    f[kIp + 6] = flags;
    fix_checksums(f, kIp);
    EXPECT_EQ(judge(check, f), Verdict::kGood);
    TestTag tag;
    ASSERT_TRUE(parse_test_frame(f.data(), uint32_t(f.size()), tag));
    EXPECT_EQ(check.counted_df(f.data(), tag), std::optional<bool>(flags != 0));
  }
  rx.count_df = false;
  const HeaderCheck plain(s, rx, 64, {});
  TestTag tag;
  ASSERT_TRUE(parse_test_frame(f.data(), uint32_t(f.size()), tag));
  EXPECT_FALSE(plain.counted_df(f.data(), tag).has_value());
}

// The ECN field (RFC 3168 §5) apart from the DSCP: an ECT packet may arrive CE (a congested
// router marks it), nothing else; Not-ECT and CE arrive as sent; all four codepoints: not
// checked. A wrong ECN field is bad_tos, as a wrong DSCP is.
void set_ecn(std::vector<uint8_t>& f, int version, uint8_t ecn, size_t ip = kIp) {
  if (version == 4) f[ip + 1] = uint8_t((f[ip + 1] & 0xfc) | ecn);
  else f[ip + 1] = uint8_t((f[ip + 1] & 0xcf) | ecn << 4);
  fix_checksums(f, ip);
}

TEST(HeaderCheck, EcnFieldWithTheCeAllowance) {
  constexpr uint8_t kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3;
  for (const int version : {4, 6}) {
    FrameSpec s = sent_spec(version, version == 4 ? 64 : 84);
    s.tos = uint8_t(0x28 | kEct0);
    RxSpec rx = routed(s);
    rx.ecn = uint8_t(1u << kEct0 | 1u << kCe);
    const HeaderCheck check(s, rx, s.frame_size, {});
    FrameSpec out = s;
    out.ttl = 9;
    const auto good = frame_of(out);
    EXPECT_EQ(judge(check, good), Verdict::kGood) << version;
    for (const uint8_t ecn : {kNotEct, kEct1, kEct0, kCe}) {
      auto f = good;
      set_ecn(f, version, ecn);
      EXPECT_EQ(judge(check, f), ecn == kEct0 || ecn == kCe ? Verdict::kGood : Verdict::kBadTos)
          << version << " ECN " << int(ecn);
    }
    auto f = good;
    f[kIp + (version == 4 ? 1 : 0)] ^= version == 4 ? 0x20 : 0x02;  // the DSCP changed, the ECN kept
    fix_checksums(f, kIp);
    EXPECT_EQ(judge(check, f), Verdict::kBadTos) << version;
    // Not-ECT sent must stay Not-ECT (RFC 3168 §5: a router drops, never marks it).
    rx.ecn = uint8_t(1u << kNotEct);
    const HeaderCheck exact(s, rx, s.frame_size, {});
    f = good;
    set_ecn(f, version, kNotEct);
    EXPECT_EQ(judge(exact, f), Verdict::kGood) << version;
    set_ecn(f, version, kCe);
    EXPECT_EQ(judge(exact, f), Verdict::kBadTos) << version;
    // The ECN check off: any codepoint, the DSCP still compared.
    rx.ecn = uint8_t(0x0f);
    const HeaderCheck off(s, rx, s.frame_size, {});
    EXPECT_EQ(judge(off, f), Verdict::kGood) << version;
    f[kIp + (version == 4 ? 1 : 0)] ^= version == 4 ? 0x20 : 0x02;
    fix_checksums(f, kIp);
    EXPECT_EQ(judge(off, f), Verdict::kBadTos) << version;
  }
}

// RFC 2473 tunnels: the tunnel's addresses are checked where given, its hop limit must not be
// 0 and is otherwise the entry point's choice, as are its flow label and traffic class; a frame
// without the tunnel, or with one where none is expected, is a header fault.
// A 64-byte IPv4 frame as routed (TTL 9) inside an RFC 2473 tunnel from 2001:db8::1 to ::2.
std::vector<uint8_t> tunnelled_frame(const FrameSpec& sent) {
  FrameSpec out = sent;
  out.ttl = 9;
  out.frame_size = 104;
  out.tunnels = {Tunnel{parse_ip("2001:db8::1", 6), parse_ip("2001:db8::2", 6)}};
  return frame_of(out);
}

TEST(HeaderCheck, TunnelLayer) {
  FrameSpec s = sent_spec(4, 64);
  RxSpec rx = routed(s);
  rx.tunnels = {RxTunnel{6, parse_ip("2001:db8::1", 6), parse_ip("2001:db8::2", 6)}};
  const HeaderCheck check(s, rx, 104, {});
  const auto good = tunnelled_frame(s);
  EXPECT_EQ(judge(check, good), Verdict::kGood);
  const size_t inner = kIp + 40;
  auto f = good;
  f[kIp + 7] = 255, f[kIp + 3] = 0x42, f[kIp] = 0x60, f[kIp + 1] = 0;  // hop limit, flow label, class: its own
  EXPECT_EQ(judge(check, f), Verdict::kGood);
  f[kIp + 7] = 0;
  EXPECT_EQ(judge(check, f), Verdict::kBadTtl);
  f = good;
  f[kIp + 8 + 15] = 9;  // another tunnel source (the wrong BR or AFTR)
  EXPECT_EQ(judge(check, f), Verdict::kBadAddress);
  f = good;
  f[inner + 1] = 0;  // the inner TOS lost
  fix_checksums(f, inner);
  EXPECT_EQ(judge(check, f), Verdict::kBadTos);
  FrameSpec plain = s;
  plain.ttl = 9;
  EXPECT_EQ(judge(check, frame_of(plain)), Verdict::kBadHeader) << "no tunnel where one is expected";
  const HeaderCheck untunnelled(s, routed(s), 64, {});
  EXPECT_EQ(judge(untunnelled, good), Verdict::kBadHeader) << "a tunnel where none is expected";
}

// RFC 4213 tunnels (6rd's, RFC 5969 §7): an IPv6 packet in an IPv4 header of protocol 41. The
// tunnel's addresses are checked where given; its TTL must not be 0 and is otherwise the entry
// point's, as are its identification, DF and class; its header checksum must verify. A frame in
// the other kind of tunnel, or in none, is a header fault.
void fix_ipv4_header(std::vector<uint8_t>& f, size_t at) {
  f[at + 10] = f[at + 11] = 0;
  const uint16_t c = reference_checksum({f.data() + at, f.data() + at + 20});
  f[at + 10] = uint8_t(c >> 8), f[at + 11] = uint8_t(c);
}

TEST(HeaderCheck, Ipv4TunnelLayer) {
  const FrameSpec s = sent_spec(6, 84);
  RxSpec rx = routed(s);
  rx.tunnels = {RxTunnel{4, parse_ip("192.0.2.1", 4), parse_ip("203.0.113.1", 4)}};
  const HeaderCheck check(s, rx, 104, {});
  FrameSpec out = s;
  out.ttl = 9;
  out.frame_size = 104;
  out.tunnels = {Tunnel{*rx.tunnels[0].src, *rx.tunnels[0].dst, 4}};
  const auto good = frame_of(out);
  EXPECT_EQ(judge(check, good), Verdict::kGood);
  const size_t inner = kIp + 20;
  auto f = good;
  f[kIp + 8] = 64, f[kIp + 4] = 0x12, f[kIp + 6] = 0x40, f[kIp + 1] = 0xb8;  // TTL, ID, DF, class: its own
  fix_ipv4_header(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kGood);
  f[kIp + 8] = 0;
  fix_ipv4_header(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kBadTtl);
  f = good;
  f[kIp + 15] = 2;  // another tunnel source (the wrong CE or BR)
  fix_ipv4_header(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kBadAddress);
  f = good;
  f[kIp + 10] ^= 0x01;  // the tunnel header's checksum
  EXPECT_EQ(judge(check, f), Verdict::kBadChecksum);
  f = good;
  f[kIp + 6] = 0x20;  // MF: the tunnel packet fragmented, its first fragment
  fix_ipv4_header(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict(255)) << "a fragment is no test frame";
  f = good;
  f[inner + 7] = 10;  // the inner hop limit not decremented
  EXPECT_EQ(judge(check, f), Verdict::kBadTtl);
  // The other tunnel, or none.
  FrameSpec in_ipv6 = out;
  in_ipv6.frame_size = 124;
  in_ipv6.tunnels = {Tunnel{parse_ip("2001:db8::1", 6), parse_ip("2001:db8::2", 6)}};
  EXPECT_EQ(judge(HeaderCheck(s, rx, 124, {}), frame_of(in_ipv6)), Verdict::kBadHeader) << "an IPv6 tunnel";
  RxSpec ipv6_tunnel = rx;
  ipv6_tunnel.tunnels = {RxTunnel{}};
  EXPECT_EQ(judge(HeaderCheck(s, ipv6_tunnel, 124, {}), good), Verdict::kBadHeader) << "expected in IPv6";
  FrameSpec plain = s;
  plain.ttl = 9;
  plain.frame_size = 104;  // as long as the tunnelled frame
  EXPECT_EQ(judge(check, frame_of(plain)), Verdict::kBadHeader) << "no tunnel where one is expected";
  EXPECT_EQ(judge(HeaderCheck(s, routed(s), 84, {}), good), Verdict::kBadHeader) << "a tunnel where none is";
  // The tunnel's ECN field (the TOS octet's low bits) counted against the inner one's.
  RxSpec counting = rx;
  counting.count_tunnel_ecn = true;
  counting.ecn = uint8_t(1u << 2 | 1u << 3);  // the inner ECT(0), or CE
  const HeaderCheck modes(s, counting, 104, {});
  auto ect = good;
  set_ecn(ect, 6, 2, inner);
  for (const auto& [outer, mode] : {std::pair{0, std::optional<bool>(false)}, std::pair{2, std::optional<bool>(true)},
                                    std::pair{3, std::optional<bool>()}}) {
    f = ect;
    f[kIp + 1] = uint8_t((f[kIp + 1] & 0xfc) | outer);
    fix_ipv4_header(f, kIp);
    EXPECT_EQ(judge(modes, f), Verdict::kGood) << outer;
    TestTag tag;
    ASSERT_TRUE(parse_test_frame(f.data(), uint32_t(f.size()), tag));
    EXPECT_EQ(modes.counted_tunnel_ecn(f.data(), tag), mode) << outer;
  }
}

// Nested tunnels: an IPv6 packet in an IPv4 tunnel (RFC 4213) in an IPv6 one (RFC 2473). Each
// tunnel header is judged as a tunnel's alone would be (its addresses where given, TTL above
// 0, the IPv4 one's checksum), wherever the parser finds it: an encapsulation limit option in
// the outer tunnel moves the inner headers but not the verdict. A frame with one tunnel fewer,
// or the two in the other order, is a header fault; a field another check owns in the innermost
// tunnel (a 6rd CE's address) is not compared.
TEST(HeaderCheck, NestedTunnels) {
  const FrameSpec s = sent_spec(6, 84);
  RxSpec rx = routed(s);
  rx.tunnels = {RxTunnel{6, parse_ip("2001:db8::1", 6), parse_ip("2001:db8::2", 6)},
                RxTunnel{4, parse_ip("192.0.2.1", 4), parse_ip("203.0.113.1", 4)}};
  const HeaderCheck check(s, rx, 144, {});
  FrameSpec out = s;
  out.ttl = 9;
  out.frame_size = 144;
  out.tunnels = {Tunnel{*rx.tunnels[0].src, *rx.tunnels[0].dst, 6}, Tunnel{*rx.tunnels[1].src, *rx.tunnels[1].dst, 4}};
  const auto good = frame_of(out);
  EXPECT_EQ(judge(check, good), Verdict::kGood);
  const size_t middle = kIp + 40, inner = middle + 20;
  auto f = good;
  f[kIp + 8 + 15] = 9;  // the outer tunnel's source
  EXPECT_EQ(judge(check, f), Verdict::kBadAddress);
  f = good;
  f[middle + 15] = 2;  // the inner tunnel's source
  fix_ipv4_header(f, middle);
  EXPECT_EQ(judge(check, f), Verdict::kBadAddress);
  f = good;
  f[middle + 8] = 0;  // the inner tunnel's TTL
  fix_ipv4_header(f, middle);
  EXPECT_EQ(judge(check, f), Verdict::kBadTtl);
  f = good;
  f[kIp + 7] = 0;  // the outer tunnel's hop limit
  EXPECT_EQ(judge(check, f), Verdict::kBadTtl);
  f = good;
  f[middle + 10] ^= 0x01;  // the inner tunnel header's checksum
  EXPECT_EQ(judge(check, f), Verdict::kBadChecksum);
  f = good;
  f[inner + 7] = 10;  // the packet's hop limit not decremented
  EXPECT_EQ(judge(check, f), Verdict::kBadTtl);
  // An encapsulation limit option (RFC 2473 §4.1.1) after the outer header: the headers move.
  std::vector<uint8_t> limited(good.begin(), good.begin() + middle);
  limited[kIp + 6] = 60;
  limited[kIp + 5] = uint8_t(limited[kIp + 5] + 8);
  const uint8_t options[8] = {4, 0, 4, 1, 4, 1, 0, 0};  // next 4, length 0; limit 4; PadN
  limited.insert(limited.end(), options, options + 8);
  limited.insert(limited.end(), good.begin() + long(middle), good.end());
  TestTag tag;
  ASSERT_TRUE(parse_test_frame(limited.data(), uint32_t(limited.size()), tag));
  EXPECT_EQ(tunnel_extra_bytes(tag), 8u);
  EXPECT_EQ(judge(check, limited), Verdict::kGood);
  limited[middle + 8 + 15] = 2;
  fix_ipv4_header(limited, middle + 8);
  EXPECT_EQ(judge(check, limited), Verdict::kBadAddress) << "the inner tunnel's source, moved";
  // One tunnel fewer, or the same two the other way round.
  FrameSpec one = out;
  one.frame_size = 124;
  one.tunnels = {Tunnel{*rx.tunnels[0].src, *rx.tunnels[0].dst, 6}};
  EXPECT_EQ(judge(check, frame_of(one)), Verdict::kBadHeader) << "the IPv4 tunnel missing";
  FrameSpec swapped = out;
  swapped.tunnels = {out.tunnels.items[1], out.tunnels.items[0]};
  EXPECT_EQ(judge(check, frame_of(swapped)), Verdict::kBadHeader) << "IPv6 in IPv4, not IPv4 in IPv6";
  // The innermost tunnel's source owned by a CE check: any source passes this one.
  const HeaderCheck owned(s, rx, 144, {}, {OwnedField{Layer::kIpv4, FieldRole::kSrcAddress, true}});
  f = good;
  f[middle + 15] = 2;
  fix_ipv4_header(f, middle);
  EXPECT_EQ(judge(owned, f), Verdict::kGood);
  f[kIp + 8 + 15] = 9;  // the outer tunnel's is still compared
  EXPECT_EQ(judge(owned, f), Verdict::kBadAddress);
}

// DS-Lite and lw4o6 tunnels carry the TOS over (RFC 6333 §7.1): with carries_tos the tunnel's
// traffic class must be the inner TOS; an entry point that writes 0 is caught.
TestTag tunnel_tag(const std::vector<uint8_t>& f) {
  TestTag tag;
  EXPECT_TRUE(parse_test_frame(f.data(), uint32_t(f.size()), tag));
  return tag;
}

TEST(HeaderCheck, TunnelCarriesTos) {
  FrameSpec s = sent_spec(4, 64);
  RxSpec rx = routed(s);
  rx.tunnels = {RxTunnel{}};
  rx.tunnels[0].carries_tos = true;
  const HeaderCheck check(s, rx, 104, {});
  const auto good = tunnelled_frame(s);
  ASSERT_NE(s.tos, 0) << "the test needs a TOS to lose";
  EXPECT_EQ(judge(check, good), Verdict::kGood);
  auto f = good;
  f[kIp] = 0x60, f[kIp + 1] &= 0x0f;  // traffic class 0, flow label kept
  EXPECT_EQ(judge(check, f), Verdict::kBadTos);
  // The tunnel's ECN field is the encapsulator's (RFC 6040 §4.1): copied in normal mode,
  // Not-ECT in compatibility mode; either passes, the DSCP still carried.
  f = good;
  f[kIp + 1] = uint8_t((f[kIp + 1] & 0xcf) | 0x30);  // CE in the tunnel alone
  EXPECT_EQ(judge(check, f), Verdict::kGood);
  // ... and which mode it was, counted where asked: with an ECT(0) inner field, copied, Not-ECT
  // or (marked on the way) CE.
  RxSpec counting = rx;
  counting.count_tunnel_ecn = true;
  counting.ecn = uint8_t(1u << 2 | 1u << 3);  // the inner ECT(0), or CE
  const HeaderCheck modes(s, counting, 104, {});
  EXPECT_FALSE(check.counted_tunnel_ecn(good.data(), tunnel_tag(good)).has_value());
  auto ect = good;
  set_ecn(ect, 4, 2, kIp + 40);  // the inner ECT(0)
  for (const auto& [outer, mode] : {std::pair{0, std::optional<bool>(false)}, std::pair{2, std::optional<bool>(true)},
                                    std::pair{3, std::optional<bool>()}}) {
    f = ect;
    f[kIp + 1] = uint8_t((f[kIp + 1] & 0xcf) | outer << 4);
    EXPECT_EQ(judge(modes, f), Verdict::kGood) << outer;
    EXPECT_EQ(modes.counted_tunnel_ecn(f.data(), tunnel_tag(f)), mode) << outer;
  }
  EXPECT_FALSE(modes.counted_tunnel_ecn(good.data(), tunnel_tag(good)).has_value()) << "Not-ECT: the modes agree";
  rx.tos.reset();  // no TOS to carry: the class is the entry point's again
  f[kIp] = 0x60, f[kIp + 1] &= 0x0f;
  EXPECT_EQ(judge(HeaderCheck(s, rx, 104, {}), f), Verdict::kGood);
}

// Varying words are checked against their ranges, not their template values; fields another
// check owns (a CE's) are not compared at all; a value rx leaves out is not checked.
TEST(HeaderCheck, VaryingOwnedAndUncheckedFields) {
  const FrameSpec s = sent_spec(4);
  RxSpec rx = routed(s);
  rx.vary = {RxWord{FieldRole::kSrcPort, 0, 16, 1024, 2047}, RxWord{FieldRole::kDstAddress, 3, 8, 1, 10}};
  const HeaderCheck check(s, rx, s.frame_size, VlanStack{}, {OwnedField{Layer::kIpv4, FieldRole::kSrcAddress}});
  FrameSpec out = s;
  out.ttl = 9;
  out.src_port = 1500;
  out.dst_ip[3] = 10;
  out.src_ip[0] = 203;  // owned by another check
  EXPECT_EQ(judge(check, frame_of(out)), Verdict::kGood);
  out.src_port = 2048;
  EXPECT_EQ(judge(check, frame_of(out)), Verdict::kBadAddress);
  out.src_port = 1024;
  out.dst_ip[3] = 11;
  EXPECT_EQ(judge(check, frame_of(out)), Verdict::kBadAddress);
  out.dst_ip[3] = 1;
  out.dst_ip[2] = 1;  // the fixed part of a varying address is compared
  EXPECT_EQ(judge(check, frame_of(out)), Verdict::kBadAddress);

  RxSpec loose;  // addresses, ports, TTL, TOS, DF not named: only structure and checksums
  loose.ip_version = 4;
  const HeaderCheck any(s, loose, s.frame_size, {});
  FrameSpec nat = s;
  nat.src_ip = parse_ip("203.0.113.1", 4), nat.src_port = 40000, nat.ttl = 3, nat.tos = 0;
  EXPECT_EQ(judge(any, frame_of(nat)), Verdict::kGood);
  auto f = frame_of(nat);
  f[f.size() - 2] ^= 1;
  EXPECT_EQ(judge(any, f), Verdict::kBadChecksum);
  loose.checksums = false;
  EXPECT_EQ(judge(HeaderCheck(s, loose, s.frame_size, VlanStack{}), f), Verdict::kGood);
}

// TCP: sequence numbers, window and checksum are not compared (the TCP step checks the
// numbers); data offset and flags are; the TCP checksum is verified.
TEST(HeaderCheck, TcpLayer) {
  FrameSpec s = sent_spec(4, 0, kProtoTcp);
  s.tcp_flags = kTcpSyn;
  s.frame_size = min_frame_size(4, {}, kProtoTcp, kTcpSyn);
  const HeaderCheck check(s, routed(s), s.frame_size, {});
  FrameSpec out = s;
  out.ttl = 9;
  auto good = frame_of(out);
  const size_t tcp = kIp + 20;
  good[tcp + 4] = 0x12, good[tcp + 14] = 0x10;  // a sequence number, another window
  fix_checksums(good, kIp);
  EXPECT_EQ(judge(check, good), Verdict::kGood);
  auto f = good;
  f[tcp + 13] = kTcpSyn | kTcpAck;
  fix_checksums(f, kIp);
  EXPECT_EQ(judge(check, f), Verdict::kBadHeader);
  f = good;
  f[tcp + 16] ^= 0x40;
  EXPECT_EQ(judge(check, f), Verdict::kBadChecksum);
}

// The checksum sum in the machine's byte order folds to the same verdict as RFC 1071's.
TEST(HeaderCheck, NativeSumAgreesWithTheReference) {
  std::vector<uint8_t> bytes(77);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 37 + 11);
  for (size_t len = 0; len <= bytes.size(); ++len) {
    const uint16_t native = fold(sum_native(bytes.data(), len));
    const uint16_t big = fold(sum_words(bytes.data(), len));
    EXPECT_EQ(native, std::endian::native == std::endian::little ? uint16_t(__builtin_bswap16(big)) : big) << len;
  }
}

// The same where every add carries: all-ones bytes at every length to a jumbo frame's, and an
// accumulated sum as large as 64 bits hold.
TEST(HeaderCheck, NativeSumCarriesEveryCarry) {
  std::vector<uint8_t> bytes(9000, 0xff);
  for (size_t len = 0; len <= bytes.size(); len += len < 64 ? 1 : 61) {
    for (const uint64_t acc : {uint64_t(0), ~uint64_t(0), uint64_t(0x0123456789abcdef)}) {
      const uint64_t native = sum_native(bytes.data(), len, acc);
      EXPECT_LT(native, uint64_t(1) << 34) << len;
      const uint16_t big = fold(sum_words(bytes.data(), len));  // an odd last byte padded apart
      const uint16_t words = std::endian::native == std::endian::little ? uint16_t(__builtin_bswap16(big)) : big;
      EXPECT_EQ(fold(native), fold(uint64_t(words) + fold(acc))) << len << " " << acc;
    }
  }
}
