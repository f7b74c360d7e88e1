#include "core/frame.hpp"

#include <arpa/inet.h>

#include <cstdio>
#include <stdexcept>

namespace xlp {

namespace {

// " in an IPv6 tunnel", " in an IPv4 tunnel in an IPv6 tunnel", ... (innermost first), for messages.
std::string tunnels_named(const TunnelStack& tunnels) {
  std::string out;
  for (size_t i = tunnels.count; i-- > 0;) out += " in an IPv" + std::to_string(tunnels.items[i].version) + " tunnel";
  return out;
}

// The layer writers: each writes its header at `at` in the frame being built (the template's
// bytes, zero-filled), records its fields (FrameTemplate::fields) and returns where the next
// layer starts. The lengths they write follow from the frame's size (`end`: its last byte + 1).
struct Writer {
  uint8_t* f;
  size_t end;
  std::vector<FieldMark>& marks;
  uint8_t ip_header = 0;  // the IP header being written (FieldMark::ip_header)
  void mark(Layer layer, FieldRole role, size_t at, size_t size, uint8_t first = 0xff, uint8_t last = 0xff) {
    marks.push_back({layer, ip_header, role, uint16_t(at), uint8_t(size), first, last});
  }

  size_t ethernet(const FrameSpec& spec) {
    const int outermost = spec.tunnels.empty() ? spec.ip_version : spec.tunnels.begin()->version;
    return put_ethernet(f, spec.dst_mac.data(), spec.src_mac.data(), spec.vlan, ip_layout(outermost).ethertype);
  }

  // An IPv6 header: also RFC 2473 §3's tunnel header, whose payload is the original packet
  // (next header 4 or 41), with the inner packet's traffic class and hop limit (RFC 2983's
  // uniform model) and flow label 0. `tunnel`: which of the two it is.
  size_t ipv6(bool tunnel, size_t at, uint8_t next, const uint8_t* src, const uint8_t* dst, const FrameSpec& spec) {
    const Layer layer = Layer::kIpv6;
    uint8_t* h = f + at;
    const uint32_t label = tunnel ? 0 : spec.flow_label & 0xfffff;
    h[0] = uint8_t(0x60 | spec.tos >> 4);
    h[1] = uint8_t(spec.tos << 4 | label >> 16);
    h[2] = uint8_t(label >> 8);
    h[3] = uint8_t(label);
    store_be16(h + 4, uint16_t(end - at - kIpv6Header));
    h[6] = next;
    h[7] = spec.ttl;
    std::memcpy(h + kIpv6Src, src, 16);
    std::memcpy(h + kIpv6Dst, dst, 16);
    // A tunnel entry point may set the flow label (RFC 6438) and add an encapsulation limit
    // option (RFC 2473 §4.1.1: another next header, a longer payload): its own choices.
    const FieldRole own = tunnel ? FieldRole::kFree : FieldRole::kFixed;
    mark(layer, FieldRole::kFixed, at, 1, 0xf0);          // version
    mark(layer, FieldRole::kTos, at, 2, 0x0f, 0xc0);      // traffic class: DSCP
    mark(layer, FieldRole::kEcn, at + 1, 1, 0x30);        // ... and ECN
    // The flow label: a forwarding node may set one where none came (RFC 6437 §3), so it is
    // compared only where the rx expectation names it.
    mark(layer, tunnel ? FieldRole::kFree : FieldRole::kFlowLabel, at + 1, 3, 0x0f);
    // The payload length (kLength: compared for UDP, checked against the frame's length for
    // TCP, whose header a DUT may lengthen by an option: HeaderCheck); a tunnel's, its own.
    mark(layer, tunnel ? FieldRole::kFree : FieldRole::kLength, at + 4, 2);
    mark(layer, own, at + 6, 1);                          // next header
    mark(layer, FieldRole::kTtl, at + 7, 1);
    mark(layer, FieldRole::kSrcAddress, at + kIpv6Src, 16);
    mark(layer, FieldRole::kDstAddress, at + kIpv6Dst, 16);
    return at + kIpv6Header;
  }

  // An IPv4 header: also a tunnel header (RFC 4213 §3.5: protocol 41 for IPv6 inside; RFC 2003
  // §3.1: 4 for IPv4), whose TTL is the entry point's (RFC 4213 §3.3; the stream's, as sent)
  // and whose traffic class follows the inner one as an IPv6 tunnel's does. `tunnel`: which of
  // the two it is.
  size_t ipv4(bool tunnel, size_t at, uint8_t next, const uint8_t* src, const uint8_t* dst, const FrameSpec& spec) {
    const Layer layer = Layer::kIpv4;
    uint8_t* h = f + at;
    h[0] = 0x45;                             // version 4, 20-byte header
    h[1] = spec.tos;
    store_be16(h + 2, uint16_t(end - at));
    // Don't Fragment: a translator may otherwise split a large IPv4 packet into 1280-byte
    // IPv6 fragments (RFC 7915 §4), and the frame would no longer arrive as it was sent. A
    // tunnel header leaves it clear: RFC 4213 §3.2's static tunnel MTU lets the IPv4 path
    // fragment the tunnel packet (a receiver counts such frames as fragmented).
    h[6] = tunnel ? 0 : 0x40;
    h[8] = spec.ttl;
    h[9] = next;
    std::memcpy(h + 12, src, 4);
    std::memcpy(h + 16, dst, 4);
    store_be16(h + 10, uint16_t(~fold(sum_words(h, 20))));
    // A tunnel's length and DF are its entry point's own.
    mark(layer, FieldRole::kFixed, at, 1);         // version, header length
    mark(layer, FieldRole::kTos, at + 1, 1, 0xfc);  // DSCP
    mark(layer, FieldRole::kEcn, at + 1, 1, 0x03);
    // total length: as IPv6's payload length
    mark(layer, tunnel ? FieldRole::kFree : FieldRole::kLength, at + 2, 2);
    mark(layer, FieldRole::kFree, at + 4, 2);      // identification (RFC 7915 §5.1)
    mark(layer, FieldRole::kFixed, at + 6, 2, 0xbf);  // reserved bit, MF, fragment offset
    mark(layer, tunnel ? FieldRole::kFree : FieldRole::kDf, at + 6, 1, 0x40);
    mark(layer, FieldRole::kTtl, at + 8, 1);
    mark(layer, FieldRole::kFixed, at + 9, 1);     // protocol
    mark(layer, FieldRole::kFree, at + 10, 2);     // header checksum: verified, not compared
    mark(layer, FieldRole::kSrcAddress, at + 12, 4);
    mark(layer, FieldRole::kDstAddress, at + 16, 4);
    return at + 20;
  }

  void ports(Layer layer, size_t at, const FrameSpec& spec) {
    store_be16(f + at, spec.src_port);
    store_be16(f + at + 2, spec.dst_port);
    mark(layer, FieldRole::kSrcPort, at, 2);
    mark(layer, FieldRole::kDstPort, at + 2, 2);
  }

  // UDP (RFC 768); the checksum is written once the tag and payload are in (finish).
  size_t udp(size_t at, const FrameSpec& spec) {
    ports(Layer::kUdp, at, spec);
    store_be16(f + at + 4, uint16_t(end - at));
    mark(Layer::kUdp, FieldRole::kFixed, at + 4, 2);      // length
    mark(Layer::kUdp, FieldRole::kFree, at + 6, 2);       // checksum: verified, not compared
    return at + kUdpHeader;
  }

  // TCP (RFC 9293 §3.1) with the tag option first, and window scale and MSS in a SYN or SYN-ACK.
  // Sequence and acknowledgement numbers stay zero here: the segment builder (tcp.hpp) writes
  // them per segment. No urgent pointer.
  size_t tcp(size_t at, const FrameSpec& spec) {
    uint8_t* h = f + at;
    ports(Layer::kTcp, at, spec);
    const size_t header = tcp_header_size(spec.tcp_flags);
    h[12] = uint8_t(header / 4 << 4);        // data offset
    h[13] = spec.tcp_flags;
    store_be16(h + 14, kTcpWindow);
    h[kTcpHeader] = kTagOptionKind;
    h[kTcpHeader + 1] = uint8_t(kTagOption);
    if (spec.tcp_flags & kTcpSyn) {
      uint8_t* ws = h + kTcpHeader + kTagOption;
      ws[0] = 1;                             // NOP
      ws[1] = 3;                             // window scale: kind 3, length 3, shift
      ws[2] = 3;
      ws[3] = kWindowShift;
      uint8_t* mss = ws + kWindowScaleOption;
      mss[0] = kMssOptionKind;               // MSS: kind 2, length 4, the value
      mss[1] = uint8_t(kMssOption);
      store_be16(mss + 2, spec.tcp_mss ? spec.tcp_mss : ethernet_mss(spec.ip_version, spec.tunnels));
    }
    mark(Layer::kTcp, FieldRole::kFree, at + 4, 8);       // sequence and acknowledgement numbers
    // The data offset, and with it where the options lie, is the DUT's to change: a gateway that
    // clamps the MSS inserts an option in front of the others when a SYN has none (Linux's
    // xt_TCPMSS). The parser finds the tag option among them.
    mark(Layer::kTcp, FieldRole::kFree, at + 12, 1);
    mark(Layer::kTcp, FieldRole::kFixed, at + 13, 1);     // flags
    mark(Layer::kTcp, FieldRole::kFree, at + 14, 4);      // window, checksum
    mark(Layer::kTcp, FieldRole::kFixed, at + 18, 2);     // urgent pointer
    // Its payload: padding as UDP's (docs/protocol.md "Test frame payload").
    for (size_t i = at + header; i < end; ++i) f[i] = uint8_t(i - at - header);
    return at + kTcpHeader + 2;
  }

  // A DNS query of the stream's first name, ID 0, what stamp_dns writes into its name zero (not
  // '0': stamp_dns adds what it writes to the checksum), in place of the tag: the DNS verdict's,
  // not compared by the header check (a resolver's reply is another message).
  void dns(size_t at, const FrameSpec::DnsQuery& q, uint8_t stream_id) {
    dns::write_query(f + at, dns::TestName{q.nonce, stream_id, 0}, *q.zone, 0, q.qtype, q.edns);
    const dns::NameStamp stamp = q.zone->stamp({});
    std::memset(f + at + dns::kHeader + stamp.at, 0, 8 * size_t(stamp.words));
    for (size_t o = at; o < end; o += 255) mark(Layer::kDns, FieldRole::kFree, o, std::min<size_t>(end - o, 255));
  }

  // The test tag (magic, stream id, trial tag; the CE, sequence number and timestamp stay zero:
  // the CE generator, a Responder's state table and stamp_frame fill them), and after it a UDP
  // datagram's padding.
  void tag(size_t at, uint8_t l4, uint8_t stream_id, uint8_t trial_tag) {
    uint8_t* t = f + at;
    std::memcpy(t, kMagic, sizeof kMagic);
    t[kTagStream] = stream_id;
    t[kTagTrial] = trial_tag;
    mark(Layer::kTag, FieldRole::kFree, at, kTagSize);    // the parser's and the tracker's
    if (l4 == kProtoUdp)
      for (size_t i = at + kTagSize; i < end; ++i) f[i] = uint8_t(i - at - kTagSize);
  }
};

}  // namespace

FrameTemplate build_template(const FrameSpec& spec, uint8_t stream_id, uint8_t trial_tag) {
  if (spec.ip_version != 4 && spec.ip_version != 6)
    throw std::invalid_argument("ip_version = " + std::to_string(spec.ip_version) +
                                ": must be 4 or 6");
  if (spec.l4 != kProtoUdp && spec.l4 != kProtoTcp)
    throw std::invalid_argument("l4 = " + std::to_string(spec.l4) + ": must be 17 (UDP) or 6 (TCP)");
  const bool tcp = spec.l4 == kProtoTcp;
  if (spec.dns) {
    if (tcp || !spec.dns->zone) throw std::invalid_argument("dns: a query over UDP, in a zone");
    if (spec.frame_size != dns_frame_size(spec))
      throw std::invalid_argument("frame_size = " + std::to_string(spec.frame_size) + ": a DNS query's frame is " +
                                  std::to_string(dns_frame_size(spec)) + " bytes (its name's zone and EDNS(0))");
  }
  for (const Tunnel& tunnel : spec.tunnels)
    if (tunnel.version != 4 && tunnel.version != 6)
      throw std::invalid_argument("tunnel.version = " + std::to_string(tunnel.version) + ": must be 4 or 6");
  const uint32_t min = min_frame_size(spec.ip_version, spec.tunnels, spec.l4, spec.tcp_flags);
  if (spec.frame_size < min || spec.frame_size > kMaxFrameSize)
    throw std::invalid_argument("frame_size = " + std::to_string(spec.frame_size) + ": must be in " +
                                std::to_string(min) + ".." + std::to_string(kMaxFrameSize) +
                                " for IPv" + std::to_string(spec.ip_version) + (tcp ? " TCP" : "") +
                                tunnels_named(spec.tunnels));
  if (spec.vlan.count > kMaxVlanTags)
    throw std::invalid_argument("vlan: at most " + std::to_string(kMaxVlanTags) + " tags");
  FrameTemplate t;
  t.bytes.assign(spec.frame_size - kFcs + spec.vlan.bytes(), 0);
  Writer w{t.bytes.data(), t.bytes.size(), t.fields};
  // The layers in order: each starts where the one before it ended; the IP headers, tunnels'
  // first, each carrying the next.
  size_t at = 0;
  uint8_t tunnels = 0;
  for (const Layer layer : layers_of(spec)) {
    switch (layer) {
      case Layer::kEthernet: at = w.ethernet(spec); break;
      case Layer::kIpv4:
      case Layer::kIpv6: {
        const bool tunnel = tunnels < spec.tunnels.count;
        const Tunnel* outer = tunnel ? &spec.tunnels.items[tunnels++] : nullptr;
        const int carried = tunnels < spec.tunnels.count ? spec.tunnels.items[tunnels].version : spec.ip_version;
        const uint8_t next = tunnel ? ip_layout(carried).protocol : spec.l4;
        const uint8_t* src = tunnel ? outer->src.data() : spec.src_ip.data();
        const uint8_t* dst = tunnel ? outer->dst.data() : spec.dst_ip.data();
        t.ip.at[t.ip.count++] = t.ip_offset = uint16_t(at);
        w.ip_header = uint8_t(t.ip.count - 1);
        at = t.l4_offset = uint16_t(layer == Layer::kIpv4 ? w.ipv4(tunnel, at, next, src, dst, spec)
                                                          : w.ipv6(tunnel, at, next, src, dst, spec));
        w.ip_header = 0;
        break;
      }
      case Layer::kUdp: at = t.tag_offset = uint16_t(w.udp(at, spec)); break;
      case Layer::kTcp: at = t.tag_offset = uint16_t(w.tcp(at, spec)); break;
      case Layer::kTag: w.tag(at, spec.l4, stream_id, trial_tag); break;
      case Layer::kDns:
        t.dns_offset = t.tag_offset;
        t.tag_offset = 0;
        w.dns(at, *spec.dns, stream_id);
        break;
    }
  }
  uint8_t* f = t.bytes.data();
  t.checksum_offset = uint16_t(t.l4_offset + (tcp ? 16 : 6));
  const bool ipv4_tunnel = !spec.tunnels.empty() && spec.tunnels.innermost().version == 4;
  if (spec.ip_version == 4 || ipv4_tunnel) {  // the header's sum with the checksum field taken as zero
    t.ipv4_checksum_at = uint16_t((spec.ip_version == 4 ? t.ip_offset : t.ip.tunnel()) + 10);
    const uint16_t field = uint16_t(f[t.ipv4_checksum_at] << 8 | f[t.ipv4_checksum_at + 1]);
    t.ipv4_header_sum = uint16_t(~field);
  }
  // Pseudo header (RFC 768, RFC 9293 §3.1, RFC 8200 §8.1) + UDP or TCP header and payload.
  const size_t addr_len = spec.ip_version == 4 ? 4 : 16;
  const uint16_t l4_len = uint16_t(t.bytes.size() - t.l4_offset);
  uint64_t sum = sum_words(spec.src_ip.data(), addr_len);
  sum = sum_words(spec.dst_ip.data(), addr_len, sum);
  sum += spec.l4 + l4_len;
  sum = sum_words(f + t.l4_offset, l4_len, sum);
  t.base_sum = fold(sum);
  t.l4 = spec.l4;
  store_be16(f + t.checksum_offset, transport_checksum_field(sum, spec.l4));
  t.head = t.size();
  return t;
}

std::array<uint8_t, 6> parse_mac(const std::string& text) {
  std::array<uint8_t, 6> mac{};
  unsigned v[6];
  char extra;
  if (std::sscanf(text.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4],
                  &v[5], &extra) != 6)
    throw std::invalid_argument("'" + text + "' is not a MAC address (xx:xx:xx:xx:xx:xx)");
  for (int i = 0; i < 6; ++i) mac[i] = uint8_t(v[i]);
  return mac;
}

std::string format_mac(const uint8_t* mac) {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
                mac[4], mac[5]);
  return buf;
}

std::array<uint8_t, 16> parse_ip(const std::string& text, int ip_version) {
  std::array<uint8_t, 16> addr{};
  if (inet_pton(ip_version == 4 ? AF_INET : AF_INET6, text.c_str(), addr.data()) != 1)
    throw std::invalid_argument("'" + text + "' is not an IPv" + std::to_string(ip_version) +
                                " address");
  return addr;
}

}  // namespace xlp
