// The IPv6 header (RFC 8200) as a layer of a test frame's stack, declared once: its layout, its
// writer (which marks each field with its role), its parse step and the checks of its own
// fields. The packet's header, or RFC 2473 §3's tunnel header, whose payload is the original
// packet (next header 4 or 41: DS-Lite, lw4o6, MAP-E).
#pragma once
#include <cstring>

#include "core/bytes.hpp"
#include "core/layers/layer.hpp"

namespace xlp {

constexpr size_t kIpv6Header = 40;
constexpr size_t kIpv6Src = 8, kIpv6Dst = 24;  // the addresses' offsets in an IPv6 header

struct Ipv6Header {
  static constexpr Layer kLayer = Layer::kIpv6;
  static constexpr const char* kName = "ipv6";  // the protocol's (hello limits.ip_headers) and the front end's
  static constexpr IpLayout kLayout{6, uint8_t(kIpv6Header), 0x86DD, kProtoIpv6, uint8_t(kIpv6Src),
                                    uint8_t(kIpv6Dst), 16, 7, 6};
  // A UDP checksum is mandatory over IPv6 (RFC 8200 §8.1).
  // Whether the header has a checksum of its own (IPv4's at byte 10: RFC 791), which a sender
  // that varies an address in it updates and a receiver verifies.
  static constexpr bool kHeaderChecksum = false;
  static constexpr bool kUdpChecksumOptional = false;

  // Writes the header at `at`, the packet's (its flow label the stream's) or a tunnel's (the
  // inner packet's traffic class and hop limit, RFC 2983's uniform model, and flow label 0).
  // Returns where the next layer starts.
  static size_t write(LayerWriter& w, size_t at, const IpHeaderValues& v) {
    const Layer layer = kLayer;
    uint8_t* h = w.f + at;
    const uint32_t label = v.tunnel ? 0 : v.flow_label & 0xfffff;
    h[0] = uint8_t(0x60 | v.tos >> 4);
    h[1] = uint8_t(v.tos << 4 | label >> 16);
    h[2] = uint8_t(label >> 8);
    h[3] = uint8_t(label);
    store_be16(h + 4, uint16_t(w.end - at - kIpv6Header));
    h[kLayout.next] = v.next;
    h[kLayout.ttl] = v.ttl;
    std::memcpy(h + kIpv6Src, v.src, 16);
    std::memcpy(h + kIpv6Dst, v.dst, 16);
    // A tunnel entry point may set the flow label (RFC 6438) and add an encapsulation limit
    // option (RFC 2473 §4.1.1: another next header, a longer payload): its own choices.
    const FieldRole own = v.tunnel ? FieldRole::kFree : FieldRole::kFixed;
    w.mark(layer, FieldRole::kFixed, at, 1, 0xf0);      // version
    w.mark(layer, FieldRole::kTos, at, 2, 0x0f, 0xc0);  // traffic class: DSCP
    w.mark(layer, FieldRole::kEcn, at + 1, 1, 0x30);    // ... and ECN
    // The flow label: a forwarding node may set one where none came (RFC 6437 §3), so it is
    // compared only where the rx expectation names it.
    w.mark(layer, v.tunnel ? FieldRole::kFree : FieldRole::kFlowLabel, at + 1, 3, 0x0f);
    // The payload length (kLength: compared for UDP, checked against the frame's length for
    // TCP, whose header a DUT may lengthen by an option: HeaderCheck); a tunnel's, its own.
    w.mark(layer, v.tunnel ? FieldRole::kFree : FieldRole::kLength, at + 4, 2);
    w.mark(layer, own, at + kLayout.next, 1);  // next header
    w.mark(layer, FieldRole::kTtl, at + kLayout.ttl, 1);
    w.mark(layer, FieldRole::kSrcAddress, at + kIpv6Src, 16);
    w.mark(layer, FieldRole::kDstAddress, at + kIpv6Dst, 16);
    return at + kIpv6Header;
  }

  // The parse step: a whole header at `off` without extension headers but a destination
  // options header, which an RFC 2473 tunnel entry point may add for its encapsulation limit
  // (§5.1). Moves `off` past them and returns the protocol they carry; 0 for any other.
  [[gnu::always_inline]] static uint8_t walk(const uint8_t* p, uint32_t len, uint32_t& off) {
    if (len < off + kIpv6Header || (p[off] >> 4) != 6) return 0;
    uint8_t next = p[off + kLayout.next];
    off += kIpv6Header;
    if (next == kProtoDestOptions) {
      if (len < off + 8) return 0;
      next = p[off];
      off += (p[off + 1] + 1u) * 8u;
    }
    return next;
  }
  // The step of is_ip_fragment's walk: `fragment` set for a fragment (a fragment header
  // first, after an encapsulation limit), else what the header carries (`off` moved past it);
  // 0 when the frame is too short for it.
  static uint8_t walk_to_fragment(const uint8_t* p, uint32_t len, uint32_t& off, bool& fragment) {
    if (len < off + kIpv6Header) return 0;
    uint8_t next = p[off + kLayout.next];
    off += kIpv6Header;
    if (next == kProtoDestOptions && len >= off + 8) {  // an encapsulation limit (RFC 2473 §5.1)
      next = p[off];
      off += (p[off + 1] + 1u) * 8u;
    }
    fragment = next == kProtoFragment;
    return next;
  }

  // The receiver's reads of a header the parser walked: its ECN field (the traffic class's
  // low bits), the packet's length from the header's start as its payload length says, and
  // its own checksum (none).
  [[gnu::always_inline]] static uint8_t ecn(const uint8_t* h) { return h[1] >> 4 & 3; }
  [[gnu::always_inline]] static uint32_t packet_length(const uint8_t* h) { return load_be16(h + 4) + kIpv6Header; }
  [[gnu::always_inline]] static bool header_checksum_ok(const uint8_t*) { return true; }
};

}  // namespace xlp
