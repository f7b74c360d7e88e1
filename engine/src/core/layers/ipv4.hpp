// The IPv4 header (RFC 791) as a layer of a test frame's stack, declared once: its layout, its
// writer (which marks each field with its role), its parse step and the checks of its own
// fields. The packet's header, or a tunnel's (RFC 4213 §3.5: protocol 41 for IPv6 inside, 6rd's;
// RFC 2003 §3.1: 4 for IPv4).
#pragma once
#include <cstring>

#include "core/bytes.hpp"
#include "core/checksum.hpp"
#include "core/layers/layer.hpp"

namespace xlp {

struct Ipv4Header {
  static constexpr Layer kLayer = Layer::kIpv4;
  static constexpr const char* kName = "ipv4";  // the protocol's (hello limits.ip_headers) and the front end's
  static constexpr IpLayout kLayout{4, 20, 0x0800, kProtoIpv4, 12, 16, 4, 8, 9};
  // A UDP datagram over IPv4 may go without a checksum (RFC 768: the field 0).
  // Whether the header has a checksum of its own (IPv4's at byte 10: RFC 791), which a sender
  // that varies an address in it updates and a receiver verifies.
  static constexpr bool kHeaderChecksum = true;
  static constexpr bool kUdpChecksumOptional = true;

  // Writes the header at `at`, the packet's or a tunnel's: a tunnel's TTL is the entry
  // point's (RFC 4213 §3.3; the stream's, as sent) and its traffic class follows the inner one
  // as an IPv6 tunnel's does. Returns where the next layer starts.
  static size_t write(LayerWriter& w, size_t at, const IpHeaderValues& v) {
    const Layer layer = kLayer;
    uint8_t* h = w.f + at;
    h[0] = 0x45;  // version 4, 20-byte header
    h[1] = v.tos;
    store_be16(h + 2, uint16_t(w.end - at));
    // Don't Fragment: a translator may otherwise split a large IPv4 packet into 1280-byte
    // IPv6 fragments (RFC 7915 §4), and the frame would no longer arrive as it was sent. A
    // tunnel header leaves it clear: RFC 4213 §3.2's static tunnel MTU lets the IPv4 path
    // fragment the tunnel packet (a receiver counts such frames as fragmented).
    h[6] = v.tunnel ? 0 : 0x40;
    h[8] = v.ttl;
    h[9] = v.next;
    std::memcpy(h + kLayout.src, v.src, 4);
    std::memcpy(h + kLayout.dst, v.dst, 4);
    store_be16(h + 10, uint16_t(~fold(sum_words(h, 20))));
    // A tunnel's length and DF are its entry point's own.
    w.mark(layer, FieldRole::kFixed, at, 1);          // version, header length
    w.mark(layer, FieldRole::kTos, at + 1, 1, 0xfc);  // DSCP
    w.mark(layer, FieldRole::kEcn, at + 1, 1, 0x03);
    // total length: as IPv6's payload length
    w.mark(layer, v.tunnel ? FieldRole::kFree : FieldRole::kLength, at + 2, 2);
    w.mark(layer, FieldRole::kFree, at + 4, 2);         // identification (RFC 7915 §5.1)
    w.mark(layer, FieldRole::kFixed, at + 6, 2, 0xbf);  // reserved bit, MF, fragment offset
    w.mark(layer, v.tunnel ? FieldRole::kFree : FieldRole::kDf, at + 6, 1, 0x40);
    w.mark(layer, FieldRole::kTtl, at + kLayout.ttl, 1);
    w.mark(layer, FieldRole::kFixed, at + kLayout.next, 1);  // protocol
    w.mark(layer, FieldRole::kFree, at + 10, 2);  // header checksum: verified, not compared
    w.mark(layer, FieldRole::kSrcAddress, at + kLayout.src, 4);
    w.mark(layer, FieldRole::kDstAddress, at + kLayout.dst, 4);
    return at + kLayout.size;
  }

  // The parse step: a whole header at `off` (options included) that is no fragment (MF or an
  // offset set). Moves `off` past it and returns the protocol it carries; 0 for any other.
  [[gnu::always_inline]] static uint8_t walk(const uint8_t* p, uint32_t len, uint32_t& off) {
    if (len < off + kLayout.size || (p[off] >> 4) != 4 || (p[off] & 0x0f) < 5) return 0;
    if (is_fragment(p + off)) return 0;
    const uint8_t next = p[off + kLayout.next];
    off += (p[off] & 0x0f) * 4u;
    return next;
  }
  // Whether the packet whose header is at `h` is a fragment (MF or a fragment offset).
  [[gnu::always_inline]] static bool is_fragment(const uint8_t* h) { return (h[6] & 0x3f) | h[7]; }
  // The step of is_ip_fragment's walk: `fragment` set for a fragment, else what the header
  // carries (`off` moved past it); 0 when the frame is too short for it.
  static uint8_t walk_to_fragment(const uint8_t* p, uint32_t len, uint32_t& off, bool& fragment) {
    if (len < off + kLayout.size) return 0;
    fragment = is_fragment(p + off);
    const uint8_t next = p[off + kLayout.next];
    off += (p[off] & 0x0f) * 4u;
    return next;
  }

  // The receiver's reads of a header the parser walked: its ECN field (the TOS octet's low
  // bits), the packet's length from the header's start as its total length says, and whether
  // its own checksum verifies.
  [[gnu::always_inline]] static uint8_t ecn(const uint8_t* h) { return h[1] & 3; }
  [[gnu::always_inline]] static uint32_t packet_length(const uint8_t* h) { return load_be16(h + 2); }
  [[gnu::always_inline]] static bool header_checksum_ok(const uint8_t* h) {
    return sums_to_ones(sum_native(h, kLayout.size));
  }
};

}  // namespace xlp
