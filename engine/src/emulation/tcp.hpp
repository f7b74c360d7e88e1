// The TCP of stateful tests (docs/tcp.md): stateless endpoints whose initial sequence numbers
// come from a keyed hash, and the segments they send, written into frame templates (frame.hpp,
// l4 = kProtoTcp). The Initiator's ISN is a hash of its four-tuple as it sends it, so that it
// recognises the SYN-ACK's acknowledgement without remembering the SYN; the Responder's ISN is
// a hash of the Initiator's ISN (the SYN's sequence number, which the DUT does not change), so
// that it recognises the handshake's ACK without a table lookup, and either side can compute
// both. The idea is that of SYN cookies; the hash is no secret against an attacker (a lab
// tester's key only makes the numbers look unrelated to the DUT). Pure: no DPDK.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "core/checksum.hpp"
#include "core/frame.hpp"

namespace xlp {

struct TcpKey {
  uint64_t k0 = 0, k1 = 0;
};

namespace tcp_detail {
// A 64-bit finaliser (multiply and xor-shift rounds): every input bit affects every output bit.
inline uint64_t mix(uint64_t x) {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  return x;
}
inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint32_t get32(const uint8_t* p) { return __builtin_bswap32(load32(p)); }
inline void put32(uint8_t* p, uint32_t v) {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}
}  // namespace tcp_detail

// The Initiator's ISN for the connection between its `local` and `remote` address (4 or 16
// bytes each, `addr_len`) and ports (as on the wire, big endian): the same whether read from a
// segment it sends or, swapped, from one it receives.
inline uint32_t initiator_isn(const TcpKey& key, const uint8_t* local, const uint8_t* remote, size_t addr_len,
                              const uint8_t* local_port, const uint8_t* remote_port) {
  using namespace tcp_detail;
  uint64_t h = key.k0 ^ addr_len;
  if (addr_len == 4) {
    h = mix(h ^ (uint64_t(load32(local)) << 32 | load32(remote)));
  } else {
    h = mix(h ^ load64(local));
    h = mix(h ^ load64(local + 8));
    h = mix(h ^ load64(remote));
    h = mix(h ^ load64(remote + 8));
  }
  uint16_t lp, rp;
  std::memcpy(&lp, local_port, 2);
  std::memcpy(&rp, remote_port, 2);
  return uint32_t(mix(h ^ (uint64_t(lp) << 16 | rp)));
}

// The Responder's ISN for a connection whose SYN carried sequence number `initiator_isn`.
inline uint32_t responder_isn(const TcpKey& key, uint32_t initiator_isn) {
  return uint32_t(tcp_detail::mix(key.k1 ^ initiator_isn));
}

// Where a TCP frame's fields are: the IP header that carries TCP and the TCP header, and the
// IPv6 header of the tunnel that carries them (RFC 2473, DS-Lite's softwire), if any.
struct TcpView {
  const uint8_t* ip;
  const uint8_t* tcp;
  size_t addr_len;  // 4 or 16
  const uint8_t* tunnel = nullptr;
  const uint8_t* src() const { return ip + (addr_len == 4 ? 12 : 8); }
  const uint8_t* dst() const { return src() + addr_len; }
  const uint8_t* src_port() const { return tcp; }
  const uint8_t* dst_port() const { return tcp + 2; }
  uint32_t seq() const { return tcp_detail::get32(tcp + 4); }
  uint32_t ack() const { return tcp_detail::get32(tcp + 8); }
  uint8_t flags() const { return tcp[13]; }
};

// A parsed test frame's TCP fields (TestTag from parse_test_frame, l4 == kProtoTcp).
inline TcpView tcp_view(const uint8_t* frame, const TestTag& tag) {
  const bool v4 = (frame[tag.l3_offset] >> 4) == 4;
  return {frame + tag.l3_offset, frame + tag.l4_offset, size_t(v4 ? 4 : 16), ipv6_tunnel_header(frame, tag)};
}

// One segment to send: the four-tuple as it goes out (addresses of the template's IP version;
// ports as on the wire), the sequence and acknowledgement numbers, and the test tag's sequence
// number and timestamp (tag_timestamp). A copy, so that a reply may overwrite the segment it
// answers in place.
struct TcpSegment {
  std::array<uint8_t, 16> src{}, dst{};
  std::array<uint8_t, 2> src_port{}, dst_port{};
  uint32_t seq = 0, ack = 0;
  uint32_t tag_seq = 0;
  uint64_t timestamp = 0;
  // The tunnel's addresses, when the segment answers a tunnelled one: the reply goes back
  // through the same softwire (from the emulated B4 that received the segment to the AFTR).
  bool tunnelled = false;
  std::array<uint8_t, 16> tunnel_src{}, tunnel_dst{};
};

// The reply to `in` (its source and destination swapped) with the given numbers.
inline TcpSegment reply_to(const TcpView& in, uint32_t seq, uint32_t ack, uint32_t tag_seq, uint64_t timestamp) {
  TcpSegment out;
  std::memcpy(out.src.data(), in.dst(), in.addr_len);
  std::memcpy(out.dst.data(), in.src(), in.addr_len);
  std::memcpy(out.src_port.data(), in.dst_port(), 2);
  std::memcpy(out.dst_port.data(), in.src_port(), 2);
  out.seq = seq;
  out.ack = ack;
  out.tag_seq = tag_seq;
  out.timestamp = timestamp;
  if (in.tunnel) {
    out.tunnelled = true;
    std::memcpy(out.tunnel_src.data(), in.tunnel + kIpv6Dst, 16);
    std::memcpy(out.tunnel_dst.data(), in.tunnel + kIpv6Src, 16);
  }
  return out;
}

// A TCP frame template prepared for write_segment: built (build_template) with zero addresses,
// ports, sequence and acknowledgement numbers, so that its sums hold none of them.
struct SegmentTemplate {
  FrameTemplate tmpl;
  size_t addr_len = 4;
  // Throws std::invalid_argument when `spec` is no TCP frame.
  SegmentTemplate(FrameSpec spec, uint8_t stream_id, uint8_t trial_tag) {
    if (spec.l4 != kProtoTcp) throw std::invalid_argument("a segment template needs l4 = TCP");
    spec.src_ip = {};
    spec.dst_ip = {};
    spec.src_port = spec.dst_port = 0;
    tmpl = build_template(spec, stream_id, trial_tag);
    addr_len = spec.ip_version == 4 ? 4 : 16;
  }
};

// Writes `seg` as a frame of template `st` at `out` (the template's size; the caller sets the
// frame's length): the template's bytes, the four-tuple, the numbers, the tag, both checksums.
inline void write_segment(uint8_t* out, const SegmentTemplate& st, const TcpSegment& seg) {
  using namespace tcp_detail;
  const FrameTemplate& t = st.tmpl;
  std::memcpy(out, t.bytes.data(), t.size());
  const size_t alen = st.addr_len;
  uint8_t* addrs = out + t.ip_offset + (alen == 4 ? 12 : 8);
  std::memcpy(addrs, seg.src.data(), alen);
  std::memcpy(addrs + alen, seg.dst.data(), alen);
  uint8_t* l4 = out + t.l4_offset;
  std::memcpy(l4, seg.src_port.data(), 2);
  std::memcpy(l4 + 2, seg.dst_port.data(), 2);
  put32(l4 + 4, seg.seq);
  put32(l4 + 8, seg.ack);
  const uint64_t ts = tag_timestamp(seg.timestamp);
  write_tag(out + t.tag_offset, seg.tag_seq, ts);
  // A tunnelled template (its IPv6 tunnel header has no checksum): the segment's softwire.
  if (seg.tunnelled && t.ip.tunnelled()) {
    std::memcpy(out + t.ip.tunnel() + kIpv6Src, seg.tunnel_src.data(), 16);
    std::memcpy(out + t.ip.tunnel() + kIpv6Dst, seg.tunnel_dst.data(), 16);
  }
  const uint64_t addr_sum = sum_words(addrs, 2 * alen);
  if (alen == 4) {
    const uint16_t csum = __builtin_bswap16(uint16_t(~fold(uint64_t(t.ipv4_header_sum) + addr_sum)));
    std::memcpy(out + t.ip_offset + 10, &csum, 2);
  }
  const uint64_t sum = t.base_sum + addr_sum + sum_words(l4, 4) + seq_sum(seg.seq) + seq_sum(seg.ack) + seq_sum(seg.tag_seq) + timestamp_sum(ts);
  const uint16_t csum = __builtin_bswap16(transport_checksum_field(sum, kProtoTcp));
  std::memcpy(out + t.checksum_offset, &csum, 2);
}

// The segments of a connection's life (RFC 9293 §3.5, §3.6), what a flow's frames are. The
// Initiator sends the first of each exchange from its enumeration of four-tuples: SYN opens,
// FIN (with ACK) closes, RST (with ACK) resets a connection it opened. The others answer the
// segment before them as it arrives: the Responder's SYN-ACK answers a SYN, the Initiator's
// ACK the SYN-ACK and the Responder's window ACK that ACK; the Responder's FIN-ACK answers a
// FIN and the Initiator's last ACK that. The window ACK (no data, acknowledging the handshake
// again) is the Responder's first segment whose window is scaled: a SYN-ACK's window never is
// (RFC 7323 §2.2), so without it a DUT that tracks windows (Linux conntrack, PF) holds the
// Responder's receive window at 65,535 bytes, and a one-way phase 2's data leaves it after that.
// Data (phase 2) flows from both sides' state tables, each segment continuing its connection's
// byte stream (StateTable::write). Closing assumes no data was sent: after the handshake each
// side's next sequence number is its ISN + 1, after its FIN its ISN + 2.
enum class TcpStep : uint8_t { kSyn, kSynAck, kAck, kWindow, kFin, kFinAck, kLastAck, kRst, kData };

// A segment that answers one of the step before (sent by the receiver of that one, not by a
// sender of its own).
inline bool answers_segment(TcpStep step) {
  return step == TcpStep::kSynAck || step == TcpStep::kAck || step == TcpStep::kWindow || step == TcpStep::kFinAck ||
         step == TcpStep::kLastAck;
}

// The flags of a step's segments.
inline uint8_t tcp_flags_of(TcpStep step) {
  switch (step) {
    case TcpStep::kSyn: return kTcpSyn;
    case TcpStep::kSynAck: return kTcpSyn | kTcpAck;
    case TcpStep::kAck: case TcpStep::kWindow: case TcpStep::kLastAck: return kTcpAck;
    case TcpStep::kFin: case TcpStep::kFinAck: return kTcpFin | kTcpAck;
    case TcpStep::kRst: return kTcpRst | kTcpAck;
    case TcpStep::kData: return kTcpAck | kTcpPsh;
  }
  return 0;
}

// Writes the numbers of an Initiator's segment of `step` (kSyn, kFin or kRst) into a frame
// built from a template (both numbers 0 there), for the tuple the frame carries, and updates
// its TCP checksum (RFC 1624): a SYN carries the ISN; a FIN or RST of an established
// connection the next sequence number and the acknowledgement of the Responder's SYN.
inline void stamp_initiator(uint8_t* frame, const FrameTemplate& t, const TcpKey& key, TcpStep step) {
  using namespace tcp_detail;
  const size_t alen = (frame[t.ip_offset] >> 4) == 4 ? 4 : 16;
  const uint8_t* addrs = frame + t.ip_offset + (alen == 4 ? 12 : 8);
  uint8_t* l4 = frame + t.l4_offset;
  const uint32_t isn = initiator_isn(key, addrs, addrs + alen, alen, l4, l4 + 2);
  const uint32_t seq = step == TcpStep::kSyn ? isn : isn + 1;
  const uint32_t ack = step == TcpStep::kSyn ? 0 : responder_isn(key, isn) + 1;
  put32(l4 + 4, seq);
  put32(l4 + 8, ack);
  const uint16_t old = uint16_t(frame[t.checksum_offset] << 8 | frame[t.checksum_offset + 1]);
  const uint16_t csum =
      __builtin_bswap16(transport_checksum_field(uint64_t(uint16_t(~old)) + seq_sum(seq) + seq_sum(ack), kProtoTcp));
  std::memcpy(frame + t.checksum_offset, &csum, 2);
}

// Whether a received segment is the `step` this test expects: the step's flags, and the
// acknowledgement the other side's ISN gives. False: the DUT changed it, or it is not this
// test's. The ISN a check needs comes from the segment itself: the Initiator's from its tuple
// (read swapped), the Responder's from the Initiator's (its sequence number less what it has
// sent since: 1 after the SYN, 2 after the FIN).
inline bool expected_segment(TcpStep step, const TcpKey& key, const TcpView& seg) {
  if (seg.flags() != tcp_flags_of(step)) return false;
  const auto initiator = [&] {
    return initiator_isn(key, seg.dst(), seg.src(), seg.addr_len, seg.dst_port(), seg.src_port());
  };
  switch (step) {
    case TcpStep::kSyn: return seg.ack() == 0;
    case TcpStep::kSynAck: return seg.ack() == initiator() + 1;
    case TcpStep::kAck: case TcpStep::kFin: case TcpStep::kRst:
      return seg.ack() == responder_isn(key, seg.seq() - 1) + 1;
    // The window ACK's own sequence number follows from the Initiator's ISN as the Responder
    // received it, which a DUT that rewrites sequence numbers (PF's modulate state) changed: the
    // Initiator checks what it can know without a table, the acknowledgement of its SYN.
    case TcpStep::kWindow: return seg.ack() == initiator() + 1;
    case TcpStep::kFinAck: return seg.ack() == initiator() + 2;
    case TcpStep::kLastAck: return seg.ack() == responder_isn(key, seg.seq() - 2) + 2;
    case TcpStep::kData: return true;  // its numbers continue a byte stream the receiver does not track
  }
  return false;
}

// The reply to an expected segment of `step` (one that is answered: SYN, SYN-ACK, ACK, FIN,
// FIN-ACK). To a SYN the Responder's SYN-ACK from its ISN; to the others the next segment of
// the exchange, from the sequence number the answered segment acknowledged, acknowledging it
// (a SYN, SYN-ACK, FIN or FIN-ACK takes one sequence number; the handshake's ACK none). `tag_seq` and `timestamp`: the answered frame's
// tag, so that a reply stream has its cause's sequence numbers and the first segment's send time.
inline TcpSegment answer(TcpStep step, const TcpKey& key, const TcpView& seg, uint32_t tag_seq, uint64_t timestamp) {
  const uint32_t seq = step == TcpStep::kSyn ? responder_isn(key, seg.seq()) : seg.ack();
  return reply_to(seg, seq, seg.seq() + (step == TcpStep::kAck ? 0 : 1), tag_seq, timestamp);
}

}  // namespace xlp
