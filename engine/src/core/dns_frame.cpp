#include "core/dns_frame.hpp"

#include <algorithm>
#include <cstring>

#include "core/bytes.hpp"
#include "core/checksum.hpp"

namespace xlp {

namespace {

// The sum of a UDP datagram of `udp_len` bytes with its pseudo header (RFC 768), in the machine's
// byte order (sum_native: RFC 1071 §2 (B)'s byte-order independence), as a receiver verifies
// it and a sender complements it.
uint64_t datagram_sum(const uint8_t* ip, bool ipv4, const uint8_t* udp, uint32_t udp_len) {
  const uint8_t tail[4] = {0, kProtoUdp, uint8_t(udp_len >> 8), uint8_t(udp_len)};
  uint32_t rest;
  std::memcpy(&rest, tail, 4);
  const uint64_t pseudo = ipv4 ? sum_native(ip + 12, 8, rest) : sum_native(ip + kIpv6Src, 32, rest);
  return sum_native(udp, udp_len, pseudo);
}

// Writes the checksum field for a sum in the machine's byte order (its complement, written in
// that order is the right bytes on the wire); UDP sends a computed 0 as 0xffff (RFC 768).
void store_checksum(uint8_t* field, uint64_t native_sum, bool udp) {
  uint16_t c = uint16_t(~fold(native_sum));
  if (udp && c == 0) c = 0xffff;
  std::memcpy(field, &c, 2);
}

}  // namespace

std::optional<DnsMessage> dns_message(const uint8_t* frame, uint32_t len, const TestTag& hdrs) {
  const uint8_t* udp = frame + hdrs.l4_offset;
  if (hdrs.l4 != kProtoUdp || len < hdrs.l4_offset + kUdpHeader) return std::nullopt;
  const uint32_t udp_len = load_be16(udp + 4);
  if (udp_len < kUdpHeader || hdrs.l4_offset + udp_len > len) return std::nullopt;
  return DnsMessage{uint32_t(hdrs.l4_offset + kUdpHeader), uint32_t(udp_len - kUdpHeader), load_be16(udp),
                    load_be16(udp + 2)};
}

bool datagram_checksums_ok(const uint8_t* frame, const TestTag& hdrs, const DnsMessage& msg) {
  const uint8_t* ip = frame + hdrs.l3_offset;
  const uint8_t* udp = frame + hdrs.l4_offset;
  const uint32_t udp_len = msg.len + uint32_t(kUdpHeader);
  const bool ipv4 = ip[0] >> 4 == 4;
  if (ipv4 && !sums_to_ones(sum_native(ip, (ip[0] & 0x0f) * 4u))) return false;
  if (udp[6] == 0 && udp[7] == 0) return ipv4;
  return sums_to_ones(datagram_sum(ip, ipv4, udp, udp_len));
}

uint32_t answer_query_frame(uint8_t* frame, uint32_t len, uint32_t room, const TestTag& hdrs, const uint8_t* own_mac,
                            const dns::Zone& zone, const dns::RecordRule& rule) {
  const std::optional<DnsMessage> msg = dns_message(frame, len, hdrs);
  if (!msg || hdrs.ip.tunnelled()) return 0;
  uint8_t* ip = frame + hdrs.l3_offset;
  const bool ipv4 = ip[0] >> 4 == 4;
  if (!ipv4 && hdrs.l4_offset != hdrs.l3_offset + kIpv6Header) return 0;
  // A classic query's answer fits 512 bytes (RFC 1035 §4.2.1), one with EDNS(0) the payload
  // size the tester announces; the answers written here are far smaller than either.
  const size_t cap = std::min<size_t>(room - msg->offset, dns::kEdnsPayload);
  const size_t answer = dns::answer_in_place(frame + msg->offset, msg->len, cap, zone, rule);
  if (answer == 0) return 0;

  // Ethernet: back to the querier, from this port.
  std::memcpy(frame, frame + 6, 6);
  std::memcpy(frame + 6, own_mac, 6);
  const uint32_t udp_len = uint32_t(kUdpHeader + answer);
  uint8_t* udp = frame + hdrs.l4_offset;
  if (ipv4) {
    uint8_t addr[4];
    std::memcpy(addr, ip + 12, 4);
    std::memcpy(ip + 12, ip + 16, 4);
    std::memcpy(ip + 16, addr, 4);
    const uint32_t header = (ip[0] & 0x0f) * 4u;
    store_be16(ip + 2, uint16_t(header + udp_len));
    store_be16(ip + 4, 0);       // identification: an atomic datagram (RFC 6864 §4.1)
    store_be16(ip + 6, 0x4000);  // DF
    ip[8] = 64;
    store_be16(ip + 10, 0);
    store_checksum(ip + 10, sum_native(ip, header), false);
  } else {
    uint8_t addr[16];
    std::memcpy(addr, ip + kIpv6Src, 16);
    std::memcpy(ip + kIpv6Src, ip + kIpv6Src + 16, 16);
    std::memcpy(ip + kIpv6Src + 16, addr, 16);
    store_be16(ip + 4, uint16_t(udp_len));
    ip[7] = 64;
  }
  const uint16_t client_port = msg->src_port;
  store_be16(udp, msg->dst_port);
  store_be16(udp + 2, client_port);
  store_be16(udp + 4, uint16_t(udp_len));
  store_be16(udp + 6, 0);
  store_checksum(udp + 6, datagram_sum(ip, ipv4, udp, udp_len), true);
  return hdrs.l4_offset + udp_len;
}

}  // namespace xlp
