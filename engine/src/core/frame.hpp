// Test frames: building templates once per trial, stamping the per-frame fields, and
// recognising test frames on receive. Layout of the tag: docs/protocol.md.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/bytes.hpp"
#include "core/checksum.hpp"
#include "core/dns.hpp"
#include "core/layers/ip.hpp"

struct rte_mbuf;

namespace xlp {

// The test tag: at the start of the UDP payload, or in a TCP segment's first option
// (docs/protocol.md, "Test frame payload"; the hello reply reports this layout as limits.tag).
constexpr uint8_t kMagic[4] = {'X', 'L', 'A', 'T'};
// The CE the frame belongs to (its index among the stream's CEs, the low 16 bits), 2 bytes
// big endian: the sender writes it with the CE's fields, a Responder copies it from the frame it
// learned the entry from, and the receiver checks that the fields name that CE (a DS-Lite AFTR
// must deliver into the softwire of the B4 that opened the binding, though all B4s share one
// IPv4 address); 0 in frames without CEs.
constexpr size_t kTagCe = 4;
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
constexpr uint32_t kMaxFlowLabel = 0xfffff;  // IPv6's 20 bits
// Tunnel headers a frame may nest around its IP packet (FrameSpec::tunnels), and so the IP
// headers it may hold: each is an IP header of its own version at its own depth.
constexpr size_t kMaxTunnels = 2;
constexpr size_t kMaxIpHeaders = kMaxTunnels + 1;
// A jumbo frame's head: every byte a sender writes per frame (Ethernet with two VLAN tags, two
// IPv6 tunnel headers, the IP header, UDP and the test tag or TCP with its options: 190 bytes
// at most) lies in it.
constexpr uint32_t kJumboHead = 192;
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

// TCP (RFC 9293 §3.1). A test segment carries the test tag in its first option, an
// experimental option (RFC 6994: kind 254, then a 16-bit ExID) whose ExID is the tag's first
// two magic bytes "XL": the tag's place does not depend on the payload, so handshake segments
// (no payload) carry it as data segments do, and NATs leave options alone. A SYN or SYN-ACK
// also carries the window scale option (RFC 7323 §2.2, after a NOP), so that a DUT tracking
// windows accepts phase 2's data with acknowledgements that stay behind (docs/tcp.md), and the
// MSS option (RFC 9293 §3.7.1's SHOULD), which a gateway that clamps the MSS lowers in place.
constexpr uint8_t kTcpFin = 0x01, kTcpSyn = 0x02, kTcpRst = 0x04, kTcpPsh = 0x08, kTcpAck = 0x10;
constexpr size_t kTcpHeader = 20;  // without options
constexpr uint8_t kTagOptionKind = 254;
constexpr size_t kTagOption = 2 + kTagSize;  // kind, length, the tag
constexpr size_t kWindowScaleOption = 4;     // NOP, kind 3, length 3, shift
constexpr uint8_t kWindowShift = 14;         // the largest RFC 7323 allows: a 1 GiB window
constexpr uint16_t kTcpWindow = 0xffff;
constexpr uint8_t kMssOptionKind = 2;
constexpr size_t kMssOption = 4;  // kind 2, length 4, the MSS
inline size_t tcp_header_size(uint8_t flags) {
  return kTcpHeader + kTagOption + ((flags & kTcpSyn) ? kWindowScaleOption + kMssOption : 0);
}
// A tunnel header around a frame's IP packet: an RFC 2473 IPv6 header (`version` 6: IPv4 in
// IPv6 for DS-Lite, lw4o6 and MAP-E; IPv6 in IPv6 too) or an IPv4 header of protocol 41 or 4
// (`version` 4: RFC 4213's IPv6 in IPv4, which 6rd uses, RFC 5969 §7; RFC 2003's IPv4 in
// IPv4): the tunnel entry and exit point addresses (IPv4 in the first 4 bytes).
struct Tunnel {
  std::array<uint8_t, 16> src{}, dst{};
  int version = 6;
};
// The tunnel headers around a frame's IP packet, outermost first (each carries the next, the
// innermost the packet): none, one (a softwire, 6rd) or nested up to kMaxTunnels. The stack's
// sizes follow from each header's declaration (IpLayout), whatever the depth.
struct TunnelStack {
  std::array<Tunnel, kMaxTunnels> items{};
  uint8_t count = 0;
  TunnelStack() = default;
  TunnelStack(std::initializer_list<Tunnel> tunnels);  // throws std::invalid_argument past kMaxTunnels
  bool empty() const { return count == 0; }
  const Tunnel* begin() const { return items.data(); }
  const Tunnel* end() const { return items.data() + count; }
  Tunnel* begin() { return items.data(); }
  Tunnel* end() { return items.data() + count; }
  // The tunnel whose payload is the frame's IP packet: the one an emulated CE's address lies in.
  const Tunnel& innermost() const { return items[count - 1]; }
  Tunnel& innermost() { return items[count - 1]; }
  // The bytes the headers add (their fixed parts): 0 without one.
  size_t bytes() const;
};

// The MSS a SYN announces unless the request names one: what a host on Ethernet (IP MTU 1500)
// takes in a segment, less the IP headers (the tunnels' as well) and TCP's fixed 20 bytes
// (RFC 9293 §3.7.1): 1460 over IPv4, 1440 over IPv6, 1420 for IPv4 in a softwire.
inline size_t TunnelStack::bytes() const {
  size_t n = 0;
  for (const Tunnel& t : *this) n += ip_layout(t.version).size;
  return n;
}
inline TunnelStack::TunnelStack(std::initializer_list<Tunnel> tunnels) {
  if (tunnels.size() > kMaxTunnels)
    throw std::invalid_argument("tunnel: at most " + std::to_string(kMaxTunnels) + " nested tunnel headers");
  for (const Tunnel& t : tunnels) items[count++] = t;
}
inline uint16_t ethernet_mss(int ip_version, const TunnelStack& tunnels) {
  return uint16_t(1500 - tunnels.bytes() - ip_layout(ip_version).size - kTcpHeader);
}

// A frame: Ethernet (with `vlan`), the tunnel headers (`tunnels`, IPv6 or IPv4, nested), one
// IPv4 or IPv6 header (`ip_version`, the addresses), UDP or TCP (`l4`) and the test tag. The
// stack is data: its layers (layers_of) are written by one writer each (build_template), a
// stream's received frames are judged against the same layers (header_check.hpp), and the
// parser walks them.
struct FrameSpec {
  int ip_version = 4;                 // of the IP header that carries UDP or TCP (the inner one)
  uint8_t l4 = kProtoUdp;             // kProtoUdp or kProtoTcp
  uint8_t tcp_flags = kTcpAck;        // TCP: the segment's flags (kTcpSyn: with window scale, MSS)
  uint16_t tcp_mss = 0;               // TCP SYN: the MSS option's value (0: ethernet_mss)
  std::array<uint8_t, 6> src_mac{}, dst_mac{};
  std::array<uint8_t, 16> src_ip{}, dst_ip{};  // IPv4 uses the first 4 bytes
  uint16_t src_port = 0xC020, dst_port = 7;    // RFC 2544 App. C
  uint8_t tos = 0;   // IPv4 TOS octet / IPv6 traffic class, of every IP header (tunnel too)
  uint8_t ttl = 10;  // IPv4 TTL / IPv6 hop limit, of every IP header (RFC 2544 App. C.2.6.4)
  // IPv6: the flow label (20 bits) of the header that carries UDP or TCP, which a sending host
  // should set (RFC 6437 §3); a tunnel header's is the entry point's own and written 0.
  uint32_t flow_label = 0;
  // On the wire from the destination MAC to the FCS inclusive, without VLAN tags: the tags of
  // `vlan` come on top (4 bytes each), so a frame size names the same IP packet on tagged
  // and untagged ports.
  uint32_t frame_size = 64;
  VlanStack vlan;
  TunnelStack tunnels;
  // A DNS query in place of the test tag (dns.hpp, docs/dns.md): over UDP only, and the frame's
  // size is the query's (dns_frame_size).
  struct DnsQuery {
    std::shared_ptr<const dns::Zone> zone;
    uint16_t qtype = dns::kTypeAaaa;
    bool edns = true;
    uint32_t nonce = 0;  // the trial's (dns::TestName)
  };
  std::optional<DnsQuery> dns;
};

inline size_t ip_header_size(int ip_version) { return ip_layout(ip_version).size; }

// The header layers of a test frame, outermost first (Layer: core/layers/layer.hpp). Each has
// one writer (an IP header's its kind's, core/layers/; the others frame.cpp) and one checker
// (header_check.hpp); a frame's list follows from its FrameSpec (layers_of).
inline Layer ip_layer(int version) {
  return with_ip_version(version, [](auto k) { return decltype(k)::kLayer; }, Layer::kIpv6);
}
struct LayerList {
  std::array<Layer, 3 + kMaxIpHeaders> items{};
  uint8_t count = 0;
  const Layer* begin() const { return items.data(); }
  const Layer* end() const { return items.data() + count; }
};
inline LayerList layers_of(const FrameSpec& spec) {
  LayerList l;
  l.items[l.count++] = Layer::kEthernet;
  for (const Tunnel& t : spec.tunnels) l.items[l.count++] = ip_layer(t.version);
  l.items[l.count++] = ip_layer(spec.ip_version);
  l.items[l.count++] = spec.l4 == kProtoTcp ? Layer::kTcp : Layer::kUdp;
  l.items[l.count++] = spec.dns ? Layer::kDns : Layer::kTag;
  return l;
}

// The transport header up to the test tag's end: UDP's 8 bytes and the tag, or TCP's header
// with its options (the tag among them).
inline size_t l4_header_size(uint8_t l4, uint8_t tcp_flags) {
  return l4 == kProtoTcp ? tcp_header_size(tcp_flags) : kUdpHeader + kTagSize;
}

// Smallest frame that holds the test tag: 64 bytes for IPv4 UDP, 84 for IPv6 UDP, 40 more per
// IPv6 tunnel, 20 more per IPv4 one; a TCP segment without payload (78 and 98 bytes, 4 more
// for a SYN).
inline uint32_t min_frame_size(int ip_version, const TunnelStack& tunnels = {}, uint8_t l4 = kProtoUdp,
                               uint8_t tcp_flags = kTcpAck) {
  return uint32_t(kEthHeader + tunnels.bytes() + ip_header_size(ip_version) +
                  l4_header_size(l4, tcp_flags) + kFcs);
}

// The size of a frame that carries a DNS query (FrameSpec::dns), FCS included, VLAN tags not.
inline uint32_t dns_frame_size(const FrameSpec& spec) {
  return uint32_t(kEthHeader + spec.tunnels.bytes() + ip_header_size(spec.ip_version) + kUdpHeader +
                  dns::query_size(*spec.dns->zone, spec.dns->edns) + kFcs);
}

// Where a frame's IP headers start, outermost first: the tunnels' headers, then the packet's
// own (the last). Written by build_template and the parser alike.
// Not zeroed where declared (a receiver's TestTag, per frame): the parser writes `at` up to
// `count`, `tunnel_extra`, and `tunnel_at` where tunnelled(); a template's are value-initialized.
struct IpHeaders {
  std::array<uint16_t, kMaxIpHeaders> at;
  uint8_t count;
  // The innermost tunnel's header (the one whose payload is the packet), with tunnelled(); and
  // what the tunnels' entry points put between their headers' fixed parts and what they carry
  // (an encapsulation limit option, RFC 2473 §4.1.1, which Linux ip6tnl adds; IPv4 options).
  // Kept apart as the parser walks: the receiver reads them per frame.
  uint16_t tunnel_at;
  uint16_t tunnel_extra;
  uint16_t outermost() const { return at[0]; }
  bool tunnelled() const { return count > 1; }
  uint16_t tunnel() const { return tunnel_at; }
};

// A frame prepared once per trial and stream. Per frame only the sequence number, the
// timestamp and the transport checksum change; the checksum is updated from `base_sum`, the
// unfolded-equivalent sum of everything else (pseudo header, UDP or TCP header, payload with
// the varying fields zero), so no per-frame pass over the payload is needed.
struct FrameTemplate {
  std::vector<uint8_t> bytes;  // the frame without FCS
  uint16_t l4_offset = 0;      // start of the UDP or TCP header
  uint16_t checksum_offset = 0;  // of the UDP or TCP checksum
  uint16_t tag_offset = 0;     // start of the test tag (UDP payload, or in the TCP option)
  uint16_t base_sum = 0;       // folded one's complement sum without seq/timestamp
  uint8_t l4 = kProtoUdp;      // kProtoUdp or kProtoTcp
  IpHeaders ip{};              // every IP header, the tunnels' first
  uint16_t ip_offset = 0;      // start of the IP header that carries UDP (ip's last)
  // The IPv4 header whose checksum the words a sender varies per frame update (the inner one,
  // or over IPv6 the innermost tunnel's if it is IPv4: a 6rd CE's address): its checksum's
  // offset (0: none) and its folded sum with the checksum field zero.
  uint16_t ipv4_checksum_at = 0;
  uint16_t ipv4_header_sum = 0;
  // A DNS query's start (0: none; then tag_offset is 0): its ID and its name's index are zero
  // here, and its source port the stream's first (stamp_dns writes them).
  uint16_t dns_offset = 0;
  // Every header field the layer writers wrote, outermost layer first (the receiver's
  // expectations for a stream are derived from these: header_check.hpp).
  std::vector<FieldMark> fields;
  // Bytes the sender copies per frame: all of them, or for a frame longer than one mbuf
  // segment only the first kJumboHead; the rest is `tail`, one read-only segment shared by
  // every frame of the stream (reference-counted, chained after each frame's own head, so a
  // 9000-byte frame costs a 192-byte copy). Set up by the data plane (runtime.cpp).
  uint32_t head = 0;
  rte_mbuf* tail = nullptr;
  uint32_t size() const { return uint32_t(bytes.size()); }
};

// Throws std::invalid_argument when the spec cannot be built (size out of range, version).
FrameTemplate build_template(const FrameSpec& spec, uint8_t stream_id, uint8_t trial_tag);

// The timestamp a frame carries: the low 48 bits of the sender's TSC.
inline uint64_t tag_timestamp(uint64_t tsc) { return tsc & kTimestampMask; }
// What the sequence number and the timestamp add to the UDP checksum sum.
inline uint32_t seq_sum(uint32_t seq) { return (seq >> 16) + (seq & 0xffff); }
inline uint32_t timestamp_sum(uint64_t ts) { return uint32_t((ts >> 32) + ((ts >> 16) & 0xffff) + (ts & 0xffff)); }

// Writes the test tag's sequence number and timestamp `ts` (tag_timestamp) at `tag`.
inline void write_tag(uint8_t* tag, uint32_t seq, uint64_t ts) {
  uint32_t seq_be = __builtin_bswap32(seq);
  std::memcpy(tag + kTagSeq, &seq_be, kTagSeqSize);
  uint16_t ts_hi = __builtin_bswap16(uint16_t(ts >> 32));
  uint32_t ts_lo = __builtin_bswap32(uint32_t(ts));
  std::memcpy(tag + kTagTimestamp, &ts_hi, 2);
  std::memcpy(tag + kTagTimestamp + 2, &ts_lo, 4);
}

// Writes sequence number and timestamp into a copy of the template and fixes the UDP checksum.
// `extra_sum` carries the checksum changes of varying fields (see fields.hpp; a burst of
// varying frames computes its checksums ahead instead, FieldBlock::Writer::stamp).
inline void stamp_frame(uint8_t* frame, const FrameTemplate& t, uint32_t seq, uint64_t tsc,
                        uint64_t extra_sum = 0) {
  const uint64_t ts = tag_timestamp(tsc);
  write_tag(frame + t.tag_offset, seq, ts);
  uint64_t sum = extra_sum + t.base_sum + seq_sum(seq) + timestamp_sum(ts);
  uint16_t csum_be = __builtin_bswap16(transport_checksum_field(sum, t.l4));
  std::memcpy(frame + t.checksum_offset, &csum_be, 2);
}

// Writes a query of a DNS stream (docs/dns.md) into a copy of its template: what varies in its
// name (`name`: dns::Zone::stamp, the index's digits or a dns64perf++ label, and the case of
// its letters where the question's case is checked), the source port (the template's, the
// stream's first, plus the key's offset) and the key's ID, and fixes the UDP checksum.
inline void stamp_dns(uint8_t* frame, const FrameTemplate& t, dns::QueryKey key, const dns::NameStamp& name) {
  uint8_t* udp = frame + t.l4_offset;
  const uint16_t port = uint16_t((udp[0] << 8 | udp[1]) + key.port_offset);
  udp[0] = uint8_t(port >> 8);
  udp[1] = uint8_t(port);
  uint8_t* msg = frame + t.dns_offset;
  msg[0] = uint8_t(key.id >> 8);
  msg[1] = uint8_t(key.id);
  uint8_t* at = msg + dns::kHeader;
  // The words as the checksum takes them, from the UDP header's start: at an even distance 4
  // words; at an odd one the first byte ends a word and the last begins one, which adds up as
  // the bytes turned one byte round (the last ahead of the first). The stamped words are new
  // (the template holds zeros there); a flip takes 0x20 from a letter of the template's nonce
  // or zone: its words are subtracted (added as their one's complement, 0xffff - w each).
  const auto words = [&](uint64_t w, const uint8_t* p) {
    if (size_t(p - udp) % 2) w = w >> 8 | w << 56;
    return (w & 0xffff) + (w >> 16 & 0xffff) + (w >> 32 & 0xffff) + (w >> 48);
  };
  uint64_t sum = uint64_t(t.base_sum) + key.port_offset + key.id;
  for (size_t i = 0; i < name.words; ++i) {
    uint8_t* p = at + name.at + 8 * i;
    store_be64(p, name.word[i]);
    sum += words(name.word[i], p);
  }
  if (name.nonce_flips | name.zone_flips) {
    uint8_t* nonce = at + dns::kNonceInName;
    uint8_t* zone = at + name.zone_at;
    if (name.nonce_flips) store_be64(nonce, load_be64(nonce) ^ name.nonce_flips);
    if (name.zone_flips) store_be64(zone, load_be64(zone) ^ name.zone_flips);
    sum += 8 * 0xffff - words(name.nonce_flips, nonce) - words(name.zone_flips, zone);
  }
  const uint16_t csum = udp_checksum_field(sum);
  udp[6] = uint8_t(csum >> 8);
  udp[7] = uint8_t(csum);
}

struct TestTag {
  IpHeaders ip;               // where each IP header starts, the tunnels' first
  uint16_t l3_offset = 0;     // where the IP header that carries UDP starts (ip's last)
  uint16_t l4_offset = 0;     // where the UDP or TCP header starts
  uint16_t tag_offset = 0;    // where the test tag starts
  uint8_t l4 = kProtoUdp;     // kProtoUdp or kProtoTcp
  VlanStack vlan;          // the frame's VLAN IDs
  uint8_t stream = 0;
  uint8_t trial_tag = 0;
  uint16_t ce = 0;  // kTagCe
  uint32_t seq = 0;
  uint64_t timestamp = 0;  // low 48 bits of the sender's TSC
};

// Where option `kind` of `size` bytes starts among the options of the TCP header at `off`
// (the frame's first `len` bytes hold them all, as its data offset says): 0 when it is not
// there, or the list ends or turns out malformed before it.
inline uint32_t tcp_option_at(const uint8_t* p, uint32_t len, uint32_t off, uint8_t kind, uint32_t size) {
  if (len < off + kTcpHeader) return 0;
  const uint32_t end = off + (p[off + 12] >> 4) * 4u;  // the options' end
  if (end > len) return 0;
  for (uint32_t at = off + uint32_t(kTcpHeader); at + size <= end;) {
    const uint8_t k = p[at];
    if (k == 0) return 0;  // end of the option list
    if (k == 1) {          // no-operation
      ++at;
      continue;
    }
    const uint8_t s = p[at + 1];
    if (k == kind && s == size) return at;
    if (s < 2) return 0;  // malformed
    at += s;
  }
  return 0;
}

// Where a TCP segment at `off` carries the test tag: in the tag option (kind 254, length 20)
// among the options its data offset gives (the first, as the tester sends it, unless a DUT put
// one in front: an MSS clamp inserts an MSS option first); 0 if it is not there.
inline uint32_t tcp_tag_offset(const uint8_t* p, uint32_t len, uint32_t off) {
  const uint32_t at = tcp_option_at(p, len, off, kTagOptionKind, kTagOption);
  return at ? at + 2 : 0;
}

// The MSS a received SYN's options announce (the TCP header at `off`, the frame's first `len`
// bytes): the MSS option's value, or what RFC 9293 §3.7.1 says a sender without one takes:
// 536 over IPv4, 1220 over IPv6.
inline uint16_t announced_mss(const uint8_t* p, uint32_t len, uint32_t off, bool ipv4) {
  const uint32_t at = tcp_option_at(p, len, off, kMssOptionKind, kMssOption);
  return at ? uint16_t(p[at + 2] << 8 | p[at + 3]) : (ipv4 ? 536 : 1220);
}

// Walks a frame's headers to its transport: Ethernet with up to two VLAN tags, up to
// kMaxTunnels tunnel headers (IPv6, RFC 2473: IPv4 or IPv6 in IPv6; IPv4, RFC 4213 and RFC
// 2003: IPv6 or IPv4 in IPv4), IPv4 without fragmentation or IPv6 without extension headers,
// then UDP or TCP. Fills `out`'s offsets, `l4` and `vlan`; false for any other frame. `len`:
// the bytes at `p` (the first segment of a multi-segment frame holds all of these).
inline bool parse_headers(const uint8_t* p, uint32_t len, TestTag& out) {
  uint32_t off = uint32_t(read_vlan_tags(p, len, out.vlan));
  if (off == 0) return false;
  const uint16_t ethertype = load_be16(p + off);
  off += 2;
  const uint8_t proto = ip_protocol_of_ethertype(ethertype);
  // The count and the last header's start in registers: the frame's bytes may alias `out`.
  uint32_t start = off, extra = 0;
  uint8_t count = 1, fixed = 0;
  out.ip.at[0] = uint16_t(start);
  uint8_t next = walk_ip_header(p, len, proto, off, fixed);
  while (next != kProtoUdp && next != kProtoTcp) {
    // An IP header inside a tunnel's header (walk_ip_header gives 0 for a protocol no IP kind
    // has), as deep as a frame may nest them.
    if (next == 0 || count == kMaxIpHeaders) return false;
    extra += off - start - fixed;
    out.ip.tunnel_at = uint16_t(start);
    start = off;
    out.ip.at[count++] = uint16_t(start);
    next = walk_ip_header(p, len, next, off, fixed);
  }
  out.ip.count = count;
  out.ip.tunnel_extra = uint16_t(extra);
  out.l3_offset = uint16_t(start);
  out.l4 = next;
  out.l4_offset = uint16_t(off);
  return true;
}

// Reads the test tag of a frame whose headers `out` holds (parse_headers): the magic at the
// start of the UDP payload, or in a TCP segment's tag option. False when it is not there.
inline bool read_test_tag(const uint8_t* p, uint32_t len, TestTag& out) {
  const uint32_t off = out.l4 == kProtoUdp ? out.l4_offset + uint32_t(kUdpHeader) : tcp_tag_offset(p, len, out.l4_offset);
  if (off == 0 || len < off + kTagSize || std::memcmp(p + off, kMagic, sizeof kMagic) != 0) return false;
  out.tag_offset = uint16_t(off);
  const uint8_t* tag = p + off;
  out.stream = tag[kTagStream];
  out.trial_tag = tag[kTagTrial];
  out.ce = load_be16(tag + kTagCe);
  out.seq = load_be32(tag + kTagSeq);
  uint64_t ts = 0;
  for (size_t i = kTagTimestamp; i < kTagSize; ++i) ts = ts << 8 | tag[i];
  out.timestamp = ts;
  return true;
}

// Recognises an xlatperf test frame: the headers parse_headers walks, then the test tag.
inline bool parse_test_frame(const uint8_t* p, uint32_t len, TestTag& out) {
  return parse_headers(p, len, out) && read_test_tag(p, len, out);
}

// Whether a frame that is no test frame is a fragment of an IP packet (IPv4 with MF or a
// fragment offset; IPv6 with a fragment header first), plain or inside one tunnel header: a
// test frame that a DUT fragmented, or whose tunnel packet it fragmented (counted apart from
// foreign frames, docs/protocol.md).
inline bool is_ip_fragment(const uint8_t* p, uint32_t len) {
  VlanStack vlan;
  uint32_t off = uint32_t(read_vlan_tags(p, len, vlan));
  if (off == 0) return false;
  uint8_t proto = ip_protocol_of_ethertype(load_be16(p + off));
  off += 2;
  for (size_t header = 0; header < kMaxIpHeaders && proto; ++header) {
    bool fragment = false;
    proto = with_ip_protocol(
        proto, [&](auto k) { return decltype(k)::walk_to_fragment(p, len, off, fragment); }, uint8_t(0));
    if (fragment) return true;
  }
  return false;
}

// The IPv6 tunnel header a parsed frame's packet arrived in (a softwire, whose addresses the
// stateful emulation answers through: DS-Lite's B4s), or none (no tunnel, or an IPv4 one).
inline const uint8_t* ipv6_tunnel_header(const uint8_t* p, const TestTag& tag) {
  return tag.ip.tunnelled() && (p[tag.ip.tunnel()] >> 4) == 6 ? p + tag.ip.tunnel() : nullptr;
}

// What tunnel entry points put between their headers' fixed parts and what they carry, in a
// frame parse_headers walked: 0 without a tunnel.
inline uint32_t tunnel_extra_bytes(const TestTag& tag) { return tag.ip.tunnel_extra; }

// "02:00:00:00:00:01" -> bytes; throws std::invalid_argument.
std::array<uint8_t, 6> parse_mac(const std::string& text);
std::string format_mac(const uint8_t* mac);
// Parses an IPv4 or IPv6 address of the given version; throws std::invalid_argument.
std::array<uint8_t, 16> parse_ip(const std::string& text, int ip_version);

}  // namespace xlp
