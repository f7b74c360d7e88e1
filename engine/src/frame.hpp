// Test frames: building templates once per trial, stamping the per-frame fields, and
// recognising test frames on receive. Layout of the tag: docs/protocol.md.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "checksum.hpp"

struct rte_mbuf;

namespace xlp {

// The test tag at the start of the UDP payload (docs/protocol.md, "Test frame payload"; the
// hello reply reports this layout as limits.tag).
constexpr uint8_t kMagic[6] = {'X', 'L', 'A', 'T', 'P', 'F'};
constexpr size_t kTagStream = 6;       // stream id, 1 byte
constexpr size_t kTagTrial = 7;        // trial tag, 1 byte
constexpr size_t kTagSeq = 8;          // sequence number, 4 bytes big endian
constexpr size_t kTagSeqSize = 4;
constexpr size_t kTagTimestamp = 12;   // low 48 bits of the sender's TSC, big endian
constexpr size_t kTagTimestampSize = 6;
constexpr size_t kTagSize = kTagTimestamp + kTagTimestampSize;  // 18
constexpr size_t kEthHeader = 14;    // untagged: MAC addresses and EtherType
constexpr size_t kUdpHeader = 8;
constexpr size_t kFcs = 4;             // counted in frame sizes, appended by the NIC
// Jumbo frames up to 9216 bytes (RFC 8219 §5.1.1), without VLAN tags: frames longer than one
// mbuf segment are sent as a per-frame head segment plus a shared tail (FrameTemplate).
constexpr size_t kMaxFrameSize = 9216;
// A jumbo frame's head: every byte a sender writes per frame (Ethernet with two VLAN tags, the
// IPv6 header, UDP and the test tag: 88 bytes at most) lies in it.
constexpr uint32_t kJumboHead = 128;
// The largest frame (on the wire, FCS and VLAN tags included) the ports are set up to carry
// when the engine is started without --max-frame-size: a full-size Ethernet frame (1518
// bytes) with two VLAN tags.
constexpr uint32_t kDefaultMaxFrame = 1526;
constexpr uint64_t kTimestampMask = (uint64_t(1) << 48) - 1;
// RX/TX queue pairs per port at most: each queue sends its own sub-stream of every stream
// (runtime.hpp), and 2 flows x 2 streams x 64 queues fill the tag's stream id byte.
constexpr uint16_t kMaxQueues = 64;
// Stream ids: the tag's one byte, one per stream of every flow on every TX queue.
constexpr size_t kStreamIds = 256;
// A trial request's flows and duration at most.
constexpr size_t kMaxFlows = 127;
constexpr double kMaxDuration = 1e6;  // seconds

// IEEE 802.1Q VLAN tags: at most two (IEEE 802.1ad "QinQ": an S-tag with TPID 0x88a8 outside a
// C-tag with TPID 0x8100; one tag alone is a C-tag). Each tag adds 4 bytes to the frame.
constexpr uint16_t kTpidCTag = 0x8100, kTpidSTag = 0x88a8;
constexpr size_t kVlanTag = 4;
constexpr size_t kMaxVlanTags = 2;
constexpr uint16_t kMaxVlanId = 4094;  // 0 (priority tag) and 4095 are reserved

// A frame's VLAN IDs, outermost first.
struct VlanStack {
  uint8_t count = 0;
  std::array<uint16_t, kMaxVlanTags> ids{};
  size_t bytes() const { return count * kVlanTag; }
  bool operator==(const VlanStack& o) const {
    return count == o.count && (count < 1 || ids[0] == o.ids[0]) && (count < 2 || ids[1] == o.ids[1]);
  }
};

// A TPID this tester accepts on receive: 802.1Q, 802.1ad, and the pre-standard QinQ 0x9100.
// The TPID itself is not checked against the sender's (a kernel or a switch may rewrite an
// S-tag's TPID to 0x8100, as Linux af_packet sockets do when they re-insert a tag).
inline bool is_vlan_tpid(uint16_t ethertype) {
  return ethertype == kTpidCTag || ethertype == kTpidSTag || ethertype == 0x9100;
}

// Writes destination and source MAC, the tags of `vlan` and the EtherType at `out`; returns the
// header's length (14 + 4 per tag).
inline size_t put_ethernet(uint8_t* out, const uint8_t* dst, const uint8_t* src, const VlanStack& vlan,
                           uint16_t ethertype) {
  std::memcpy(out, dst, 6);
  std::memcpy(out + 6, src, 6);
  size_t off = 12;
  for (size_t i = 0; i < vlan.count && i < kMaxVlanTags; ++i) {
    const uint16_t tpid = vlan.count == kMaxVlanTags && i == 0 ? kTpidSTag : kTpidCTag;
    out[off] = uint8_t(tpid >> 8);
    out[off + 1] = uint8_t(tpid);
    out[off + 2] = uint8_t(vlan.ids[i] >> 8);  // PCP 0, DEI 0, VLAN ID
    out[off + 3] = uint8_t(vlan.ids[i]);
    off += kVlanTag;
  }
  out[off] = uint8_t(ethertype >> 8);
  out[off + 1] = uint8_t(ethertype);
  return off + 2;
}

// Reads the VLAN tags of a frame of `len` bytes into `vlan`; returns the offset of the
// EtherType after them (12 with no tag), or 0 when the frame is too short or has more tags
// than kMaxVlanTags.
inline size_t read_vlan_tags(const uint8_t* p, size_t len, VlanStack& vlan) {
  size_t off = 12;
  vlan.count = 0;
  while (len >= off + 2 && is_vlan_tpid(uint16_t(p[off] << 8 | p[off + 1]))) {
    if (vlan.count == kMaxVlanTags || len < off + kVlanTag + 2) return 0;
    vlan.ids[vlan.count++] = uint16_t((p[off + 2] << 8 | p[off + 3]) & 0x0fff);
    off += kVlanTag;
  }
  return len >= off + 2 ? off : 0;
}

struct FrameSpec {
  int ip_version = 4;
  std::array<uint8_t, 6> src_mac{}, dst_mac{};
  std::array<uint8_t, 16> src_ip{}, dst_ip{};  // IPv4 uses the first 4 bytes
  uint16_t src_port = 0xC020, dst_port = 7;    // RFC 2544 App. C
  // On the wire from the destination MAC to the FCS inclusive, without VLAN tags: the tags of
  // `vlan` come on top (4 bytes each), so a frame size names the same IP packet on tagged
  // and untagged ports.
  uint32_t frame_size = 64;
  VlanStack vlan;
};

inline size_t ip_header_size(int ip_version) { return ip_version == 4 ? 20 : 40; }

// Smallest frame whose UDP payload holds the test tag: 64 bytes for IPv4, 84 for IPv6.
inline uint32_t min_frame_size(int ip_version) {
  return uint32_t(kEthHeader + ip_header_size(ip_version) + kUdpHeader + kTagSize + kFcs);
}

// A frame prepared once per trial and stream. Per frame only the sequence number, the
// timestamp and the UDP checksum change; the checksum is updated from `base_sum`, the
// unfolded-equivalent sum of everything else (pseudo header, UDP header, payload with the
// varying fields zero), so no per-frame pass over the payload is needed.
struct FrameTemplate {
  std::vector<uint8_t> bytes;  // the frame without FCS
  uint16_t udp_offset = 0;     // start of the UDP header
  uint16_t tag_offset = 0;     // start of the UDP payload (the test tag)
  uint16_t base_sum = 0;       // folded one's complement sum without seq/timestamp
  uint16_t ip_offset = 0;      // start of the IP header
  uint16_t ipv4_header_sum = 0;  // IPv4 only: folded sum of the header, checksum field zero
  // Bytes the sender copies per frame: all of them, or for a frame longer than one mbuf
  // segment only the first kJumboHead; the rest is `tail`, one read-only segment shared by
  // every frame of the stream (reference-counted, chained after each frame's own head, so a
  // 9000-byte frame costs a 128-byte copy). Set up by the data plane (runtime.cpp).
  uint32_t head = 0;
  rte_mbuf* tail = nullptr;
  uint32_t size() const { return uint32_t(bytes.size()); }
};

// Throws std::invalid_argument when the spec cannot be built (size out of range, version).
FrameTemplate build_template(const FrameSpec& spec, uint8_t stream_id, uint8_t trial_tag);

// Writes sequence number and timestamp into a copy of the template and fixes the UDP checksum.
// `extra_sum` carries the checksum changes of varying fields (see fields.hpp).
inline void stamp_frame(uint8_t* frame, const FrameTemplate& t, uint32_t seq, uint64_t tsc,
                        uint64_t extra_sum = 0) {
  uint8_t* tag = frame + t.tag_offset;
  uint64_t ts = tsc & kTimestampMask;
  uint32_t seq_be = __builtin_bswap32(seq);
  std::memcpy(tag + kTagSeq, &seq_be, kTagSeqSize);
  uint16_t ts_hi = __builtin_bswap16(uint16_t(ts >> 32));
  uint32_t ts_lo = __builtin_bswap32(uint32_t(ts));
  std::memcpy(tag + kTagTimestamp, &ts_hi, 2);
  std::memcpy(tag + kTagTimestamp + 2, &ts_lo, 4);
  uint64_t sum = extra_sum + t.base_sum + (seq >> 16) + (seq & 0xffff) + (ts >> 32) +
                 ((ts >> 16) & 0xffff) + (ts & 0xffff);
  uint16_t csum_be = __builtin_bswap16(udp_checksum_field(sum));
  std::memcpy(frame + t.udp_offset + 6, &csum_be, 2);
}

struct TestTag {
  uint16_t l3_offset = 0;  // where the IP header starts
  VlanStack vlan;          // the frame's VLAN IDs
  uint8_t stream = 0;
  uint8_t trial_tag = 0;
  uint32_t seq = 0;
  uint64_t timestamp = 0;  // low 48 bits of the sender's TSC
};

// Recognises an xlatperf test frame: Ethernet with up to two VLAN tags, IPv4 without
// fragmentation or IPv6 without extension headers, UDP, magic at the start of the payload.
// `len`: the bytes at `p` (the first segment of a multi-segment frame holds all of these).
inline bool parse_test_frame(const uint8_t* p, uint32_t len, TestTag& out) {
  uint32_t off = uint32_t(read_vlan_tags(p, len, out.vlan));
  if (off == 0) return false;
  const uint16_t ethertype = uint16_t(p[off] << 8 | p[off + 1]);
  off += 2;
  out.l3_offset = uint16_t(off);
  if (ethertype == 0x0800) {
    if (len < off + 20 || (p[off] >> 4) != 4 || p[off + 9] != 17) return false;
    if ((p[off + 6] & 0x3f) | p[off + 7]) return false;  // a fragment (MF or offset set)
    off += (p[off] & 0x0f) * 4u;
  } else if (ethertype == 0x86DD) {
    if (len < off + 40 || (p[off] >> 4) != 6 || p[off + 6] != 17) return false;
    off += 40;
  } else {
    return false;
  }
  off += kUdpHeader;
  if (len < off + kTagSize || std::memcmp(p + off, kMagic, sizeof kMagic) != 0) return false;
  const uint8_t* tag = p + off;
  out.stream = tag[kTagStream];
  out.trial_tag = tag[kTagTrial];
  const uint8_t* seq = tag + kTagSeq;
  out.seq = uint32_t(seq[0]) << 24 | uint32_t(seq[1]) << 16 | uint32_t(seq[2]) << 8 | seq[3];
  uint64_t ts = 0;
  for (size_t i = kTagTimestamp; i < kTagSize; ++i) ts = ts << 8 | tag[i];
  out.timestamp = ts;
  return true;
}

// "02:00:00:00:00:01" -> bytes; throws std::invalid_argument.
std::array<uint8_t, 6> parse_mac(const std::string& text);
std::string format_mac(const uint8_t* mac);
// Parses an IPv4 or IPv6 address of the given version; throws std::invalid_argument.
std::array<uint8_t, 16> parse_ip(const std::string& text, int ip_version);

}  // namespace xlp
