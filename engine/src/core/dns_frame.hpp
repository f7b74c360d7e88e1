// DNS messages in frames (docs/dns.md): where a UDP frame's DNS message lies, and the
// authoritative side's answer written over a query frame, headers and all. Pure: no DPDK.
#pragma once
#include <cstdint>
#include <optional>

#include "core/dns.hpp"
#include "core/frame.hpp"

namespace xlp {

constexpr uint16_t kDnsPort = 53;

// The DNS message of a UDP frame whose headers parse_headers walked (`hdrs`, l4 UDP, no tunnel):
// where it starts, its length as the UDP header gives it, and the datagram's ports. None when
// the UDP length does not fit the frame's `len` bytes.
struct DnsMessage {
  uint32_t offset = 0, len = 0;
  uint16_t src_port = 0, dst_port = 0;
};
std::optional<DnsMessage> dns_message(const uint8_t* frame, uint32_t len, const TestTag& hdrs);

// Whether a UDP frame's checksums verify (`hdrs` from parse_headers, no tunnel; `msg` its DNS
// message, from dns_message): its IPv4 header's, and its UDP datagram's (0, no checksum, allowed
// over IPv4 only: RFC 768, RFC 8200 §8.1). A DNS reply is the DUT's to write: the client checks
// it as the header checks do a test frame.
bool datagram_checksums_ok(const uint8_t* frame, const TestTag& hdrs, const DnsMessage& msg);

// Answers the query in the frame in place (dns::answer_in_place), with `room` bytes for the
// frame: the Ethernet addresses turned round (the source `own_mac`; the VLAN tags stay), the IP
// addresses and UDP ports swapped, a fresh TTL or hop limit (64), the lengths and checksums
// written. Returns the answer frame's length, or 0 for a query it does not answer (the
// message is no query for the zone that answer_in_place answers, an IPv6 header with
// extension headers, a tunnel).
uint32_t answer_query_frame(uint8_t* frame, uint32_t len, uint32_t room, const TestTag& hdrs,
                            const uint8_t* own_mac, const dns::Zone& zone, const dns::RecordRule& rule);

}  // namespace xlp
