// An independent checksum reference for the tests: adds 16-bit words one at a time with an
// explicit end-around carry, the way RFC 1071 §1 describes it, instead of the engine's
// wide accumulator and final fold.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "protocol/plan.hpp"

inline uint16_t reference_checksum(const std::vector<uint8_t>& bytes) {
  uint32_t sum = 0;
  for (size_t i = 0; i < bytes.size(); i += 2) {
    uint16_t word = uint16_t(bytes[i] << 8 | (i + 1 < bytes.size() ? bytes[i + 1] : 0));
    sum += word;
    if (sum > 0xffff) sum = (sum & 0xffff) + 1;
  }
  return uint16_t(~sum & 0xffff);
}

// Verifies the UDP checksum of an Ethernet frame carrying IPv4 or IPv6 + UDP: the sum over
// pseudo header and datagram including the checksum field must be 0xffff (checksum 0 ok).
// `ip`: where the IP header that carries UDP starts (14: untagged, no tunnel).
inline bool udp_checksum_ok(const uint8_t* f, size_t len, size_t ip = 14) {
  const bool v4 = (f[ip] >> 4) == 4;
  const size_t udp = ip + (v4 ? 20 : 40);
  const size_t udp_len = size_t(f[udp + 4] << 8 | f[udp + 5]);
  if (udp + udp_len > len) return false;
  std::vector<uint8_t> pseudo;
  const size_t alen = v4 ? 4 : 16;
  const uint8_t* src = f + ip + (v4 ? 12 : 8);
  pseudo.insert(pseudo.end(), src, src + 2 * alen);  // source and destination are adjacent
  pseudo.push_back(0);
  pseudo.push_back(17);
  pseudo.push_back(uint8_t(udp_len >> 8));
  pseudo.push_back(uint8_t(udp_len));
  pseudo.insert(pseudo.end(), f + udp, f + udp + udp_len);
  if (udp_len % 2) pseudo.push_back(0);
  return reference_checksum(pseudo) == 0;
}

// Verifies the TCP checksum of an Ethernet frame carrying IPv4 or IPv6 + TCP (RFC 9293 §3.1):
// the segment's length from the IP header, the pseudo header with protocol 6.
inline bool tcp_checksum_ok(const uint8_t* f, size_t len, size_t ip = 14) {
  const bool v4 = (f[ip] >> 4) == 4;
  const size_t tcp = ip + (v4 ? 20 : 40);
  const size_t tcp_len = v4 ? size_t(f[ip + 2] << 8 | f[ip + 3]) - 20 : size_t(f[ip + 4] << 8 | f[ip + 5]);
  if (tcp + tcp_len > len || (v4 ? f[ip + 9] : f[ip + 6]) != 6) return false;
  std::vector<uint8_t> pseudo;
  const size_t alen = v4 ? 4 : 16;
  const uint8_t* src = f + ip + (v4 ? 12 : 8);
  pseudo.insert(pseudo.end(), src, src + 2 * alen);
  pseudo.push_back(0);
  pseudo.push_back(6);
  pseudo.push_back(uint8_t(tcp_len >> 8));
  pseudo.push_back(uint8_t(tcp_len));
  pseudo.insert(pseudo.end(), f + tcp, f + tcp + tcp_len);
  return reference_checksum(pseudo) == 0;
}

// A reference source NAT (an IPv4 NAT44 or an IPv6 NPTv6-like rewrite): the frame's source
// address and port replaced, TTL or hop limit decremented, both checksums computed anew from
// scratch with the reference, as a DUT that does not update them incrementally would.
inline std::vector<uint8_t> reference_snat(std::vector<uint8_t> f, const std::array<uint8_t, 16>& addr, uint16_t port,
                                    bool rewrite_destination = false) {
  const size_t ip = 14;
  const bool v4 = (f[ip] >> 4) == 4;
  const size_t alen = v4 ? 4 : 16, tcp = ip + (v4 ? 20 : 40);
  const size_t at = ip + (v4 ? 12 : 8) + (rewrite_destination ? alen : 0);
  std::copy(addr.begin(), addr.begin() + ptrdiff_t(alen), f.begin() + ptrdiff_t(at));
  f[tcp + (rewrite_destination ? 2 : 0)] = uint8_t(port >> 8);
  f[tcp + (rewrite_destination ? 3 : 1)] = uint8_t(port);
  if (v4) {
    --f[ip + 8];
    f[ip + 10] = f[ip + 11] = 0;
    const uint16_t c = reference_checksum({f.begin() + ip, f.begin() + ip + 20});
    f[ip + 10] = uint8_t(c >> 8), f[ip + 11] = uint8_t(c);
  } else {
    --f[ip + 7];
  }
  f[tcp + 16] = f[tcp + 17] = 0;
  const size_t tcp_len = f.size() - tcp;
  std::vector<uint8_t> pseudo(f.begin() + ptrdiff_t(ip + (v4 ? 12 : 8)), f.begin() + ptrdiff_t(ip + (v4 ? 12 : 8) + 2 * alen));
  pseudo.insert(pseudo.end(), {0, 6, uint8_t(tcp_len >> 8), uint8_t(tcp_len)});
  pseudo.insert(pseudo.end(), f.begin() + ptrdiff_t(tcp), f.end());
  const uint16_t c = reference_checksum(pseudo);
  f[tcp + 16] = uint8_t(c >> 8), f[tcp + 17] = uint8_t(c);
  return f;
}

// A stream of the RFC 2544 / RFC 5180 test addresses with minimum-size frames (64 bytes for
// IPv4, 84 for IPv6) and no varying fields yet.
inline xlp::StreamPlan test_stream(int v) {
  xlp::StreamPlan sp;
  sp.spec.ip_version = v;
  sp.spec.src_ip = xlp::parse_ip(v == 4 ? "198.18.0.2" : "2001:2::2", v);
  sp.spec.dst_ip = xlp::parse_ip(v == 4 ? "198.19.0.2" : "2001:2:0:8000::2", v);
  sp.spec.frame_size = v == 4 ? 64 : 84;
  return sp;
}
