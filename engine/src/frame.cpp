#include "frame.hpp"

#include <arpa/inet.h>

#include <cstdio>
#include <stdexcept>

namespace xlp {

namespace {
void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8); p[1] = uint8_t(v); }
}  // namespace

FrameTemplate build_template(const FrameSpec& spec, uint8_t stream_id, uint8_t trial_tag) {
  if (spec.ip_version != 4 && spec.ip_version != 6)
    throw std::invalid_argument("ip_version = " + std::to_string(spec.ip_version) +
                                ": must be 4 or 6");
  if (spec.l4 != kProtoUdp && spec.l4 != kProtoTcp)
    throw std::invalid_argument("l4 = " + std::to_string(spec.l4) + ": must be 17 (UDP) or 6 (TCP)");
  const bool tcp = spec.l4 == kProtoTcp;
  const uint32_t min = min_frame_size(spec.ip_version, spec.tunnel.has_value(), spec.l4, spec.tcp_flags);
  if (spec.frame_size < min || spec.frame_size > kMaxFrameSize)
    throw std::invalid_argument("frame_size = " + std::to_string(spec.frame_size) + ": must be in " +
                                std::to_string(min) + ".." + std::to_string(kMaxFrameSize) +
                                " for IPv" + std::to_string(spec.ip_version) + (tcp ? " TCP" : "") +
                                (spec.tunnel ? " in an IPv6 tunnel" : ""));
  if (spec.vlan.count > kMaxVlanTags)
    throw std::invalid_argument("vlan: at most " + std::to_string(kMaxVlanTags) + " tags");
  FrameTemplate t;
  t.bytes.assign(spec.frame_size - kFcs + spec.vlan.bytes(), 0);
  uint8_t* f = t.bytes.data();
  const size_t outer = put_ethernet(f, spec.dst_mac.data(), spec.src_mac.data(), spec.vlan,
                                    spec.ip_version == 4 && !spec.tunnel ? 0x0800 : 0x86DD);
  size_t ip = outer;
  if (spec.tunnel) {
    // RFC 2473 §3: the tunnel packet is an IPv6 header whose payload is the original packet
    // (next header 4 or 41); traffic class and flow label 0, hop limit as the inner TTL.
    f[ip] = 0x60;
    put16(f + ip + 4, uint16_t(t.bytes.size() - ip - kIpv6Header));
    f[ip + 6] = spec.ip_version == 4 ? kProtoIpv4 : kProtoIpv6;
    f[ip + 7] = 10;
    std::memcpy(f + ip + kIpv6Src, spec.tunnel->src.data(), 16);
    std::memcpy(f + ip + kIpv6Dst, spec.tunnel->dst.data(), 16);
    ip += kIpv6Header;
  }
  const size_t iph = ip_header_size(spec.ip_version);
  const uint16_t l4_len = uint16_t(t.bytes.size() - ip - iph);
  const size_t addr_len = spec.ip_version == 4 ? 4 : 16;
  const uint8_t* src = spec.src_ip.data();
  const uint8_t* dst = spec.dst_ip.data();
  if (spec.ip_version == 4) {
    f[ip] = 0x45;                            // version 4, 20-byte header
    put16(f + ip + 2, uint16_t(iph + l4_len));
    // Don't Fragment: a translator may otherwise split a large IPv4 packet into 1280-byte
    // IPv6 fragments (RFC 7915 §4), and the frame would no longer arrive as it was sent.
    f[ip + 6] = 0x40;
    f[ip + 8] = 10;                          // TTL 10 (RFC 2544 App. C.2.6.4)
    f[ip + 9] = spec.l4;
    std::memcpy(f + ip + 12, src, 4);
    std::memcpy(f + ip + 16, dst, 4);
    t.ipv4_header_sum = fold(sum_words(f + ip, 20));
    put16(f + ip + 10, uint16_t(~t.ipv4_header_sum));
  } else {
    f[ip] = 0x60;
    put16(f + ip + 4, l4_len);
    f[ip + 6] = spec.l4;                     // next header
    f[ip + 7] = 10;                          // hop limit, as the IPv4 TTL
    std::memcpy(f + ip + kIpv6Src, src, 16);
    std::memcpy(f + ip + kIpv6Dst, dst, 16);
  }
  const size_t l4 = ip + iph;
  put16(f + l4, spec.src_port);
  put16(f + l4 + 2, spec.dst_port);
  size_t tag_at, checksum_at;
  if (tcp) {
    // Sequence and acknowledgement numbers stay zero here: the segment builder (tcp.hpp)
    // writes them per segment. No urgent pointer.
    const size_t header = tcp_header_size(spec.tcp_flags);
    f[l4 + 12] = uint8_t(header / 4 << 4);   // data offset
    f[l4 + 13] = spec.tcp_flags;
    put16(f + l4 + 14, kTcpWindow);
    f[l4 + kTcpHeader] = kTagOptionKind;
    f[l4 + kTcpHeader + 1] = uint8_t(kTagOption);
    if (spec.tcp_flags & kTcpSyn) {
      uint8_t* ws = f + l4 + kTcpHeader + kTagOption;
      ws[0] = 1;                             // NOP
      ws[1] = 3;                             // window scale: kind 3, length 3, shift
      ws[2] = 3;
      ws[3] = kWindowShift;
    }
    tag_at = l4 + kTcpHeader + 2;
    checksum_at = l4 + 16;
    for (size_t i = l4 + header; i < t.bytes.size(); ++i) f[i] = uint8_t(i - l4 - header);
  } else {
    put16(f + l4 + 4, l4_len);
    tag_at = l4 + kUdpHeader;
    checksum_at = l4 + 6;
    for (size_t i = tag_at + kTagSize; i < t.bytes.size(); ++i) f[i] = uint8_t(i - tag_at - kTagSize);
  }
  uint8_t* tag = f + tag_at;
  std::memcpy(tag, kMagic, sizeof kMagic);
  tag[kTagStream] = stream_id;
  tag[kTagTrial] = trial_tag;
  // Sequence number and timestamp stay zero in the template; stamp_frame fills them.

  // Pseudo header (RFC 768, RFC 9293 §3.1, RFC 8200 §8.1) + UDP or TCP header and payload.
  uint64_t sum = sum_words(src, addr_len);
  sum = sum_words(dst, addr_len, sum);
  sum += spec.l4 + l4_len;
  sum = sum_words(f + l4, l4_len, sum);
  t.outer_offset = uint16_t(outer);
  t.ip_offset = uint16_t(ip);
  t.l4_offset = uint16_t(l4);
  t.checksum_offset = uint16_t(checksum_at);
  t.tag_offset = uint16_t(tag_at);
  t.base_sum = fold(sum);
  t.l4 = spec.l4;
  put16(f + checksum_at, transport_checksum_field(sum, spec.l4));
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
