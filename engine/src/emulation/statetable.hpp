// The Responder's state table (RFC 9693 §4.4): the four-tuples of the frames it received in
// phase 1, as they arrived (after the DUT's translation), and, in phase 2, frames built from
// them with source and destination swapped. Over TCP (docs/tcp.md) each side has one, learned
// from the segment that completed its side of the handshake, with each connection's sequence
// numbers: phase 2's data segments continue the connection's byte stream. Pure: no DPDK.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/checksum.hpp"
#include "emulation/fields.hpp"
#include "core/frame.hpp"

namespace xlp {

class StateTable {
 public:
  // The whole table is reserved up front (up to kReserved entries): address space, whose pages
  // the receiver touches as it learns, so that it never stops to move a grown table (tens of
  // milliseconds for millions of entries, while frames keep arriving).
  StateTable(int ip_version, uint64_t capacity, bool tcp = false)
      : version_(ip_version), capacity_(capacity), tcp_(tcp) {
    tuples_.reserve(size_t(std::min<uint64_t>(capacity, kReserved)) * tuple_size());
    if (tcp) streams_.reserve(size_t(std::min<uint64_t>(capacity, kReserved)));
  }
  static constexpr uint64_t kReserved = uint64_t(1) << 26;
  // How far a connection's data may run ahead of the acknowledgement its peer last sent (the
  // handshake's), so that every segment stays inside the 1 GiB window both sides announced
  // (window 65535 scaled by 2^14) and conntrack's limit for acknowledgements that stay behind:
  // a connection that sent this much starts its byte stream over (a retransmission, in window).
  static constexpr uint32_t kMaxAhead = (uint32_t(1) << 30) - (uint32_t(1) << 16);
  bool tcp() const { return tcp_; }
  int ip_version() const { return version_; }
  uint64_t capacity() const { return capacity_; }
  uint64_t size() const { return tuples_.size() / tuple_size(); }
  bool full() const { return size() >= capacity_; }

  // Stores the four-tuple of a received test frame whose IP header starts at `l3`, and its test
  // tag's CE word (`ce`: the CE that sent it, which phase 2's frames from this entry carry, so
  // that their receiver can check they reach that CE); frames of another IP version than the
  // table's are not stored (returns false).
  // A TCP table learns from a segment that completed the handshake on the learning side: the
  // SYN-ACK at the Initiator, the ACK at the Responder. Its acknowledgement is the side's own
  // next sequence number, its sequence number (+ 1 for a SYN) the peer's. `tunnel`: the IPv6
  // header of the tunnel the segment came in (a DS-Lite B4's softwire), whose destination, the
  // emulated B4, is stored too: its phase-2 segments leave from there (write).
  bool learn(const uint8_t* l3, const uint8_t* tunnel = nullptr, uint16_t ce = 0) {
    if (full() || (l3[0] >> 4) != version_) return false;
    const size_t alen = addr_len(), l4 = version_ == 4 ? size_t(l3[0] & 0x0f) * 4 : 40;
    const uint8_t* src = l3 + (version_ == 4 ? 12 : 8);
    tuples_.insert(tuples_.end(), src, src + 2 * alen);  // source, destination
    tuples_.insert(tuples_.end(), l3 + l4, l3 + l4 + 4);  // source port, destination port
    tuples_.insert(tuples_.end(), {uint8_t(ce >> 8), uint8_t(ce)});
    if (tcp_) {
      const uint8_t* t = l3 + l4;
      const uint32_t seq = uint32_t(t[4]) << 24 | uint32_t(t[5]) << 16 | uint32_t(t[6]) << 8 | t[7];
      const uint32_t ack = uint32_t(t[8]) << 24 | uint32_t(t[9]) << 16 | uint32_t(t[10]) << 8 | t[11];
      streams_.push_back({ack, ack, seq + ((t[13] & kTcpSyn) ? 1u : 0u)});
      if (tunnel) {
        if (tunnels_.empty()) tunnels_.reserve(size_t(std::min<uint64_t>(capacity_, kReserved)));
        std::array<uint8_t, 16> b4;
        std::memcpy(b4.data(), tunnel + kIpv6Dst, 16);
        tunnels_.push_back(b4);
      }
    }
    return true;
  }
  // Whether every entry has its tunnel's address (learned from tunnelled segments only).
  bool tunnelled() const { return !tunnels_.empty() && tunnels_.size() == size(); }

  // Adds `other`'s tuples while there is room (the tables the receive queues filled apart,
  // merged after the trial).
  void append(const StateTable& other) {
    const uint64_t n = std::min(other.size(), capacity_ - std::min(capacity_, size()));
    tuples_.insert(tuples_.end(), other.tuples_.begin(), other.tuples_.begin() + ptrdiff_t(n * tuple_size()));
    if (tcp_) streams_.insert(streams_.end(), other.streams_.begin(), other.streams_.begin() + ptrdiff_t(n));
    if (!other.tunnels_.empty())
      tunnels_.insert(tunnels_.end(), other.tunnels_.begin(),
                      other.tunnels_.begin() + ptrdiff_t(std::min<uint64_t>(n, other.tunnels_.size())));
  }

  // Prepares phase 2 for frames of template `t`: per entry, what writing its swapped tuple and
  // its CE word into the template changes in the UDP checksum sum and in the IPv4 header sum
  // (RFC 1624).
  void prepare(const FrameTemplate& t) {
    // A TCP segment's payload: what each data segment adds to the sender's sequence number.
    const uint8_t* l4h = t.bytes.data() + t.l4_offset;
    payload_ = tcp_ ? uint32_t(t.size() - t.l4_offset - (l4h[12] >> 4) * 4u) : 0;
    if (prepared_for_ == t.bytes && deltas_.size() == size()) return;  // e.g. the next trial of a search
    prepared_for_ = t.bytes;
    deltas_.resize(size_t(size()));
    const uint8_t* ip = t.bytes.data() + t.ip_offset;
    const uint8_t* tmpl_addrs = ip + (version_ == 4 ? 12 : 8);
    const uint8_t* tmpl_ports = t.bytes.data() + t.l4_offset;
    const uint64_t not_template_addrs = uint64_t(uint16_t(~fold(sum_words(tmpl_addrs, 2 * addr_len()))));
    const uint8_t* tmpl_ce = t.bytes.data() + t.tag_offset + kTagCe;
    const uint64_t not_template_ports =
        uint64_t(uint16_t(~fold(sum_words(tmpl_ports, 4) + uint64_t(tmpl_ce[0] << 8 | tmpl_ce[1]))));
    for (uint64_t i = 0; i < size(); ++i) {
      const uint8_t* tuple = entry(i);
      // Swapping source and destination does not change a one's complement sum.
      const uint64_t addrs = sum_words(tuple, 2 * addr_len()) + not_template_addrs;
      const uint64_t ports = sum_words(tuple + 2 * addr_len(), 6) + not_template_ports;  // and the CE word
      deltas_[i] = {fold(addrs + ports), fold(addrs)};
    }
  }

  // Writes entry i into a copy of the template, swapped, and returns the transport checksum's
  // sum delta; fixes the IPv4 header checksum. A TCP entry also gets the connection's next
  // sequence number (advanced by the segment's payload) and the acknowledgement of its peer's
  // handshake. prepare() must have been called for this template.
  uint64_t write(uint64_t i, uint8_t* frame, const FrameTemplate& t) {
    const uint8_t* tuple = entry(i);
    const size_t alen = addr_len();
    uint8_t* addrs = frame + t.ip_offset + (version_ == 4 ? 12 : 8);
    std::memcpy(addrs, tuple + alen, alen);         // source = the stored destination
    std::memcpy(addrs + alen, tuple, alen);         // destination = the stored source
    uint8_t* ports = frame + t.l4_offset;
    std::memcpy(ports, tuple + 2 * alen + 2, 2);    // source port = the stored destination port
    std::memcpy(ports + 2, tuple + 2 * alen, 2);
    std::memcpy(frame + t.tag_offset + kTagCe, tuple + 2 * alen + 4, 2);
    if (version_ == 4) {
      const uint16_t csum = __builtin_bswap16(uint16_t(~fold(uint64_t(t.ipv4_header_sum) + deltas_[i].ip)));
      std::memcpy(frame + t.ip_offset + 10, &csum, 2);
    }
    if (!tcp_) return deltas_[i].udp;
    if (t.ip.tunnelled() && i < tunnels_.size())  // from the B4 whose connection it is
      std::memcpy(frame + t.ip.tunnel() + kIpv6Src, tunnels_[i].data(), 16);
    TcpStream& s = streams_[i];
    if (s.next - s.first > kMaxAhead - payload_) s.next = s.first;
    const uint32_t seq_be = __builtin_bswap32(s.next), ack_be = __builtin_bswap32(s.peer);
    std::memcpy(ports + 4, &seq_be, 4);
    std::memcpy(ports + 8, &ack_be, 4);
    const uint64_t sum = uint64_t(deltas_[i].udp) + seq_sum(s.next) + seq_sum(s.peer);
    s.next += payload_;
    return sum;
  }

  // A TCP entry's sequence numbers: the first of its data, the next to send, and the
  // acknowledgement (the peer's next after the handshake).
  struct TcpStream {
    uint32_t first, next, peer;
  };
  const TcpStream& stream(uint64_t i) const { return streams_[i]; }

  const uint8_t* entry(uint64_t i) const { return tuples_.data() + i * tuple_size(); }

 private:
  size_t addr_len() const { return version_ == 4 ? 4 : 16; }
  size_t tuple_size() const { return 2 * addr_len() + 6; }  // addresses, ports, the CE word
  struct Delta {
    uint16_t udp, ip;
  };
  int version_;
  uint64_t capacity_;
  bool tcp_ = false;
  uint32_t payload_ = 0;
  std::vector<uint8_t> tuples_;  // packed: 14 bytes per IPv4 entry, 38 per IPv6 entry
  std::vector<TcpStream> streams_;  // TCP: per entry
  std::vector<std::array<uint8_t, 16>> tunnels_;  // TCP from tunnelled segments: per entry, the B4
  std::vector<Delta> deltas_;
  std::vector<uint8_t> prepared_for_;
};

// Which state-table entry each phase-2 frame uses: fixed (entry 0), increasing or decreasing
// (wrapping), or uniformly random (Lemire's 64-bit multiply-shift with rejection: no bias).
// Several TX queues share a flow in one of two ways. Interleaved (UDP): lane q of L takes every
// L-th entry of the order from the q-th (start = q, stride = L); random lanes draw from all
// entries independently. Owned (TCP, owned()): lane q selects among the entries q, q + L,
// q + 2L, ... alone (fixed: the first of them), because a TCP entry's next sequence number
// (StateTable::write) must have one writer, the lane's worker.
class EntrySelector {
 public:
  enum class Mode { kFixed, kIncreasing, kDecreasing, kRandom };
  EntrySelector(Mode mode, uint64_t entries, uint64_t seed, uint64_t start = 0, uint64_t stride = 1)
      : mode_(mode), n_(entries), rng_(seed), threshold_(entries ? (0 - entries) % entries : 0),
        step_(entries ? stride % entries : 0),
        next_(entries == 0 ? 0 : mode == Mode::kDecreasing ? entries - 1 - start % entries : start % entries) {}
  static EntrySelector owned(Mode mode, uint64_t entries, uint64_t seed, uint64_t lane, uint64_t lanes) {
    EntrySelector s(mode, entries > lane ? (entries - lane + lanes - 1) / lanes : 0, seed);
    s.first_ = lane;
    s.spacing_ = lanes;
    return s;
  }
  uint64_t entries() const { return n_; }  // how many this lane selects among (0: none to send from)
  uint64_t next() { return first_ + pick() * spacing_; }

 private:
  uint64_t pick() {
    switch (mode_) {
      case Mode::kFixed: return 0;
      case Mode::kIncreasing: {
        const uint64_t i = next_;
        next_ = next_ >= n_ - step_ ? next_ - (n_ - step_) : next_ + step_;
        return i;
      }
      case Mode::kDecreasing: {
        const uint64_t i = next_;
        next_ = next_ < step_ ? next_ + n_ - step_ : next_ - step_;
        return i;
      }
      case Mode::kRandom:
        for (;;) {
          const unsigned __int128 m = (unsigned __int128)rng_.next() * n_;
          if (uint64_t(m) >= threshold_) return uint64_t(m >> 64);
        }
    }
    return 0;
  }

  Mode mode_;
  uint64_t n_;
  Rng rng_;
  uint64_t threshold_, step_, next_;
  uint64_t first_ = 0, spacing_ = 1;  // the entry of selected index k: first_ + k * spacing_
};

}  // namespace xlp
