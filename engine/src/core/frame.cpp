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

// The layer writers besides the IP headers' (core/layers/): each writes its header at `at` in
// the frame being built (the template's bytes, zero-filled), records its fields
// (FrameTemplate::fields) and returns where the next layer starts. The lengths they write follow
// from the frame's size (`end`: its last byte + 1).
struct Writer : LayerWriter {
  size_t ethernet(const FrameSpec& spec) {
    const int outermost = spec.tunnels.empty() ? spec.ip_version : spec.tunnels.begin()->version;
    return put_ethernet(f, spec.dst_mac.data(), spec.src_mac.data(), spec.vlan, ip_layout(outermost).ethertype);
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
  if (!is_ip_version(spec.ip_version))
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
    if (!is_ip_version(tunnel.version))
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
  Writer w{{t.bytes.data(), t.bytes.size(), t.fields}};
  // The layers in order: each starts where the one before it ended; the IP headers, tunnels'
  // first, each carrying the next.
  size_t at = 0;
  uint8_t tunnels = 0;
  for (const Layer layer : layers_of(spec)) {
    switch (layer) {
      case Layer::kEthernet: at = w.ethernet(spec); break;
      default: {  // an IP header of one of IpKinds: a tunnel's (the first ones) or the packet's
        const bool tunnel = tunnels < spec.tunnels.count;
        const Tunnel* outer = tunnel ? &spec.tunnels.items[tunnels++] : nullptr;
        const int carried = tunnels < spec.tunnels.count ? spec.tunnels.items[tunnels].version : spec.ip_version;
        const uint8_t next = tunnel ? ip_layout(carried).protocol : spec.l4;
        const uint8_t* src = tunnel ? outer->src.data() : spec.src_ip.data();
        const uint8_t* dst = tunnel ? outer->dst.data() : spec.dst_ip.data();
        if (tunnel) t.ip.tunnel_at = uint16_t(at);
        t.ip.at[t.ip.count++] = t.ip_offset = uint16_t(at);
        w.ip_header = uint8_t(t.ip.count - 1);
        const int version = tunnel ? outer->version : spec.ip_version;
        at = t.l4_offset = uint16_t(
            write_ip_header(w, version, at, IpHeaderValues{src, dst, next, spec.tos, spec.ttl, spec.flow_label, tunnel}));
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
  // The header whose checksum a varying address changes: the packet's if its kind has one, else
  // the innermost tunnel's if its kind has one (a 6rd CE's IPv4 address).
  const bool tunnel_checksum = !spec.tunnels.empty() && ip_has_header_checksum(spec.tunnels.innermost().version);
  if (ip_has_header_checksum(spec.ip_version) || tunnel_checksum) {  // its sum, the checksum field taken as zero
    t.ipv4_checksum_at = uint16_t((ip_has_header_checksum(spec.ip_version) ? t.ip_offset : t.ip.tunnel()) + 10);
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
