// The receiver's judgement of the headers a DUT wrote into a test frame (docs/protocol.md,
// "Header checks"): a stream's expectations (HeaderCheck) are derived once, before the trial,
// from the frame the DUT should deliver, built by the same layer writers as the frames the
// tester sends (build_template); per frame the receiver compares each layer's bytes under a
// mask, checks TTL and varying words against their ranges and verifies the checksums; first of
// all, the frame's Ethernet destination must be the receiving port's own MAC (PortMac), and its
// source the DUT's where rx names it. Pure: no DPDK.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/checksum.hpp"
#include "core/frame.hpp"

namespace xlp {

// What a received frame's headers were found to be, best first; a frame that fails several
// checks is counted by the first of them in this order (the most specific).
enum class Verdict : uint8_t { kGood, kBadAddress, kBadTtl, kBadTos, kBadHeader, kBadChecksum };
constexpr size_t kVerdicts = 6;
// The reply's names of the counts (docs/protocol.md), by Verdict.
constexpr std::array<const char*, kVerdicts> kVerdictNames = {"received", "bad_address", "bad_ttl",
                                                              "bad_tos", "bad_header", "bad_checksum"};

// The receiving port's own MAC address: the one Ethernet destination a test frame may arrive
// with. The tester's ports run promiscuous (ports.cpp), so a frame a DUT floods (a bridge's
// unknown unicast, a hub) or sends to a broadcast, multicast or another host's MAC arrives too;
// it is the DUT's fault (bad_address), not a received frame. A port without a MAC of its own
// (00:00:00:00:00:00: the ring PMD's, a pair wired inside the engine, where nothing floods and
// the front end addresses frames to whatever dut_mac says) takes any destination. Compared as a
// 32-bit and a 16-bit word in memory order, under a mask that is zero for such a port: the
// frame's first six bytes, in the cache line the parser read first.
class PortMac {
 public:
  explicit PortMac(const std::array<uint8_t, 6>& mac) {
    std::memcpy(&head_, mac.data(), 4);
    std::memcpy(&tail_, mac.data() + 4, 2);
    if (head_ == 0 && tail_ == 0) head_mask_ = tail_mask_ = 0;
  }
  [[gnu::always_inline]] bool is_destination_of(const uint8_t* frame) const { return is(frame); }
  // The same compare on the frame's Ethernet source (rx.src_mac: the DUT's MAC on the receiving
  // side, which its frames must come from).
  [[gnu::always_inline]] bool is_source_of(const uint8_t* frame) const { return is(frame + 6); }

 private:
  [[gnu::always_inline]] bool is(const uint8_t* mac) const {
    uint32_t head;
    uint16_t tail;
    std::memcpy(&head, mac, 4);
    std::memcpy(&tail, mac + 4, 2);
    return (((head ^ head_) & head_mask_) | uint32_t((tail ^ tail_) & tail_mask_)) == 0;
  }

  uint32_t head_ = 0, head_mask_ = ~uint32_t(0);
  uint16_t tail_ = 0, tail_mask_ = uint16_t(~0u);
};

// A header word that changes from frame to frame as the frame arrives: checked against its range.
struct RxWord {
  FieldRole field = FieldRole::kSrcPort;  // kSrcAddress, kDstAddress, kSrcPort or kDstPort
  uint32_t offset = 0;                    // byte offset in the address (0 for ports)
  uint32_t bits = 16;                     // 16: a big-endian word; 8: one byte
  uint32_t min = 0, max = 0;
};

// A tunnel header the frames arrive in (frame.hpp's Tunnel): IPv6 (RFC 2473) or IPv4 (RFC 4213,
// RFC 2003), its addresses where named.
struct RxTunnel {
  int version = 6;
  std::optional<std::array<uint8_t, 16>> src, dst;
  // Its traffic class is the inner header's TOS as `tos` says (RFC 6333 §7.1: DS-Lite and lw4o6
  // carry it over; RFC 2473 §6.4 leaves it to the entry point otherwise).
  bool carries_tos = false;
};

// What the DUT must have written into a stream's frames (the protocol's stream `rx`): a value
// left out is not checked.
struct RxSpec {
  int ip_version = 4;
  std::optional<std::array<uint8_t, 16>> src_ip, dst_ip;  // IPv4 in the first 4 bytes
  std::optional<uint16_t> src_port, dst_port;
  // The tunnel headers the frames arrive in, outermost first (at most kMaxTunnels): none, one
  // (a softwire, 6rd) or nested.
  std::vector<RxTunnel> tunnels;
  std::optional<std::pair<uint8_t, uint8_t>> ttl;  // the inner header's, an inclusive range
  std::optional<uint8_t> tos;
  // The ECN codepoints (bit e for codepoint e: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE) the inner
  // header's ECN field may arrive with, apart from `tos`, which then holds the DSCP alone; none:
  // the ECN field is `tos`'s (the whole octet compared). An ECT packet may arrive CE (RFC 3168
  // §5: a congested router marks it), so {ECT(0), CE} is a rule; all four: not checked.
  std::optional<uint8_t> ecn;
  std::optional<bool> df;  // IPv4 arrivals
  // IPv4 arrivals without `df`: the receiver counts the frames that pass with DF set and with
  // DF clear (an IPv4 packet of at most 1,260 bytes translated from IPv6: RFC 7915 §5.1 clears
  // DF, the obsoleted RFC 6145 §5.1 set it; which one a DUT follows, and whether it follows one
  // consistently, is a verdict over all of a direction's frames, the front end's).
  bool count_df = false;
  // With `tunnels`: the frames that pass counted by the innermost tunnel header's ECN field
  // against the inner one's, which its entry point (the DUT) wrote by RFC 6040 §4.1: copied
  // (normal mode) or Not-ECT (compatibility mode); both are right, the report names which.
  bool count_tunnel_ecn = false;
  // IPv6 arrivals: the flow label of the header that carries UDP or TCP (RFC 6437: a non-zero
  // one arrives as sent; RFC 7915 §5.1: a translator writes 0); none: any label.
  std::optional<uint32_t> flow_label;
  // A MAC the frames may be addressed to besides the receiving port's own: the source MAC the
  // tester sends from on that side where it is not the port's (the DUT answers to it).
  std::optional<std::array<uint8_t, 6>> dst_mac;
  // The MAC the frames must come from: the DUT's on the receiving side, where the front end
  // knows it (a frame from another MAC went through another box, or left by another interface).
  std::optional<std::array<uint8_t, 6>> src_mac;
  bool checksums = true;
  // A UDP checksum field of 0 over IPv6 taken as 0xffff (its one's complement twin) where the
  // datagram's sum verifies with it: a translator that adjusts a checksum to 0 and writes it as
  // 0, not 0xffff (RFC 768; RFC 8200 §8.1 receivers drop it; TAYGA 0.9.2 does it about once in
  // 65,536 frames). Off: such a datagram is a checksum fault.
  bool ipv6_zero_udp_checksum = false;
  std::vector<RxWord> vary;
};

// A field that another check owns (a CE's address or port: ce.hpp), left out of the compare:
// the packet's own header's or transport's (`layer`), or the innermost tunnel header's
// (`tunnel`: the CE's end of its softwire or 6rd tunnel).
struct OwnedField {
  Layer layer;
  FieldRole role;
  bool tunnel = false;
};

class HeaderCheck {
 public:
  // The expectations for frames sent as `sent` that arrive as `rx` says, `rx_frame_size`
  // bytes long (FCS included, VLAN tags not) with the tags of `rx_vlan`. Throws
  // std::invalid_argument when no such frame can be built (too short for its headers).
  HeaderCheck(const FrameSpec& sent, const RxSpec& rx, uint32_t rx_frame_size, const VlanStack& rx_vlan,
              const std::vector<OwnedField>& owned = {});

  // The verdict on a frame that arrived at the port whose MAC is `port`. `tag`: what the parser
  // found (its layers' offsets); `l4_len`: the transport header and payload's bytes; `l4_sum`:
  // their one's complement sum in the machine's byte order (sum_native), needed only when
  // checksums() is true. A frame to another MAC is bad_address whatever else it holds: the
  // first check of Verdict's order, and the outermost header.
  [[gnu::always_inline]] Verdict judge(const uint8_t* frame, const TestTag& tag, uint32_t l4_len, uint64_t l4_sum,
                                       const PortMac& port) const {
    if ((!port.is_destination_of(frame) && !(also_to_ && also_to_->is_destination_of(frame))) ||
        (from_ && !from_->is_source_of(frame)))
      return Verdict::kBadAddress;
    if (passes(frame, tag, l4_len, l4_sum)) return Verdict::kGood;
    return classify(frame, tag, l4_len, l4_sum);
  }
  bool checksums() const { return checksums_; }
  bool counts_df() const { return count_df_; }
  bool counts_tunnel_ecn() const { return count_tunnel_ecn_; }
  // With rx.count_tunnel_ecn, of a frame judged good: whether the tunnel header's ECN field is
  // the inner one's (true: RFC 6040 normal mode) or Not-ECT over an ECT or CE inner field (false:
  // compatibility mode); none otherwise (not asked; an inner Not-ECT, where the modes agree; an
  // outer CE over an ECT inner, marked on the way).
  [[gnu::always_inline]] std::optional<bool> counted_tunnel_ecn(const uint8_t* frame, const TestTag& tag) const {
    if (!count_tunnel_ecn_) return std::nullopt;
    const uint8_t outer = frame[tag.ip.tunnel() + 1] >> tunnel_ecn_shift_ & 3, inner = ecn_of(frame, tag);
    if (inner == 0 || (outer != inner && outer != 0)) return std::nullopt;
    return outer == inner;
  }
  // The DF flag of a frame judged good, when rx.count_df asks for it counted (the IPv4
  // header's flags byte: bit 0x40); none otherwise.
  [[gnu::always_inline]] std::optional<bool> counted_df(const uint8_t* frame, const TestTag& tag) const {
    if (!count_df_) return std::nullopt;
    return (frame[tag.l3_offset + df_at_] & df_mask_) != 0;
  }

  // The frame the DUT should deliver, as its layer writers built it (zero where rx leaves a
  // value out), and its fields: what the expectations were derived from (tests).
  const FrameTemplate& expected() const { return expected_; }

 private:
  // Where a layer starts in a received frame, as the parser found it: IP header `where` (0 the
  // outermost), or the transport header (kL4).
  using Where = uint8_t;
  static constexpr Where kL4 = kMaxIpHeaders;
  static uint64_t load64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  // 16 header bytes at once (SSE2, in every x86-64; GCC's vector extension elsewhere).
  using Chunk = uint64_t __attribute__((vector_size(16)));
  static Chunk load128(const uint8_t* p) {
    Chunk v;
    std::memcpy(&v, p, 16);
    return v;
  }
  // The compared header bytes, 8 at a time: `mask`ed, the word at `offset` from the start of
  // its layer (`where`) must equal `want`. One flat list for all layers, walked without a
  // branch per layer (a loop per layer of 1 to 5 words cost more than its compares).
  struct CompareWord {
    uint64_t want = 0, mask = 0;
    Where where = 0;
    uint8_t offset = 0;
  };
  static constexpr size_t kMaxCompareWords = 24;  // two tunnels 5 + 5, IPv6 5, TCP 3, rounded up
  struct Word {  // a varying word (RxWord) where it lies in the received frame
    Where where;
    uint16_t offset;  // from the layer's start
    uint8_t bits;
    uint16_t min, max;
  };

  static uint16_t start(Where w, const TestTag& tag) { return w == kL4 ? tag.l4_offset : tag.ip.at[w]; }

  // The fast path: every check at once, no attribution.
  [[gnu::always_inline]] bool passes(const uint8_t* frame, const TestTag& tag, uint32_t l4_len,
                                     uint64_t l4_sum) const {
    uint64_t diff = 0;
    if (tag.ip.outermost() == run_start_ && tag.l3_offset == run_l3_ && tag.l4_offset == run_l4_ &&
        tag.ip.count == ip_headers_) {
      // The layers where the expected frame has them (the usual case): one run of chunks, at
      // least two (an IPv4 header and a UDP header), which the compiler lays out unrolled.
      const uint8_t* p = frame + run_start_;
      Chunk run_diff = (load128(p) ^ run_want_[0]) & run_mask_[0];
      run_diff |= (load128(p + 16) ^ run_want_[1]) & run_mask_[1];
      for (uint8_t i = 2; i < run_chunks_; ++i) run_diff |= (load128(p + 16 * i) ^ run_want_[i]) & run_mask_[i];
      diff = run_diff[0] | run_diff[1];
    } else {
      if (tag.ip.count != ip_headers_) return false;
      const uint8_t* base[kL4 + 1];
      for (uint8_t i = 0; i < ip_headers_; ++i) base[i] = frame + tag.ip.at[i];
      base[kL4] = frame + tag.l4_offset;
      for (uint8_t i = 0; i < compare_words_; ++i) {
        const CompareWord& c = compare_[i];
        diff |= (load64(base[c.where] + c.offset) ^ c.want) & c.mask;
      }
    }
    if (diff) return false;
    if (l4_ == kProtoTcp && !length_matches(frame, tag, l4_len)) return false;  // UDP's: compared
    if (ttl_ && uint8_t(frame[tag.l3_offset + ttl_at_] - ttl_->first) > uint8_t(ttl_->second - ttl_->first))
      return false;
    if (ip_headers_ > 1 && !tunnels_live(frame, tag)) return false;
    if (!ecn_allowed(frame, tag)) return false;
    for (uint8_t i = 0; i < words_; ++i)
      if (!word_in_range(word_[i], frame, tag)) return false;
    return !checksums_ || checksums_verify(frame, tag, l4_len, l4_sum);
  }

  // The IP header's length field (IPv4's total length, IPv6's payload length) says how long the
  // packet is: what the frame holds from the IP header on (`l4_len` past the transport header's
  // start). Checked so, not compared: a DUT may lengthen a TCP header by an option.
  [[gnu::always_inline]] bool length_matches(const uint8_t* frame, const TestTag& tag, uint32_t l4_len) const {
    return ip_packet_length(ip_version_, frame + tag.l3_offset) == uint32_t(tag.l4_offset - tag.l3_offset) + l4_len;
  }

  // Each tunnel header's TTL or hop limit above 0 (RFC 2473 §6.3, RFC 4213 §3.3: an exit point
  // drops the packet otherwise).
  [[gnu::always_inline]] bool tunnels_live(const uint8_t* frame, const TestTag& tag) const {
    for (uint8_t i = 0; i + 1 < ip_headers_; ++i)
      if (frame[tag.ip.at[i] + tunnel_ttl_at_[i]] == 0) return false;
    return true;
  }

  // Each tunnel header's own checksum, where its kind has one.
  bool tunnel_checksums_verify(const uint8_t* frame, const TestTag& tag) const {
    for (uint8_t i = 0; checksummed_tunnels_ >> i; ++i)
      if ((checksummed_tunnels_ >> i & 1) && !ip_header_checksum_ok(tunnel_versions_[i], frame + tag.ip.at[i]))
        return false;
    return true;
  }

  // The ECN field of the inner IP header among the codepoints allowed (ecn_set_: more than one
  // but not all, so not compared with the rest).
  [[gnu::always_inline]] bool ecn_allowed(const uint8_t* frame, const TestTag& tag) const {
    return !ecn_set_ || (ecn_set_ >> ecn_of(frame, tag)) & 1;
  }
  // The inner IP header's ECN field: the TOS octet's low bits, the traffic class's.
  [[gnu::always_inline]] uint8_t ecn_of(const uint8_t* frame, const TestTag& tag) const {
    return ip_ecn(ip_version_, frame + tag.l3_offset);
  }

  [[gnu::always_inline]] static bool word_in_range(const Word& w, const uint8_t* frame, const TestTag& tag) {
    const uint8_t* p = frame + start(w.where, tag) + w.offset;
    const uint16_t v = w.bits == 8 ? p[0] : uint16_t(p[0] << 8 | p[1]);
    return uint16_t(v - w.min) <= uint16_t(w.max - w.min);
  }

  [[gnu::always_inline]] bool checksums_verify(const uint8_t* frame, const TestTag& tag, uint32_t l4_len,
                                               uint64_t l4_sum) const {
    const uint8_t* ip = frame + tag.l3_offset;
    if (!ip_header_checksum_ok(ip_version_, ip)) return false;
    if (checksummed_tunnels_ && !tunnel_checksums_verify(frame, tag)) return false;
    const uint8_t* l4 = frame + tag.l4_offset;
    // A UDP datagram without a checksum: allowed where its IP header's kind allows it (IPv4,
    // RFC 768; not IPv6, RFC 8200 §8.1), or as RxSpec::ipv6_zero_udp_checksum says (then its
    // sum below must verify).
    if (l4_ == kProtoUdp && l4[6] == 0 && l4[7] == 0 && (udp_checksum_optional_ || !ipv6_zero_udp_checksum_))
      return udp_checksum_optional_;
    return sums_to_ones(l4_sum + (pseudo_sum_ ? *pseudo_sum_ : pseudo_sum(ip, l4_len)));
  }

  // The pseudo header's sum: the addresses, then protocol and length, in the machine's order.
  [[gnu::always_inline]] uint64_t pseudo_sum(const uint8_t* ip, uint32_t l4_len) const {
    const uint8_t pseudo[4] = {0, l4_, uint8_t(l4_len >> 8), uint8_t(l4_len)};
    uint32_t rest;
    std::memcpy(&rest, pseudo, 4);
    return sum_native(ip + addresses_at_, addresses_size_, rest);
  }

  // The slow path, for a frame that failed: which check failed first (Verdict's order).
  Verdict classify(const uint8_t* frame, const TestTag& tag, uint32_t l4_len, uint64_t l4_sum) const;

  FrameTemplate expected_;
  std::array<CompareWord, kMaxCompareWords> compare_{};
  uint8_t compare_words_ = 0;
  // The same words as one run of 16-byte chunks from the expected frame's first IP header, for
  // a frame whose layers lie where the expected frame's do (no encapsulation-limit option in
  // between). A frame holds its test tag (18 bytes) past its last header: the last chunk's
  // bytes beyond the last compared byte (at most 15) are in the frame.
  static constexpr size_t kMaxChunks = kMaxCompareWords / 2;
  uint16_t run_start_ = 0, run_l3_ = 0, run_l4_ = 0;
  std::array<Chunk, kMaxChunks> run_want_{}, run_mask_{};
  uint8_t run_chunks_ = 2;
  bool checksums_ = true, ipv6_zero_udp_checksum_ = false, count_df_ = false, count_tunnel_ecn_ = false;
  uint8_t ip_headers_ = 1;  // the IP headers the frames arrive with: the tunnels' and the packet's
  std::array<uint8_t, kMaxTunnels> tunnel_versions_{};  // each tunnel header's IP version
  uint8_t checksummed_tunnels_ = 0;  // bit i: tunnel header i has a checksum of its own (verified)
  // The packet's header: whether its kind lets UDP go without a checksum, where its addresses
  // (the pseudo header's) lie, and its DF flag (the byte and bit its writer marked kDf).
  bool udp_checksum_optional_ = false;
  uint8_t addresses_at_ = 0, addresses_size_ = 0, df_at_ = 0, df_mask_ = 0;
  // Where each tunnel header's TTL or hop limit lies, and the innermost one's ECN field's bits in
  // the byte after the first: as their writer marked them.
  std::array<uint8_t, kMaxTunnels> tunnel_ttl_at_{};
  uint8_t tunnel_ecn_shift_ = 0;
  int ip_version_ = 4;
  uint8_t l4_ = kProtoUdp;
  std::optional<std::pair<uint8_t, uint8_t>> ttl_;  // a range of TTLs (one value is compared)
  std::optional<PortMac> also_to_;  // rx.dst_mac: a destination besides the port's own
  std::optional<PortMac> from_;     // rx.src_mac: the one source
  uint16_t ttl_at_ = 0;  // from the IP header's start
  uint8_t ecn_set_ = 0;  // rx.ecn where it is a set of codepoints, not one (ecn_allowed)
  // UDP to compared addresses: the pseudo header's sum, the same for every frame.
  std::optional<uint64_t> pseudo_sum_;
  static constexpr size_t kMaxWords = 16;
  std::array<Word, kMaxWords> word_{};
  uint8_t words_ = 0;
  // The compared fields, layer-relative, for classify.
  struct Compared {
    Where where;
    FieldRole role;
    uint16_t offset;
    uint8_t size, first_mask, last_mask;
  };
  std::vector<Compared> compared_;
};

}  // namespace xlp
